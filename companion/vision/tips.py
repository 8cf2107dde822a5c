"""A piece's tip taken for a smaller piece stacked on it: told apart by a small classifier.

Looney pyramids of the three sizes are nearly the same shape, so the part of a large above the
height where it is as wide as a medium's base *is* a medium in outline, and a medium stacked on
that large would rest exactly there (companion/geometry.py: `stack_rise`). The detector often finds
such a phantom on top of a tree or a lone piece (on the test renders' ARENA stacks 76 of 447
stacked pieces found were phantoms; without this check the scripted ARENA game read every ship
one or two pieces high). Neither the confidence nor the geometry tells them apart; the picture does: a real stacked
piece has a base rim where it sits, its own pips just above it, and through translucent plastic the
tip below it shows. A classifier looks at a crop around each candidate (`candidates`: an upright
pyramid whose box sits on another's, as a stacked piece's does) and its bottom edge, and the
candidates it calls a tip are dropped (`without_tips`).

The crop is cut the same way for training (scripts/make_tip_crops.py, from the scene generator's
truth: real stacked pieces, and the phantoms each piece's tip would make) and at run time.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import cv2
import numpy as np

from companion.pieces import Pose
from companion.vision.classes import PYRAMID
from companion.vision.crop_classifier import CropClassifier
from companion.vision.detection import Detection

CROP_PX = 64
TIP, PIECE = "tip", "piece"
# Around the candidate's box: its width either side of its middle by this share of it, above its
# top and below its bottom by these shares of its height (below: where the rim and the piece
# under it are).
HALF_WIDTH = 0.8
ABOVE = 0.15
BELOW = 0.45
# A candidate is dropped when the classifier calls it a tip at least this surely. Chosen on the
# validation split of datasets/pieces-hd (recall / precision with colour and size right: none
# 0.8994 / 0.9234, 0.5 0.8976 / 0.9297, 0.7 0.8987 / 0.9288, 0.85 0.8994 / 0.9261); at 0.5 the
# scripted ARENA video lost a real medium (docs/pipeline.md, "A piece's tip taken for a piece on it").
MIN_TIP_PROBABILITY = 0.7


def candidates(boxes: Sequence[Sequence[float]]) -> list[int]:
    """Indices of the boxes (upright pyramids') that sit on another of them as a stacked piece or
    a tip would: no wider than it, across its middle, ending above its bottom and starting no
    lower than a little under its top."""
    out = []
    for k, (x1, y1, x2, y2) in enumerate(boxes):
        w, h = x2 - x1, y2 - y1
        if w <= 0 or h <= 0:
            continue
        for j, (hx1, hy1, hx2, hy2) in enumerate(boxes):
            hw, hh = hx2 - hx1, hy2 - hy1
            if j == k or hw <= 0 or hh <= 0 or w > 1.1 * hw:
                continue
            overlap = min(x2, hx2) - max(x1, hx1)
            if (overlap >= 0.8 * w and hx1 <= (x1 + x2) / 2 <= hx2 and y2 <= hy2 - 0.05 * hh
                    and y1 >= hy1 - 0.5 * h and y1 <= hy1 + 0.5 * hh):
                out.append(k)
                break
    return out


def tip_crop(frame: np.ndarray, box: Sequence[float]) -> np.ndarray:
    """The CROP_PX-square crop around `box` (see the module's text), the picture's edge padded grey."""
    x1, y1, x2, y2 = (float(v) for v in box)
    w, h = max(x2 - x1, 1.0), max(y2 - y1, 1.0)
    cx = (x1 + x2) / 2
    left, right = cx - HALF_WIDTH * w, cx + HALF_WIDTH * w
    top, bottom = y1 - ABOVE * h, y2 + BELOW * h
    sx, sy = CROP_PX / (right - left), CROP_PX / (bottom - top)
    matrix = np.array([[sx, 0, -left * sx], [0, sy, -top * sy]])
    interpolation = cv2.INTER_AREA if min(sx, sy) < 1 else cv2.INTER_LINEAR
    return cv2.warpAffine(frame, matrix, (CROP_PX, CROP_PX), flags=interpolation,
                          borderMode=cv2.BORDER_CONSTANT, borderValue=(114, 114, 114))


class TipClassifier(CropClassifier):
    """The tip classifier (classes 'piece', 'tip'); each crop also read mirrored left to right."""

    def __init__(self, weights: Path, threads: int = 2, mirror: bool = True):
        super().__init__(weights, CROP_PX, "tip", threads, mirror)
        if set(self.names.values()) != {PIECE, TIP}:
            raise ValueError(f"tip model {weights} has classes {sorted(self.names.values())}, not piece and tip")
        self._tip = next(i for i, n in self.names.items() if n == TIP)

    def tip_probabilities(self, crops: list[np.ndarray]) -> np.ndarray:
        return self.probabilities(crops)[:, self._tip]


def without_tips(frame: np.ndarray, detections: Sequence[Detection], classifier: TipClassifier,
                 min_probability: float = MIN_TIP_PROBABILITY) -> list[Detection]:
    """The detections less the candidates (upright pyramids sitting on another) that the
    classifier calls a tip at least `min_probability` surely."""
    upright = [k for k, d in enumerate(detections) if d.kind == PYRAMID and d.pose != Pose.LYING]
    chosen = [upright[i] for i in candidates([detections[k].box for k in upright])]
    if not chosen:
        return list(detections)
    tips = classifier.tip_probabilities([tip_crop(frame, detections[k].box) for k in chosen])
    dropped = {k for k, p in zip(chosen, tips) if p >= min_probability}
    return [d for k, d in enumerate(detections) if k not in dropped]
