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
    h, _ = cv2.findHomography(spec.outline(), quad)
    cv2.fillConvexPoly(frame, np.round(quad).astype(np.int32), (150, 150, 150))
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


def _corner_error(location, spec: BoardSpec, h: np.ndarray) -> float:
    truth = cv2.perspectiveTransform(spec.outline().reshape(-1, 1, 2), h).reshape(-1, 2)
    return float(np.abs(location.board_to_image(spec.outline()) - truth).max())


@pytest.mark.parametrize("kind", ["chess", "coasters"])
def test_a_plain_board_is_located_from_its_corner_markers_and_they_fix_a1(kind):
    spec = BoardSpec(kind=kind, cell_mm=40.0 if kind == "chess" else 27.0, marker_mm=50.0 if kind == "chess" else 30.0)
    # Seen at a slant, a1's corner at the top right of the picture (not where the default hint says).
    quad = np.array([(880, 200), (430, 170), (370, 540), (900, 510)], float)
    frame, h = _table_with_plain_board(spec, quad, (1, 2, 3, 4))
    locator = Locator(spec)
    location = locator.locate(frame)
    assert location.method == "corner-markers" and location.confidence == 1.0
    assert _corner_error(location, spec, h) < 2.0
    assert np.allclose(location.board_to_image(spec.outline()[:1])[0], quad[0], atol=2.0)


def test_two_markers_are_enough_and_one_is_not():
    spec = BoardSpec(kind="chess", cell_mm=40.0)
    quad = np.array([(400, 560), (900, 560), (840, 180), (460, 180)], float)
    frame, h = _table_with_plain_board(spec, quad, (1, 2, 3, 4), hidden=(2, 4))
    location = Locator(spec).locate(frame)
    assert location.method == "corner-markers" and location.confidence == 0.5
    assert _corner_error(location, spec, h) < 4.0
    frame, _ = _table_with_plain_board(spec, quad, (3,))
    with pytest.raises(BoardNotFound):
        Locator(spec).locate(frame)


def test_corner_markers_are_for_square_boards():
    with pytest.raises(ValueError, match="corner markers"):
        corner_marker_squares(BoardSpec(kind="hex"))
    squares = corner_marker_squares(BoardSpec(kind="chess", cell_mm=40.0, marker_mm=50.0))
    # Marker 1 lies outside a1's corner, its corner on the board's; marker 3 outside h8's.
    assert np.allclose(squares[1], [(-50, 0), (0, 0), (0, -50), (-50, -50)])
    assert np.allclose(squares[3], [(320, 370), (370, 370), (370, 320), (320, 320)])


def test_the_printed_sheet_marks_the_corner_of_each_marker_that_touches_the_board():
    import importlib.util
    from pathlib import Path

    path = Path(__file__).resolve().parents[2] / "calibration" / "make_targets.py"
    loaded = importlib.util.spec_from_file_location("make_targets", path)
    targets = importlib.util.module_from_spec(loaded)
    loaded.loader.exec_module(targets)
    spec = BoardSpec(kind="chess", cell_mm=40.0)
    order = ("top-left", "top-right", "bottom-right", "bottom-left")  # ArUco's corner order, as printed
    for marker, square in corner_marker_squares(spec).items():
        touching = square[order.index(targets.TOUCHING[marker])]
        assert np.allclose(touching, spec.outline()[marker - 1])
    page = targets.corner_markers_page(cv2.aruco.getPredefinedDictionary(cv2.aruco.DICT_4X4_50))
    detector = cv2.aruco.ArucoDetector(cv2.aruco.getPredefinedDictionary(cv2.aruco.DICT_4X4_50))
    _, ids, _ = detector.detectMarkers(cv2.resize(page, None, fx=0.25, fy=0.25))
    assert sorted(ids.ravel().tolist()) == [1, 2, 3, 4]
