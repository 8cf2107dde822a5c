"""Where the shipped models live: the repository's top-level models/ folder.

Paths are resolved from this package, not from the current directory, so `companion recognize`
finds the detector wherever it is run from. The exported OpenVINO copy is preferred at run time
(several times faster on a CPU); the PyTorch weights are the source of truth for training.
"""

from __future__ import annotations

import os
from pathlib import Path

MODELS_DIR = Path(os.environ.get("COMPANION_MODELS") or Path(__file__).resolve().parent.parent / "models")
DETECTOR_WEIGHTS = MODELS_DIR / "pieces.pt"
DETECTOR_EXPORTED = MODELS_DIR / "pieces_openvino_model"
COLOUR_WEIGHTS = MODELS_DIR / "colours.pt"
DETECTOR_IMGSZ = 416


def detector_for_inference() -> Path:
    """The exported detector when it exists, else the PyTorch weights."""
    return DETECTOR_EXPORTED if (DETECTOR_EXPORTED / "metadata.yaml").exists() else DETECTOR_WEIGHTS
