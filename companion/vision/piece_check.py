"""Whether a found pyramid is a piece at all: a small classifier on its crop at the board's scale.

Most of the detector's false pyramids stand on real ones. A pyramid's tip has the shape of a
smaller pyramid, so the top of a large, or of a tree, is found again as a small or a medium
resting on it (ARENA's trees were read one or two pieces taller than they stood: docs/pipeline.md,
"Checking that a pyramid is a piece"); the stack tests cannot tell, for such a tip rises above its
host's apex by about what a real piece would, within the keypoints' noise. What does tell is the
pixels: a real piece has a base rim where it sits on the one below, a tip has none.

So once the board is located and the sizes read, each pyramid is cut out the way the size reader
cuts it (companion/vision/size_reader.py: a window of fixed millimetres at the board's scale where it
stands), its box grown by `CHECK_GROWTH` so that the rim and what lies just round it are in view,
and a two-class classifier ("none", "piece") says whether it is a piece. A pyramid it calls no piece
with at least `MIN_NONE_PROBABILITY` is dropped. The classifier is taught on the detector's own
output on renders, each detection labelled by the truth (scripts/make_check_crops.py), so it learns
the mistakes this detector makes.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import numpy as np

from companion.vision.classes import PYRAMID
from companion.vision.crop_classifier import CropClassifier
from companion.vision.detection import Detection
from companion.vision.size_reader import CROP_PX, crop_at_board_scale

CHECK_GROWTH = 0.5
NOT_A_PIECE, A_PIECE = "none", "piece"
# Chosen on the validation split of the crops' render sets (docs/pipeline.md).
MIN_NONE_PROBABILITY = 0.8


def crop_for_check(frame: np.ndarray, detection: Detection, plane_to_image: np.ndarray) -> np.ndarray | None:
    """The crop the checker reads for one detection (None where the plane gives no scale there)."""
    return crop_at_board_scale(frame, detection.box, detection.ground_point, plane_to_image, CHECK_GROWTH)


class PieceChecker(CropClassifier):
    """The two-class checker; each crop is read as it is and mirrored, the probabilities averaged.

    Attributes:
        min_none_probability: how sure it must be that a pyramid is no piece to drop it.
    """

    def __init__(self, weights: Path, threads: int = 2, mirror: bool = True,
                 min_none_probability: float = MIN_NONE_PROBABILITY):
        if not 0.0 < min_none_probability <= 1.0:
            raise ValueError(f"min_none_probability must be in (0, 1], got {min_none_probability}")
        super().__init__(weights, CROP_PX, "piece check", threads, mirror)
        self.min_none_probability = min_none_probability
        if sorted(self.names.values()) != sorted((NOT_A_PIECE, A_PIECE)):
            raise ValueError(f"{weights} is not a piece checker: its classes are {sorted(self.names.values())}, "
                             f"expected {NOT_A_PIECE!r} and {A_PIECE!r}")
        self._none = next(i for i, n in self.names.items() if n == NOT_A_PIECE)

    def none_probabilities(self, crops: list[np.ndarray]) -> np.ndarray:
        """For each crop, the probability that it shows no piece."""
        return self.probabilities(crops)[:, self._none] if crops else np.zeros(0)


def without_false_pieces(frame: np.ndarray, detections: Sequence[Detection], plane_to_image: np.ndarray,
                         checker: PieceChecker) -> list[Detection]:
    """The detections less the pyramids `checker` calls no piece with at least its
    `min_none_probability`; tokens, and pyramids the plane gives no scale for, are kept."""
    chosen, crops = [], []
    for k, d in enumerate(detections):
        if d.kind != PYRAMID:
            continue
        crop = crop_for_check(frame, d, plane_to_image)
        if crop is not None:
            chosen.append(k)
            crops.append(crop)
    dropped = {k for k, p in zip(chosen, checker.none_probabilities(crops)) if p >= checker.min_none_probability}
    return [d for k, d in enumerate(detections) if k not in dropped]
