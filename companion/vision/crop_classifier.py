"""A small image classifier run on crops of pieces: the colour and size classifiers' common part.

Each crop is read as it is and, by default, mirrored left to right, and the answers' probabilities
averaged: neither a colour nor a size changes in a mirror, and the two looks' errors differ. Other
views of the same crops (the colour classifier's picture with the room's cast taken out) are
averaged in the same way.
"""

from __future__ import annotations

import threading
from pathlib import Path

import numpy as np

from companion.vision.yolo_env import import_ultralytics


class CropClassifier:
    """Loads an ultralytics classification model once; `probabilities` reads batches of crops.

    Attributes:
        names: the model's class names by index.
    """

    def __init__(self, weights: Path, imgsz: int, what: str, threads: int = 2, mirror: bool = True):
        path = Path(weights)
        if not path.exists():
            raise FileNotFoundError(f"{what} model {path} does not exist")
        self._model = import_ultralytics().YOLO(str(path), task="classify")
        self.names: dict[int, str] = dict(self._model.names)
        self._imgsz = imgsz
        self._lock = threading.Lock()
        self._threads = threads
        self._threads_set = False
        self._mirror = mirror

    def probabilities(self, crops: list[np.ndarray], *views: list[np.ndarray]) -> np.ndarray:
        """(pieces, classes): each piece's class probabilities, its crop's looks averaged. `views`:
        the same pieces' crops seen another way (each a list in the order of `crops`)."""
        if any(len(view) != len(crops) for view in views):
            raise ValueError("every view must hold one crop per piece")
        if not crops:
            return np.zeros((0, len(self.names)))
        seen = [c for view in (crops, *views) for c in view]
        looks = seen + ([np.ascontiguousarray(c[:, ::-1]) for c in seen] if self._mirror else [])
        with self._lock:
            results = self._model.predict(looks, imgsz=self._imgsz, device="cpu", verbose=False)
            if not self._threads_set:
                # Ultralytics sets torch to one thread on its first call; give it the cores back.
                import torch

                torch.set_num_threads(self._threads)
                self._threads_set = True
        found = np.array([r.probs.data.cpu().numpy() for r in results], dtype=np.float64)
        return found.reshape(-1, len(crops), found.shape[1]).mean(axis=0)
