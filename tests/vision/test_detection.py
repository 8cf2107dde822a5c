"""Our Detection type and the one-detection-per-object rule (companion/vision/detection.py)."""

from __future__ import annotations

import pytest

from companion.pieces import Pose, Size
from companion.vision.detection import ESTIMATED_END, Detection, box_iou, with_cut_end_estimated, without_duplicates


def _pyramid(box, confidence, size="L"):
    return Detection(kind="pyramid", box=box, confidence=confidence, class_name=f"{size}-upright",
                     size=Size.parse(size), pose=Pose.UPRIGHT)


def test_box_iou():
    assert box_iou((0, 0, 10, 10), (0, 0, 10, 10)) == 1.0
    assert box_iou((0, 0, 10, 10), (5, 0, 15, 10)) == pytest.approx(50 / 150)
    assert box_iou((0, 0, 10, 10), (20, 20, 30, 30)) == 0.0
    assert box_iou((0, 0, 0, 0), (0, 0, 0, 0)) == 0.0


def test_one_piece_seen_as_two_sizes_is_kept_once_with_the_surer_class():
    large = _pyramid((100, 100, 140, 160), 0.7, "L")
    medium = _pyramid((101, 102, 140, 161), 0.5, "M")
    assert without_duplicates([medium, large], 0.8) == [large]
    pawn = Detection(kind="pawn", box=(100, 101, 139, 160), confidence=0.9, class_name="pawn")
    assert without_duplicates([large, pawn], 0.8) == [pawn]  # across kinds too


def test_pieces_stacked_in_a_tower_are_all_kept():
    # A medium standing on a large: its box covers the large's top and rises above it.
    large = _pyramid((100, 100, 140, 160), 0.9, "L")
    medium_on_top = _pyramid((106, 70, 134, 120), 0.8, "M")
    small_on_top = _pyramid((111, 50, 129, 85), 0.6, "S")
    kept = without_duplicates([small_on_top, large, medium_on_top], 0.8)
    assert kept == [large, medium_on_top, small_on_top]


def test_a_detection_with_a_bad_box_is_refused_where_it_is_made():
    with pytest.raises(ValueError, match="out of order"):
        _pyramid((10, 10, 5, 20), 0.5)
    for bad in (1.2, -0.1):
        with pytest.raises(ValueError, match="size_confidence"):
            Detection(kind="pyramid", box=(0, 0, 5, 5), confidence=0.5, class_name="L-upright", size=Size.LARGE,
                      size_confidence=bad)
    with pytest.raises(ValueError, match="size_confidence"):
        Detection(kind="pyramid", box=(0, 0, 5, 5), confidence=0.5, class_name="pyramid", size_confidence=0.9)


def _lying(box, apex=None, contact=None, seen=(0.9, 0.9)):
    return Detection(kind="pyramid", box=box, confidence=0.8, class_name="L-lying", size=Size.LARGE,
                     pose=Pose.LYING, apex=apex, contact=contact, keypoint_confidence=seen)


def test_a_lying_piece_cut_by_the_pictures_edge_points_towards_it():
    # 640 x 480 picture; the apex is beyond the left edge, the contact seen at the box's right end.
    cut_left = _lying((0.0, 200.0, 60.0, 230.0), contact=(58.0, 215.0), seen=(0.05, 0.9))
    estimated = with_cut_end_estimated(cut_left, 640, 480)
    assert estimated.apex == (0.0, 215.0) and estimated.contact == cut_left.contact
    assert estimated.keypoint_confidence == (ESTIMATED_END, 0.9)  # marked as not seen by the model
    # The contact beyond the bottom-right corner, the apex seen up and to the left.
    cut_corner = _lying((600.0, 440.0, 640.0, 480.0), apex=(602.0, 442.0), seen=(0.9, 0.1))
    assert with_cut_end_estimated(cut_corner, 640, 480).contact == (640.0, 480.0)
    # An end the model places with doubt (scored 0.3-0.5) at a piece the edge cuts is its guess: replaced.
    doubted = _lying((0.0, 200.0, 60.0, 230.0), apex=(59.0, 201.0), contact=(58.0, 215.0), seen=(0.4, 0.9))
    assert with_cut_end_estimated(doubted, 640, 480).apex == (0.0, 215.0)


def test_a_missing_end_is_not_estimated_inside_the_picture_or_next_to_the_seen_one():
    inside = _lying((100.0, 200.0, 160.0, 230.0), contact=(158.0, 215.0), seen=(0.05, 0.9))
    assert with_cut_end_estimated(inside, 640, 480) == inside  # covered, not cut: no direction to give
    # The seen end at the edge itself: the other end is more likely covered than beyond the edge.
    at_edge = _lying((0.0, 200.0, 60.0, 230.0), contact=(3.0, 215.0), seen=(0.05, 0.9))
    assert with_cut_end_estimated(at_edge, 640, 480) == at_edge
    both = _lying((0.0, 200.0, 60.0, 230.0), apex=(1.0, 214.0), contact=(58.0, 215.0))
    assert with_cut_end_estimated(both, 640, 480) == both
    upright = Detection(kind="pyramid", box=(0.0, 200.0, 30.0, 250.0), confidence=0.8, class_name="L-upright",
                        size=Size.LARGE, pose=Pose.UPRIGHT, contact=(15.0, 248.0))
    assert with_cut_end_estimated(upright, 640, 480) == upright
