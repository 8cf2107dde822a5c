"""A board that cannot be found by itself, located from ArUco markers laid at its corners."""

from __future__ import annotations

import cv2
import numpy as np
import pytest

from companion.vision.locate import BoardNotFound, BoardSpec, Locator, corner_marker_squares

FRAME = (1280, 720)
MARKER_PX = 120  # the printed marker's black square, in pixels of the texture warped onto the table


def _table_with_plain_board(spec: BoardSpec, quad: np.ndarray, markers: tuple[int, ...],
                            hidden: tuple[int, ...] = ()) -> tuple[np.ndarray, np.ndarray]:
    """(frame, board mm -> pixels): a board with nothing on it to find (one flat grey) on a
    grainy table, the corner markers `markers` laid as `corner_marker_squares` says, and a skin-
    coloured blob over each marker in `hidden`."""
    rng = np.random.default_rng(4)
    frame = rng.integers(90, 130, (FRAME[1], FRAME[0], 3)).astype(np.uint8)
    frame = cv2.GaussianBlur(frame, (0, 0), 2.0)
    h, _ = cv2.findHomography(_touched(spec), quad)
    board = cv2.perspectiveTransform(spec.outline().reshape(-1, 1, 2), h).reshape(-1, 2)
    cv2.fillConvexPoly(frame, np.round(board).astype(np.int32), (150, 150, 150))
    dictionary = cv2.aruco.getPredefinedDictionary(cv2.aruco.DICT_4X4_50)
    squares = corner_marker_squares(spec)
    margin = MARKER_PX // 6  # one module of white round the black square, as printed
    for marker in markers:
        texture = cv2.cvtColor(np.pad(cv2.aruco.generateImageMarker(dictionary, marker, MARKER_PX), margin,
                                      constant_values=255), cv2.COLOR_GRAY2BGR)
        # The black square's corners in the texture, in ArUco's order (top-left first, clockwise).
        black = np.array([(margin, margin), (margin + MARKER_PX, margin), (margin + MARKER_PX, margin + MARKER_PX),
                          (margin, margin + MARKER_PX)], float)
        onto, _ = cv2.findHomography(black, squares[marker])
        warp = h @ onto
        size = (FRAME[0], FRAME[1])
        paper = cv2.warpPerspective(texture, warp, size, flags=cv2.INTER_AREA)
        mask = cv2.warpPerspective(np.full(texture.shape[:2], 255, np.uint8), warp, size)
        frame[mask > 127] = paper[mask > 127]
    for marker in hidden:
        centre = cv2.perspectiveTransform(squares[marker].mean(axis=0).reshape(1, 1, 2), h)[0, 0]
        cv2.circle(frame, tuple(int(v) for v in centre), 70, (120, 160, 215), -1)
    return frame, h


def _touched(spec: BoardSpec) -> np.ndarray:
    """The board points the markers' black corners touch: marker 1's top-right corner (it lies
    south-west of the board), marker 2's top-left, marker 3's bottom-left, marker 4's bottom-right."""
    squares = corner_marker_squares(spec)
    return np.array([squares[1][1], squares[2][0], squares[3][3], squares[4][2]])


def _corner_error(location, spec: BoardSpec, h: np.ndarray) -> float:
    truth = cv2.perspectiveTransform(spec.outline().reshape(-1, 1, 2), h).reshape(-1, 2)
    return float(np.abs(location.board_to_image(spec.outline()) - truth).max())


