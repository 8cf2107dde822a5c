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
# The tip classifier: a piece's tip taken for a smaller piece stacked on it (companion/vision/tips.py).
TIP_WEIGHTS = MODELS_DIR / "tips.pt"
# The dice face classifier: a d6's pips or a d8's number from its top face (companion/vision/dice.py).
DICE_WEIGHTS = MODELS_DIR / "dice.pt"
# The board model: a whole board's outline in one look (companion/vision/board_finder.py).
BOARD_WEIGHTS = MODELS_DIR / "boards.pt"
BOARD_EXPORTED = MODELS_DIR / "boards_openvino_model"
DETECTOR_IMGSZ = 416
# Where pieces are small (a whole board in view) the detector looks again with this input size:
# it was trained at 416, but finds small pieces far better with 1.5 times the pixels.
DETECTOR_CLOSE_IMGSZ = 640


def detector_for_inference() -> Path:
    """The float OpenVINO copy when it exists, else the PyTorch weights.

    The INT8 copy (`DETECTOR_INT8`, session 31) stays shipped for `--model`, but is not the default:
    end to end it reads fewer of the games' moves right (the demo, Zamboni Wars' video), and where
    OpenVINO runs the float copy in bfloat16 it saves little time (docs/training.md, "The INT8 copy")."""
    if (DETECTOR_EXPORTED / "metadata.yaml").exists():
        return DETECTOR_EXPORTED
    return DETECTOR_WEIGHTS


def board_model_for_inference() -> Path | None:
    """The exported board model when it exists, else its PyTorch weights, else None."""
    if (BOARD_EXPORTED / "metadata.yaml").exists():
        return BOARD_EXPORTED
    return BOARD_WEIGHTS if BOARD_WEIGHTS.exists() else None
