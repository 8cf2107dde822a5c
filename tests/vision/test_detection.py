"""Our Detection type and the one-detection-per-object rule (companion/vision/detection.py)."""

from __future__ import annotations

import pytest

from companion.pieces import Pose, Size
from companion.vision.detection import Detection, box_iou, without_duplicates


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
