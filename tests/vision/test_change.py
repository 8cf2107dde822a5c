"""Where the board's picture changed between two calm frames (companion/vision/change.py)."""

from __future__ import annotations

import json
from pathlib import Path

import cv2
import numpy as np
import pytest

from companion.games import get_game
from companion.sources import DrawnTable, demo_dir
from companion.pieces import Colour, Pose, Size
from companion.vision.change import changed_blobs, changed_cells, keep_still_pieces_beside_the_board
from companion.vision.locate import BoardSpec, Locator
from companion.vision.mapper import Mapper, config_for
from companion.vision.observation import Observation, SeenPiece


def _cells(before, after, location):
    mapper = Mapper("icebomb-arena", config_for("icebomb-arena", 4))
    return changed_cells(before, after, location, lambda mm: mapper.cell_of(location.spec, mm)[0])


@pytest.fixture(scope="module")
def drawn():
    """A drawn table during the bombs' placement, its location, and the state."""
    table = DrawnTable(1280, 720)
    state = get_game("icebomb-arena").new_initial_state(4)
    for text in ("P1 bid -", "P2 bid SS", "P3 bid MS", "P4 bid SS", "P3 bomb d4"):
        state = state.apply(text)
    frame = table.draw_state(state)
    return table, state, frame, Locator(BoardSpec("chess")).locate(frame)


def test_a_bead_put_down_changes_its_own_cell_only(drawn):
    table, state, before, location = drawn
    after = table.draw_state(state.apply("P4 bomb h5"))
    assert _cells(before, after, location) == {"h5"}
    assert _cells(after, before, location) == {"h5"}  # taken away again: the same cell


def test_an_unchanged_table_under_brighter_light_or_sensor_noise_changes_nothing(drawn):
    _, _, before, location = drawn
    # A webcam's auto-exposure drifts by some per cent between calm spells (the drawn markers are
    # pure colours, so a jump of 15 % clips them and shows at their rims).
    for gain, offset in ((1.1, 0), (1.08, 3), (0.85, 0), (0.9, -5)):
        assert _cells(before, cv2.convertScaleAbs(before, alpha=gain, beta=offset), location) == frozenset()
    noisy = np.clip(before.astype(np.int16) + np.random.default_rng(3).normal(0, 4, before.shape).round().astype(np.int16),
                    0, 255).astype(np.uint8)
    assert _cells(before, noisy, location) == frozenset()


