"""Where the shipped models live: the repository's top-level models/ folder.

Paths are resolved from this package, not from the current directory, so `companion recognize`
finds the detector wherever it is run from. An exported OpenVINO copy is preferred at run time
(several times faster on a CPU), the INT8 one first; the PyTorch weights are the source of truth
for training and for the model card's figures.
"""

from __future__ import annotations

import os
from pathlib import Path

MODELS_DIR = Path(os.environ.get("COMPANION_MODELS") or Path(__file__).resolve().parent.parent / "models")
DETECTOR_WEIGHTS = MODELS_DIR / "pieces.pt"
DETECTOR_EXPORTED = MODELS_DIR / "pieces_openvino_model"
# The same model quantized to 8-bit integers (scripts/export_detector.py --int8).
DETECTOR_INT8 = MODELS_DIR / "pieces_int8_openvino_model"
COLOUR_WEIGHTS = MODELS_DIR / "colours.pt"
SIZE_WEIGHTS = MODELS_DIR / "sizes.pt"
# The board model: a whole board's outline in one look (companion/vision/board_finder.py).
BOARD_WEIGHTS = MODELS_DIR / "boards.pt"
BOARD_EXPORTED = MODELS_DIR / "boards_openvino_model"
DETECTOR_IMGSZ = 416
# Where pieces are small (a whole board in view) the detector looks again with this input size:
# it was trained at 416, but finds small pieces far better with 1.5 times the pixels.
DETECTOR_CLOSE_IMGSZ = 640


def detector_for_inference() -> Path:
    """The INT8 copy when it exists, else the float copy, else the PyTorch weights.

    Session 31, on the test split (`companion eval datasets/pieces-hd --split test --model M`): the
    INT8 copy finds what the PyTorch weights find (recall / precision with colour and size right
    0.8962 / 0.9257 against 0.8965 / 0.9215) with about a quarter less time for the close look's two looks (271 -> 194 ms on an AVX2-only machine)
    (docs/training.md, "The INT8 copy")."""
    for exported in (DETECTOR_INT8, DETECTOR_EXPORTED):
        if (exported / "metadata.yaml").exists():
            return exported
    return DETECTOR_WEIGHTS


def board_model_for_inference() -> Path | None:
    """The exported board model when it exists, else its PyTorch weights, else None."""
    if (BOARD_EXPORTED / "metadata.yaml").exists():
        return BOARD_EXPORTED
    return BOARD_WEIGHTS if BOARD_WEIGHTS.exists() else None
