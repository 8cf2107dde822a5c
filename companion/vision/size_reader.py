"""A pyramid's size read from its pixels at the board's scale: a small classifier on a crop whose
pixels stand for a fixed number of board millimetres.

The detector reads size from looks alone, and a crop resized to a fixed size (as the colour
classifier's is) throws away the one thing that tells a small from a large: how big it is. Once the
board is located its homography says how many pixels a millimetre spans where each piece stands,
so each piece is cut from a window `WINDOW_MM` wide at that scale, the pixels outside its box
greyed out (a tower's other pieces and the neighbours then do not count), and resized to
`CROP_PX`: the box's extent in the crop is its extent in millimetres, and the pixels inside say
how much of it is piece. Unlike the geometric check (companion/vision/sizing.py), which leaves
alone a piece that overlaps another, this reads stacked pieces too.

The crop is made the same way for training (scripts/make_size_crops.py, from the scene
generator's truth) and at run time.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path

import cv2
import numpy as np

from companion.pieces import Size
from companion.vision.classes import PYRAMID
from companion.vision.crop_classifier import CropClassifier
from companion.vision.detection import Detection, box_iou

CROP_PX = 96
# A large lying is 46 mm from tip to base; a tall window keeps any piece's box inside it.
WINDOW_MM = 80.0
# The box is grown by this share before the pixels outside it are greyed out: detectors' boxes
# are a few pixels off either way.
BOX_GROWTH = 0.08
GREY = 114
# The classifier's reading replaces the detector's only when it is this sure; the geometric check
# (companion/vision/sizing.py) then looks at lone pieces as before. Chosen on the validation split
# of `datasets/pieces-hd` (session 25, throwaway comparison over cached detections, recall /
# precision with colour and size right): the check alone 0.8927 / 0.9176, the reading above
# 0.6 / 0.8 / 0.9 / 0.95 then the check 0.8846 / 0.8913 / 0.8948 / 0.8955 (precision 0.9205 at 0.95).
MIN_PROBABILITY = 0.95
# The model suppresses overlapping boxes class by class (DetectorConfig.iou), so one piece can come
# out twice with two sizes (a large and a medium over the same pyramid, IoU 0.5-0.8, under the 0.8 at
# which any two classes are one piece). Once the reading gives them one size, the model's own rule
# applies again: the less sure of two pyramids of one size and pose overlapping by more than this is
# dropped. Two real pieces of one size overlapping that much (one capping the other) would have
# been suppressed by the model itself.
SAME_READING_IOU = 0.6


def pixels_per_mm(plane_to_image: np.ndarray, point_px: tuple[float, float]) -> float | None:
    """How many pixels one millimetre on the plane spans at the image point `point_px`, in the
    direction the camera does not foreshorten (the larger singular value of the homography's
    Jacobian there): what a piece's width sees. None where the homography is degenerate."""
    h = np.asarray(plane_to_image, float)
    try:
        p = np.linalg.solve(h, np.array([point_px[0], point_px[1], 1.0]))
    except np.linalg.LinAlgError:
        return None
    if abs(p[2]) < 1e-12:
        return None
    u, v, w = h @ np.array([p[0] / p[2], p[1] / p[2], 1.0])
    if abs(w) < 1e-12:
        return None
    # d(image)/d(plane) of the projective map there; the same for any scaling of `h`.
    jacobian = np.array([[h[0, 0] * w - u * h[2, 0], h[0, 1] * w - u * h[2, 1]],
                         [h[1, 0] * w - v * h[2, 0], h[1, 1] * w - v * h[2, 1]]]) / (w * w)
    scale = float(np.linalg.svd(jacobian, compute_uv=False)[0])
    return scale if math.isfinite(scale) and scale > 0 else None