def test_a_shadow_over_the_board_is_too_big_to_be_a_piece(drawn):
    _, _, before, location = drawn
    shadowed = before.copy()
    x1, y1, x2, y2 = (int(v) for v in (*location.corners.min(axis=0), *location.corners.max(axis=0)))
    shadowed[y1:y2, x1:(x1 + x2) // 2] = (shadowed[y1:y2, x1:(x1 + x2) // 2] * 0.6).astype(np.uint8)
    assert changed_blobs(before, shadowed, location) is None
    assert _cells(before, shadowed, location) is None  # the picture cannot tell, not "nothing changed"


def test_frames_of_different_shapes_are_refused(drawn):
    _, _, before, location = drawn
    with pytest.raises(ValueError, match="one shape"):
        changed_blobs(before, before[:-2], location)


def test_the_demo_beads_the_detector_misses_show_in_the_picture():
    """The bundled demo's render: a clear bead on the white square a6 (event 8) and g6 (event 12)."""
    root = demo_dir()
    index = json.loads((root / "index.json").read_text())

    def calm(event):
        return [f for f in index["frames"] if f["event"] == event and not f["hand"]][-1]["file"]

    def read(name):
        return cv2.imread(str(Path(root) / "frames" / name))

    first = read(calm(7))
    location = Locator(BoardSpec("chess")).locate(first)
    assert _cells(first, read(calm(8)), location) == {"a6"}
    assert _cells(read(calm(11)), read(calm(12)), location) == {"g6"}


def test_a_pawn_leaving_the_cell_behind_another_is_told_apart_by_the_pieces_seen():
    """The demo's event 48, P4 move LS: P4's pawn steps down from h8, pushing P1's from h7 to h4,
    both bombs on the way exploding. In the picture the pawn that stood on h7 reached over h8, so
    h8's and h7's changes join in one blob, whose ground point is on h7."""
    root = demo_dir()
    index = json.loads((root / "index.json").read_text())
    calm = {e: [f for f in index["frames"] if f["event"] == e and not f["hand"]][-1]["file"] for e in (47, 48)}
    before, after = (cv2.imread(str(Path(root) / "frames" / calm[e])) for e in (47, 48))
    location = Locator(BoardSpec("chess")).locate(before)
    mapper = Mapper("icebomb-arena", config_for("icebomb-arena", 4))

    def cells(pieces_before=(), pieces_after=()):
        return changed_cells(before, after, location, lambda mm: mapper.cell_of(location.spec, mm)[0],
                             pieces_before=pieces_before, pieces_after=pieces_after)

    centres = {c.name: c.centre for c in location.cells()}

    def pawn(cell, box_height=60.0):
        x, y = centres[cell]
        mm = location.image_to_board(np.array([[x, y]], float))[0]
        return SeenPiece("pawn", cell=cell, table_mm=(float(mm[0]), float(mm[1])), box=(x - 12, y - box_height, x + 12, y + 4))

    assert cells() == {"h4", "h5", "h6", "h7"}
    pawns_before, pawns_after = (pawn("h8"), pawn("h7")), (pawn("h5"), pawn("h4"))
    assert cells(pawns_before, pawns_after) == {"h4", "h5", "h6", "h7", "h8"}
    # A piece of the other frame standing over a piece's ground point hides it: its cell is not
    # added (a bead behind a pawn put down in front of it is still there).
    over_h8 = SeenPiece("pawn", cell="h7", table_mm=pawn("h7").table_mm, box=(0, 0, 1280, 720))
    assert cells(pawns_before, (*pawns_after, over_h8)) == {"h4", "h5", "h6", "h7"}
    # Where nothing changed a piece adds nothing (a bead the detector finds in one frame only).
    assert "a1" not in cells((pawn("a1"),), ())


def _table_with(pieces: list[tuple[tuple[int, int, int, int], tuple[int, int, int]]]) -> np.ndarray:
    frame = np.full((300, 400, 3), 90, np.uint8)
    for (x1, y1, x2, y2), colour in pieces:
        cv2.fillConvexPoly(frame, np.array([(x1, y2), (x2, y2), ((x1 + x2) // 2, y1)], np.int32), colour)
    return frame


def _plan(box, colour, size, pose, direction=None, zone="P3", cell=None) -> SeenPiece:
    return SeenPiece("pyramid", Colour(colour), Size(size), Pose(pose), direction, cell=cell, zone=zone, box=box)


def test_a_piece_beside_the_board_whose_picture_did_not_change_keeps_the_accepted_reading():
    still, taken, on_board = (200, 40, 222, 70), (140, 40, 180, 70), (50, 200, 80, 240)
    before = _table_with([(still, (40, 160, 40)), (taken, (40, 160, 40)), (on_board, (0, 0, 200))])
    after = _table_with([(still, (40, 160, 40)), (on_board, (0, 0, 200))])
    baseline = Observation("icebomb-arena", (_plan(still, "green", 1, "upright"), _plan(taken, "green", 2, "lying", "E"),
                                             _plan(on_board, "red", 3, "upright", zone=None, cell="d4")))
    # The neighbour gone, the detector reads the piece left as a medium lying; and the piece on the
    # board as another size (that is the cells' business, `changed_cells`, not this function's).
    seen = Observation("icebomb-arena", (_plan((199, 41, 223, 70), "green", 2, "lying", "N"),
                                         _plan(on_board, "red", 2, "upright", zone=None, cell="d4")))
    kept = keep_still_pieces_beside_the_board(seen, baseline, before, after)
    beside = [p for p in kept.pieces if p.zone]
    assert [(p.size, p.pose, p.direction) for p in beside] == [(Size(1), Pose.UPRIGHT, None)]
    assert [p.size for p in kept.pieces if p.cell] == [Size(2)]
    assert kept.notes and "did not change" in kept.notes[-1]
    # Moved a little, its picture changed: what is seen now stands.
    moved = _table_with([((170, 40, 192, 70), (40, 160, 40)), (on_board, (0, 0, 200))])
    seen_moved = Observation("icebomb-arena", (_plan((170, 40, 192, 70), "green", 2, "lying", "N"),))
    assert keep_still_pieces_beside_the_board(seen_moved, baseline, before, moved) == seen_moved


def test_a_still_piece_beside_the_board_the_detector_missed_is_put_back_but_one_taken_away_is_not():
    a, b = (200, 40, 222, 70), (140, 40, 180, 70)
    before = _table_with([(a, (200, 60, 60)), (b, (40, 160, 40))])
    after = _table_with([(a, (200, 60, 60))])  # b taken away
    baseline = Observation("icebomb-arena", (_plan(a, "blue", 1, "upright"), _plan(b, "green", 2, "lying", "E")))
    nothing_seen = Observation("icebomb-arena", ())
    kept = keep_still_pieces_beside_the_board(nothing_seen, baseline, before, after)
    assert [p.colour for p in kept.pieces] == [Colour("blue")]
    # Under other light every pixel changed: the picture says nothing, and nothing is carried.
    assert keep_still_pieces_beside_the_board(nothing_seen, baseline, before, cv2.convertScaleAbs(after, alpha=1.5)) == nothing_seen
    with pytest.raises(ValueError):
        keep_still_pieces_beside_the_board(nothing_seen, baseline, before, after[:100])
