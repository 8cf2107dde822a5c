"""Sizes read at the board's scale (companion/vision/size_reader.py): the crop, and when a reading
replaces the detector's."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest

from companion.pieces import Pose, Size
from companion.vision.detection import Detection
from companion.vision.size_reader import (BOX_GROWTH, CROP_PX, GREY, MIN_PROBABILITY, WINDOW_MM, crop_at_board_scale,
                                          pixels_per_mm, sizes_read_on_board, with_sizes_read)


def _scaled(px_per_mm: float, origin=(0.0, 0.0)) -> np.ndarray:
    return np.array([[px_per_mm, 0, origin[0]], [0, px_per_mm, origin[1]], [0, 0, 1.0]])


def test_pixels_per_mm_is_the_plane_s_scale_and_shrinks_with_distance():
    assert pixels_per_mm(_scaled(3.0), (100.0, 50.0)) == pytest.approx(3.0)
    # A camera looking at the plane at a slant: the far side (small y in the picture) is smaller.
    tilted = np.array([[2.0, 0.0, 320.0], [0.0, 1.2, 240.0], [0.0, -0.002, 1.0]])
    near, far = pixels_per_mm(tilted, (320.0, 400.0)), pixels_per_mm(tilted, (320.0, 100.0))
    assert near > far > 0


def _piece_frame(box):
    frame = np.zeros((480, 640, 3), np.uint8)
    x1, y1, x2, y2 = box
    frame[y1:y2, x1:x2] = (0, 0, 200)
    return frame


def _extent(crop: np.ndarray) -> tuple[int, int]:
    red = (crop[..., 2] > 150) & (crop[..., 0] < 60)
    ys, xs = np.nonzero(red)
    return int(xs.max() - xs.min() + 1), int(ys.max() - ys.min() + 1)


def test_the_same_piece_fills_the_same_share_of_its_crop_at_any_distance():
    # A 20 x 30 mm piece seen at 2 and at 4 pixels per millimetre.
    near_box, far_box = (200, 100, 280, 220), (400, 300, 440, 360)
    near = crop_at_board_scale(_piece_frame(near_box), near_box, (240, 220), _scaled(4.0))
    far = crop_at_board_scale(_piece_frame(far_box), far_box, (420, 360), _scaled(2.0))
    assert near.shape == far.shape == (CROP_PX, CROP_PX, 3)
    expected = (round(20 / WINDOW_MM * CROP_PX), round(30 / WINDOW_MM * CROP_PX))
    for crop in (near, far):
        width, height = _extent(crop)
        assert abs(width - expected[0]) <= 2 and abs(height - expected[1]) <= 2


def test_what_lies_outside_the_box_is_greyed_out():
    frame = np.full((480, 640, 3), 255, np.uint8)  # a white table
    box = (300, 200, 340, 260)
    frame[200:260, 300:340] = (0, 0, 200)
    crop = crop_at_board_scale(frame, box, (320, 260), _scaled(2.0))
    assert (crop[0, 0] == GREY).all() and (crop[-1, -1] == GREY).all()
    # Only the thin ring the box is grown by (detectors' boxes are a few pixels off) keeps the table.
    k = CROP_PX / (WINDOW_MM * 2.0)
    half_w, half_h = (1 + BOX_GROWTH) * 40 * k / 2 + 1, (1 + BOX_GROWTH) * 60 * k / 2 + 1
    ys, xs = np.nonzero((crop == 255).all(axis=2))
    assert len(xs) and np.abs(xs + 0.5 - CROP_PX / 2).max() <= half_w and np.abs(ys + 0.5 - CROP_PX / 2).max() <= half_h


class _FakeClassifier:
    def __init__(self, answers):
        self.answers = answers
        self.crops = 0

    def classify(self, crops):
        self.crops += len(crops)
        return self.answers[:len(crops)]


def _pyramid(size: Size, x: float = 300.0) -> Detection:
    return Detection("pyramid", (x, 200, x + 40, 260), 0.8, f"{size.name[0]}-upright", size=size,
                     pose=Pose.UPRIGHT, contact=(x + 20, 255))


def test_a_reading_replaces_the_detector_s_size_only_when_the_classifier_is_sure():
    frame = np.zeros((480, 640, 3), np.uint8)
    pawn = Detection("pawn", (100, 100, 110, 130), 0.9, "pawn")
    detections = [_pyramid(Size.MEDIUM, 200), pawn, _pyramid(Size.MEDIUM, 400)]
    sure, unsure = (Size.LARGE, MIN_PROBABILITY + 0.01), (Size.SMALL, MIN_PROBABILITY - 0.2)
    classifier = _FakeClassifier([sure, unsure])
    out = with_sizes_read(frame, detections, _scaled(2.0), classifier)
    assert classifier.crops == 2, "only pyramids are read"
    assert [d.size for d in out] == [Size.LARGE, None, Size.MEDIUM]
    assert out[1] is pawn


def test_only_a_detector_with_a_size_classifier_reads_sizes():
    frame = np.zeros((480, 640, 3), np.uint8)
    detections = [_pyramid(Size.MEDIUM)]

    def plain_detector(image):  # a stand-in, as the tests' and saved detections are
        return detections

    assert sizes_read_on_board(plain_detector, frame, detections, _scaled(2.0)) == detections

    class Reading:
        def __call__(self, image):
            return detections

        def read_sizes(self, image, found, plane):
            return [replace(d, size=Size.SMALL) for d in found]

    assert [d.size for d in sizes_read_on_board(Reading(), frame, detections, _scaled(2.0))] == [Size.SMALL]


def test_one_piece_read_twice_with_two_sizes_is_one_piece_once_the_reading_gives_them_one():
    frame = np.zeros((480, 640, 3), np.uint8)
    # The model's suppression works class by class: a large and a medium over one pyramid both
    # come out (IoU about 0.7 here, under the 0.8 at which any two classes are one piece).
    large = replace(_pyramid(Size.LARGE, 300), confidence=0.8)
    medium = replace(_pyramid(Size.MEDIUM, 300), box=(306, 212, 340, 260), confidence=0.5)
    elsewhere = replace(_pyramid(Size.MEDIUM, 500), confidence=0.4)
    read_large = (Size.LARGE, MIN_PROBABILITY + 0.01)
    out = with_sizes_read(frame, [large, medium, elsewhere], _scaled(2.0),
                          _FakeClassifier([read_large, read_large, (Size.MEDIUM, 0.5)]))
    assert [(d.box, d.size) for d in out] == [(large.box, Size.LARGE), (elsewhere.box, Size.MEDIUM)]
    assert out[0].size_confidence == read_large[1] and out[1].size_confidence is None  # the sure reading is kept
    # Read as two sizes still, both stay; so do two of one size the reading did not change (the
    # model kept them apart itself), and two of one size in different poses.
    assert len(with_sizes_read(frame, [large, medium], _scaled(2.0),
                               _FakeClassifier([read_large, (Size.MEDIUM, 0.99)]))) == 2
    twin = replace(medium, size=Size.LARGE)
    assert len(with_sizes_read(frame, [large, twin], _scaled(2.0), _FakeClassifier([read_large, read_large]))) == 2
    lying = replace(medium, pose=Pose.LYING)
    assert len(with_sizes_read(frame, [large, lying], _scaled(2.0), _FakeClassifier([read_large, read_large]))) == 2