def crop_at_board_scale(frame: np.ndarray, box: Sequence[float], ground_px: tuple[float, float],
                        plane_to_image: np.ndarray) -> np.ndarray | None:
    """The CROP_PX-square crop of a piece at the board's scale where it stands (see the module's
    text); None where the plane gives no scale there."""
    scale = pixels_per_mm(plane_to_image, ground_px)
    if scale is None:
        return None
    x1, y1, x2, y2 = (float(v) for v in box)
    grow_x, grow_y = BOX_GROWTH * (x2 - x1) / 2, BOX_GROWTH * (y2 - y1) / 2
    x1, y1, x2, y2 = x1 - grow_x, y1 - grow_y, x2 + grow_x, y2 + grow_y
    cx, cy = (x1 + x2) / 2, (y1 + y2) / 2
    k = CROP_PX / (WINDOW_MM * scale)
    matrix = np.array([[k, 0, CROP_PX / 2 - cx * k], [0, k, CROP_PX / 2 - cy * k]])
    crop = cv2.warpAffine(frame, matrix, (CROP_PX, CROP_PX), flags=cv2.INTER_AREA,
                          borderMode=cv2.BORDER_CONSTANT, borderValue=(GREY, GREY, GREY))
    # The box in the crop's pixels (centred in it); everything outside it is grey.
    half_w, half_h = (x2 - x1) * k / 2, (y2 - y1) * k / 2
    left, right = max(0, math.floor(CROP_PX / 2 - half_w)), max(0, math.ceil(CROP_PX / 2 + half_w))
    top, bottom = max(0, math.floor(CROP_PX / 2 - half_h)), max(0, math.ceil(CROP_PX / 2 + half_h))
    keep = np.zeros((CROP_PX, CROP_PX), bool)
    keep[top:bottom, left:right] = True
    crop[~keep] = GREY
    return crop


class SizeClassifier(CropClassifier):
    """The size classifier (classes S, M, L); each crop is read as it is and, with `mirror`, mirrored
    left to right, the probabilities averaged (a size does not change in a mirror)."""

    def __init__(self, weights: Path, threads: int = 2, mirror: bool = True):
        super().__init__(weights, CROP_PX, "size", threads, mirror)
        self._sizes = {i: Size.parse(n) for i, n in self.names.items()}

    def classify(self, crops: list[np.ndarray]) -> list[tuple[Size, float]]:
        """Each crop's size and its probability."""
        return [(self._sizes[int(np.argmax(p))], float(np.max(p))) for p in self.probabilities(crops)]


def with_sizes_read(frame: np.ndarray, detections: Sequence[Detection], plane_to_image: np.ndarray,
                    classifier: SizeClassifier, min_probability: float = MIN_PROBABILITY) -> list[Detection]:
    """The detections with each pyramid's size as the classifier reads it at the board's scale
    where it is at least `min_probability` sure (its score then kept as `size_confidence`: the
    geometric check leaves such a size alone), less the second readings of one piece that the new
    sizes reveal (SAME_READING_IOU); everything else unchanged."""
    out = list(detections)
    chosen, crops = [], []
    for k, d in enumerate(out):
        if d.kind != PYRAMID:
            continue
        crop = crop_at_board_scale(frame, d.box, d.ground_point, plane_to_image)
        if crop is not None:
            chosen.append(k)
            crops.append(crop)
    changed = set()
    for k, (size, probability) in zip(chosen, classifier.classify(crops)):
        if probability >= min_probability:
            if size != out[k].size:
                changed.add(k)
            out[k] = replace(out[k], size=size, size_confidence=probability)
    return _without_second_readings(out, changed)


def _without_second_readings(detections: list[Detection], changed: set[int]) -> list[Detection]:
    """Drops the less sure of two pyramids of one size and pose, one of whose sizes the reading
    changed, that overlap by more than SAME_READING_IOU."""
    order = sorted(range(len(detections)), key=lambda k: -detections[k].confidence)
    dropped: set[int] = set()
    for rank, k in enumerate(order):
        if k in dropped or detections[k].kind != PYRAMID:
            continue
        for j in order[rank + 1:]:
            a, b = detections[k], detections[j]
            if (j not in dropped and (k in changed or j in changed) and b.kind == PYRAMID and a.size == b.size
                    and a.pose == b.pose and box_iou(a.box, b.box) > SAME_READING_IOU):
                dropped.add(j)
    return [d for k, d in enumerate(detections) if k not in dropped]


def sizes_read_on_board(detect, frame: np.ndarray, detections: Sequence[Detection],
                        plane_to_image: np.ndarray) -> list[Detection]:
    """The detections with sizes read at the board's scale when `detect` (a detector function) can
    (`Detector.read_sizes`: it was given a size classifier), else unchanged. Stand-in detectors
    (saved detections, the tests' fakes) have no such reading."""
    read = getattr(detect, "read_sizes", None)
    return list(detections) if read is None else read(frame, detections, plane_to_image)
