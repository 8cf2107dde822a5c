"""Merging the detector's two looks (the frame and its mirror image) into one list."""

from __future__ import annotations

import pytest

from companion.pieces import Pose, Size
from companion.vision.detection import Detection
from companion.vision.mirrored import merge_looks, mirrored


def piece(box, confidence, class_name="M-upright", apex=None, contact=None, visibility=(0.9, 0.9)):
    size, pose = class_name.split("-")
    return Detection(kind="pyramid", box=box, confidence=confidence, class_name=class_name,
                     size=Size.parse(size), pose=Pose(pose), apex=apex, contact=contact,
                     keypoint_confidence=visibility)


def merge(first, second, min_confidence=0.3):
    return merge_looks(first, second, pair_iou=0.65, lone_weight=0.5, min_confidence=min_confidence)


def test_a_detection_mirrored_twice_is_itself_and_its_box_stays_ordered():
    d = piece((10.0, 20.0, 40.0, 80.0), 0.9, apex=(25.0, 22.0), contact=(30.0, 78.0))
    once = mirrored(d, 100)
    assert once.box == (60.0, 20.0, 90.0, 80.0)
    assert once.apex == (75.0, 22.0) and once.contact == (70.0, 78.0)
    assert mirrored(once, 100) == d


def test_a_piece_seen_in_both_looks_scores_the_mean_and_a_lone_one_half_its_own():
    both_a = piece((0, 0, 10, 20), 0.4)
    both_b = piece((1, 0, 11, 20), 0.3)
    lone_weak = piece((50, 50, 60, 70), 0.5)  # 0.25 alone: dropped
    lone_sure = piece((100, 0, 110, 20), 0.9)  # 0.45 alone: kept
    out = merge([both_a, lone_weak], [both_b, lone_sure])
    assert [round(d.confidence, 3) for d in out] == [0.45, 0.35]
    paired = out[1]
    assert paired.box == pytest.approx(((0 * 0.4 + 1 * 0.3) / 0.7, 0, (10 * 0.4 + 11 * 0.3) / 0.7, 20))


def test_neighbours_in_a_stack_are_not_merged_into_one_piece():
    # Two pieces on top of each other overlap by less than the pairing threshold: each pairs with
    # its own twin in the other look.
    low, high = (0.0, 40.0, 20.0, 80.0), (0.0, 15.0, 20.0, 55.0)
    out = merge([piece(low, 0.8, "L-upright"), piece(high, 0.7, "S-upright")],
                [piece(high, 0.6, "S-upright"), piece(low, 0.9, "L-upright")])
    assert sorted((d.class_name, round(d.confidence, 2)) for d in out) == [("L-upright", 0.85), ("S-upright", 0.65)]


def test_the_class_with_more_confidence_behind_it_wins_and_keypoints_average_by_visibility():
    a = piece((0, 0, 10, 20), 0.6, "M-lying", apex=(0.0, 10.0), contact=(10.0, 10.0), visibility=(0.9, 0.3))
    b = piece((0, 0, 10, 20), 0.5, "L-lying", apex=(2.0, 10.0), contact=None, visibility=(0.3, 0.1))
    c = piece((0, 0, 10, 20), 0.7, "L-lying", apex=(2.0, 10.0), visibility=(0.3, 0.1))
    [out] = merge([a], [b])
    assert out.class_name == "M-lying"  # 0.6 against 0.5
    assert out.apex == pytest.approx((0.5, 10.0))  # weights 0.9 and 0.3
    assert out.contact == (10.0, 10.0)  # seen in one look only
    [out] = merge([a], [c])
    assert out.class_name == "L-lying" and out.size.pips == 3


def test_bad_merge_settings_are_refused():
    with pytest.raises(ValueError, match="pair_iou"):
        merge_looks([], [], pair_iou=1.5, lone_weight=0.5, min_confidence=0.3)


def test_a_detector_config_with_impossible_merge_settings_is_refused_when_made():
    from pathlib import Path

    from companion.vision.detect import DetectorConfig

    with pytest.raises(ValueError, match="mirror_pair_iou"):
        DetectorConfig(weights=Path("any.pt"), mirror_pair_iou=0.0)
    with pytest.raises(ValueError, match="confidence"):
        DetectorConfig(weights=Path("any.pt"), confidence=1.5)
