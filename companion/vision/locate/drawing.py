"""Drawing, kept apart from computing: `annotate` draws a location's cells on a frame."""

from __future__ import annotations

import cv2
import numpy as np

from companion.vision.locate.board import BoardLocation


def annotate(frame: np.ndarray, location: BoardLocation) -> np.ndarray:
    """A copy of the frame with the cells outlined, cell names written and a1's corner marked."""
    out = frame.copy() if frame.ndim == 3 else cv2.cvtColor(frame, cv2.COLOR_GRAY2BGR)
    for cell in location.cells():
        poly = np.round(np.array(cell.polygon)).astype(np.int32)
        cv2.polylines(out, [poly], True, (0, 255, 0), 1, cv2.LINE_AA)
        cx, cy = cell.centre
        cv2.putText(out, cell.name, (int(cx) - 8, int(cy) + 4), cv2.FONT_HERSHEY_SIMPLEX, 0.35, (0, 255, 255), 1,
                    cv2.LINE_AA)
    corners = np.round(location.corners).astype(np.int32)
    cv2.polylines(out, [corners], True, (255, 0, 255), 2, cv2.LINE_AA)
    cv2.circle(out, tuple(int(v) for v in corners[0]), 8, (0, 0, 255), 2, cv2.LINE_AA)
    cv2.putText(out, f"{location.spec.kind} conf {location.confidence:.2f}", (10, 24), cv2.FONT_HERSHEY_SIMPLEX, 0.7,
                (0, 0, 255), 2, cv2.LINE_AA)
    return out
