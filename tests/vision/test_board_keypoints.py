"""The board model's keypoints: the outline's corners in picture order, and homographies back from them."""

from __future__ import annotations

import numpy as np
import pytest

from companion.vision.board_keypoints import (MAX_KEYPOINTS, board_keypoints, keypoint_label, picture_order,
                                              symmetric_homographies)
from companion.vision.locate import BoardSpec
from companion.vision.locate.geometry import _apply_h


def _seat_view(spec: BoardSpec, turn_degrees: float = 0.0) -> np.ndarray:
    """Board mm -> pixels of a camera at a seat: the board's middle mid-picture, its far side smaller."""
    outline = spec.outline()
    middle = outline.mean(axis=0)
    a = np.radians(turn_degrees)
    turn = np.array([[np.cos(a), -np.sin(a), 0], [np.sin(a), np.cos(a), 0], [0, 0, 1.0]])
    centre = np.array([[1, 0, -middle[0]], [0, 1, -middle[1]], [0, 0, 1.0]])
    # y flipped (the board's y points away from the seat, the picture's down), a little perspective.
    view = np.array([[1.4, 0, 640], [0, -1.1, 360], [0, 0.001, 1.0]])
    return view @ turn @ centre


@pytest.mark.parametrize("spec", [BoardSpec(kind="chess"), BoardSpec(kind="coasters"), BoardSpec(kind="hex", hex_radius=4)])
def test_every_turn_of_the_board_is_found_again_from_its_keypoints(spec):
    truth = _seat_view(spec, 17.0)
    corners = board_keypoints(spec, truth)
    readings = symmetric_homographies(spec, corners)
    assert len(readings) == len(spec.outline())  # one per turn of the board onto itself, no mirror
    truth_outline = _apply_h(truth, spec.outline())
    errors = [np.abs(_apply_h(h, spec.outline()) - truth_outline).max() for h in readings]
    assert min(errors) < 1e-3
    # Each reading puts the outline on the same corners, turned.
    for h in readings:
        assert sorted(map(tuple, np.round(_apply_h(h, spec.outline()), 3))) == sorted(map(tuple, np.round(truth_outline, 3)))


def test_a_mirrored_reading_is_not_offered():
    # Four corners fit eight homographies exactly (four turns, each also mirrored); a camera above
    # the board never sees it mirrored, so only the four turns come back.
    spec = BoardSpec(kind="chess")
    corners = board_keypoints(spec, _seat_view(spec))
    readings = symmetric_homographies(spec, corners)
    seat_jacobian = np.linalg.det(_seat_view(spec)[:2, :2])
    assert len(readings) == 4
    for h in readings:
        assert np.sign(np.linalg.det(h[:2, :2] - np.outer(h[:2, 2], h[2, :2]))) == np.sign(seat_jacobian)


def test_picture_order_starts_up_left_and_runs_clockwise_on_screen():
    square = np.array([[100, 100], [100, 300], [300, 300], [300, 100]], float)  # tl, bl, br, tr
    assert [tuple(square[i]) for i in picture_order(square, "chess")] == [(100, 100), (300, 100), (300, 300), (100, 300)]


def test_a_seat_view_keeps_its_first_keypoint_through_small_turns():
    # The order must not flip between two corners for views a few degrees apart: the model could
    # then not learn which corner comes first.
    for spec in (BoardSpec(kind="chess"), BoardSpec(kind="hex", hex_radius=3)):
        first = [tuple(np.round(board_keypoints(spec, _seat_view(spec, t))[0] - board_keypoints(spec, _seat_view(spec, 0))[0]))
                 for t in (-10, -5, 0, 5, 10)]
        spread = np.ptp(np.array(first), axis=0)
        assert spread.max() < 150, first  # the same corner, moved a little by the turn


def test_a_label_leaves_corners_out_of_the_picture_unlearnt_and_a_board_mostly_out_unlabelled():
    spec = BoardSpec(kind="chess")
    view = _seat_view(spec)
    cls, box, keypoints = keypoint_label(spec, view, (1280, 720))
    assert cls == 0 and keypoints.shape == (MAX_KEYPOINTS, 3)
    assert (keypoints[:4, 2] == 2).all() and (keypoints[4:] == 0).all()  # a square board uses four
    assert box[0] < box[2] and box[1] < box[3]
    shifted = np.array([[1, 0, 0], [0, 1, 250], [0, 0, 1.0]]) @ view  # the near corners below the picture
    _, _, keypoints = keypoint_label(spec, shifted, (1280, 720))
    assert 0 < (keypoints[:4, 2] == 0).sum() < 4
    assert (keypoints[keypoints[:, 2] == 0, :2] == 0).all()
    gone = np.array([[1, 0, 0], [0, 1, 900], [0, 0, 1.0]]) @ view
    assert keypoint_label(spec, gone, (1280, 720)) is None
    assert keypoint_label(BoardSpec(kind="table"), view, (1280, 720)) is None
