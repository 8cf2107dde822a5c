"""A pyramid's colour from its pixels: a small image classifier on the detection's crop.

The detector finds pieces by size and pose; colour is left to this second stage because ten
colours times six size/pose classes is more classes than a from-scratch detector learns well
on a CPU budget, while a classifier on 64x64 crops trains in minutes and can be retrained on
its own (for a new lighting, or real photos) without touching the detector.

The crop is made the same way for training (from the scene generator's truth) and at run time.
"""

from __future__ import annotations

from pathlib import Path

import cv2
import numpy as np

from companion.pieces import Colour
from companion.vision.detection import Detection
from companion.vision.crop_classifier import CropClassifier

CROP_SIZE = 64
# The training crops (scripts/make_colour_crops.py) take the true box and a tenth of it round it.
CROP_MARGIN = 0.1
# A detected piece's crop is taken a little inside its box: on the validation split's matched
# pieces (session 12, throwaway script over cached detections) colour right 0.971 with the training
# margin, 0.977 at -0.02, 0.966 at -0.08, 0.886 at +0.22; test split 0.967 -> 0.973. The detector's
# boxes are not looser than the true ones (median width ratio 1.00), so it is the neighbours in a
# tower and the table round a piece that the tighter crop leaves out.
DETECTION_CROP_MARGIN = -0.02


def crop_for_colour(frame: np.ndarray, box: tuple[float, float, float, float],
                    margin: float = CROP_MARGIN) -> np.ndarray:
    """The box (with `margin` of its size added on each side; negative: taken inside) scaled to
    CROP_SIZE x CROP_SIZE, each axis on its own, padded by edge pixels at the frame's border.

    Not a square around the box: a piece in the middle of a tower shows a wide, low band of itself,
    and a square as wide as the band took in the pieces above and below it as well. Colour does not
    need the piece's shape, so the band is stretched to fill the crop instead. With the classifier
    retrained on such crops (session 7), `companion eval datasets/pieces-hd --split test` with
    session 6's detector: colour right 95.4 -> 96.0 % of matched pieces, IceTowers' 91.3 -> 92.6 %.
    """
    x1, y1, x2, y2 = box
    width = max((x2 - x1) * (1 + 2 * margin), 4.0)
    height = max((y2 - y1) * (1 + 2 * margin), 4.0)
    cx, cy = (x1 + x2) / 2, (y1 + y2) / 2
    # An affine warp crops and scales in one step and handles crops past the frame edge.
    sx, sy = CROP_SIZE / width, CROP_SIZE / height
    matrix = np.array([[sx, 0, CROP_SIZE / 2 - cx * sx], [0, sy, CROP_SIZE / 2 - cy * sy]])
    return cv2.warpAffine(frame, matrix, (CROP_SIZE, CROP_SIZE), flags=cv2.INTER_AREA,
                          borderMode=cv2.BORDER_REPLICATE)


class ColourClassifier(CropClassifier):
    """The colour classifier; call it with (frame, detection).

    `mirror`: each crop is classified as it is and mirrored left to right, and the two answers'
    probabilities averaged. A colour does not change in a mirror, and the two looks' errors differ
    (session 11 on the 3,561 test crops of `datasets/colours-v7`: top-1 0.961 as is, 0.965 mirrored
    and averaged; throwaway script), for twice the classifier's small cost.
    """

    def __init__(self, weights: Path, threads: int = 2, mirror: bool = True):
        super().__init__(weights, CROP_SIZE, "colour", threads, mirror)
        self._colours = {i: Colour.parse(n) for i, n in self.names.items()}

    def classify(self, crops: list[np.ndarray], *views: list[np.ndarray]) -> list[tuple[Colour, float]]:
        """Each piece's colour and its probability. `views`: the same pieces' crops seen another way
        (each a list in the order of `crops`), whose probabilities are averaged in as the mirror's are."""
        return [(self._colours[int(np.argmax(p))], float(np.max(p))) for p in self.probabilities(crops, *views)]

    def __call__(self, frame: np.ndarray, detection: Detection) -> tuple[Colour | None, float]:
        return self.classify([crop_for_colour(frame, detection.box, DETECTION_CROP_MARGIN)])[0]