@pytest.mark.parametrize("kind", ["chess", "coasters", "hex"])
def test_a_plain_board_is_located_from_its_corner_markers_and_they_fix_a1(kind):
    spec = BoardSpec(kind=kind, cell_mm=40.0 if kind == "chess" else 27.0,
                     marker_mm=50.0 if kind == "chess" else 30.0, hex_radius=3, hex_mm=20.0)
    # Seen at a slant, a1's corner at the top right of the picture (not where the default hint says).
    quad = np.array([(880, 200), (430, 170), (370, 540), (900, 510)], float)
    frame, h = _table_with_plain_board(spec, quad, (1, 2, 3, 4))
    locator = Locator(spec)
    location = locator.locate(frame)
    assert location.method == "corner-markers" and location.confidence == 1.0
    assert _corner_error(location, spec, h) < 2.0
    assert np.allclose(location.board_to_image(_touched(spec)[:1])[0], quad[0], atol=2.0)  # marker 1's corner


def test_two_markers_are_enough_and_one_is_not():
    spec = BoardSpec(kind="chess", cell_mm=40.0)
    quad = np.array([(400, 560), (900, 560), (840, 180), (460, 180)], float)
    frame, h = _table_with_plain_board(spec, quad, (1, 2, 3, 4), hidden=(2, 4))
    location = Locator(spec).locate(frame)
    assert location.method == "corner-markers" and location.confidence == 0.5
    assert _corner_error(location, spec, h) < 4.0
    frame, _ = _table_with_plain_board(spec, quad, (3,))
    with pytest.raises(BoardNotFound, match="lay corner markers 1-4"):  # the error says what would help
        Locator(spec).locate(frame)


def test_corner_markers_lie_outside_the_boards_corners():
    with pytest.raises(ValueError, match="corner markers"):
        corner_marker_squares(BoardSpec(kind="table"))
    squares = corner_marker_squares(BoardSpec(kind="chess", cell_mm=40.0, marker_mm=50.0))
    # Marker 1 lies outside a1's corner, its corner on the board's; marker 3 outside h8's.
    assert np.allclose(squares[1], [(-50, 0), (0, 0), (0, -50), (-50, -50)])
    assert np.allclose(squares[3], [(320, 370), (370, 370), (370, 320), (320, 320)])
    # On a hex board the markers touch the lowest and highest tips of the cells and cover none.
    spec = BoardSpec(kind="hex", hex_radius=3, hex_mm=20.0, marker_mm=30.0)
    tips = np.vstack([polygon for _, polygon in spec.cells()])
    lowest, highest = tips[:, 1].min(), tips[:, 1].max()
    assert np.isclose(_touched(spec)[:2, 1], lowest).all() and np.isclose(_touched(spec)[2:, 1], highest).all()
    for square in corner_marker_squares(spec).values():
        assert square[:, 1].max() <= lowest + 1e-9 or square[:, 1].min() >= highest - 1e-9


def test_the_printed_sheet_marks_the_corner_of_each_marker_that_touches_the_board():
    import importlib.util
    from pathlib import Path

    path = Path(__file__).resolve().parents[2] / "calibration" / "make_targets.py"
    loaded = importlib.util.spec_from_file_location("make_targets", path)
    targets = importlib.util.module_from_spec(loaded)
    loaded.loader.exec_module(targets)
    order = ("top-left", "top-right", "bottom-right", "bottom-left")  # ArUco's corner order, as printed
    for spec in (BoardSpec(kind="chess", cell_mm=40.0), BoardSpec(kind="hex", hex_radius=4)):
        for marker, square in corner_marker_squares(spec).items():
            assert np.allclose(square[order.index(targets.TOUCHING[marker])], _touched(spec)[marker - 1])
    assert np.allclose(_touched(BoardSpec(kind="chess", cell_mm=40.0)), BoardSpec(kind="chess", cell_mm=40.0).outline())
    page = targets.corner_markers_page(cv2.aruco.getPredefinedDictionary(cv2.aruco.DICT_4X4_50))
    detector = cv2.aruco.ArucoDetector(cv2.aruco.getPredefinedDictionary(cv2.aruco.DICT_4X4_50))
    _, ids, _ = detector.detectMarkers(cv2.resize(page, None, fx=0.25, fy=0.25))
    assert sorted(ids.ravel().tolist()) == [1, 2, 3, 4]
