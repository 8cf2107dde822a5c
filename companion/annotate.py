"""Drawing the camera picture for the page: the located grid, the detections, a status line.

Annotators compute nothing: they take (frame, location, detections) and return a new frame.
The cell outlines of a location are projected once and kept, since a locked board does not move.
"""

from __future__ import annotations

from collections.abc import Sequence

import cv2
import numpy as np

from companion.vision.detection import Detection
from companion.vision.locate import BoardLocation

GRID_BGR = (80, 220, 80)
A1_BGR = (40, 40, 230)
SURE_BGR = (0, 200, 0)
TOKEN_BGR = (220, 160, 0)
STATUS_BGR = (255, 255, 255)

_GRID_CACHE: dict[int, tuple[BoardLocation, list[np.ndarray], np.ndarray]] = {}


def _grid(location: BoardLocation) -> tuple[list[np.ndarray], np.ndarray]:
    cached = _GRID_CACHE.get(id(location))
    if cached is None or cached[0] is not location:
        cells = [np.round(np.array(c.polygon)).astype(np.int32) for c in location.cells()]
        corners = np.round(location.corners).astype(np.int32)
        if len(_GRID_CACHE) > 8:
            _GRID_CACHE.clear()
        cached = _GRID_CACHE[id(location)] = (location, cells, corners)
    return cached[1], cached[2]


def draw_board(frame: np.ndarray, location: BoardLocation | None) -> np.ndarray:
    """The cell outlines and a1's corner, drawn on `frame` in place; returns it."""
    if location is None:
        return frame
    cells, corners = _grid(location)
    cv2.polylines(frame, cells, True, GRID_BGR, 1, cv2.LINE_AA)
    cv2.polylines(frame, [corners], True, GRID_BGR, 2, cv2.LINE_AA)
    cv2.circle(frame, (int(corners[0][0]), int(corners[0][1])), 9, A1_BGR, 2, cv2.LINE_AA)
    return frame


def draw_detections(frame: np.ndarray, detections: Sequence[Detection]) -> np.ndarray:
    """Each detection's box and label (pyramids: colour, size, pose; apex arrow), in place; returns it."""
    for d in detections:
        x1, y1, x2, y2 = (int(round(v)) for v in d.box)
        bgr = SURE_BGR if d.kind == "pyramid" else TOKEN_BGR
        cv2.rectangle(frame, (x1, y1), (x2, y2), bgr, 1)
        if d.kind == "pyramid":
            label = "-".join(p for p in (d.colour.value if d.colour else "?", d.size.letter if d.size else "?",
                                         d.pose.value if d.pose else "?"))
        else:
            label = d.kind
        cv2.putText(frame, label, (x1, max(12, y1 - 4)), cv2.FONT_HERSHEY_SIMPLEX, 0.4, bgr, 1, cv2.LINE_AA)
        if d.apex is not None and d.contact is not None:
            cv2.arrowedLine(frame, tuple(int(v) for v in d.contact), tuple(int(v) for v in d.apex), (255, 0, 0), 1,
                            cv2.LINE_AA)
    return frame


def draw_status(frame: np.ndarray, text: str) -> np.ndarray:
    """A one-line status (tracker state, faults) across the top, in place; returns it."""
    cv2.rectangle(frame, (0, 0), (frame.shape[1], 22), (0, 0, 0), -1)
    cv2.putText(frame, text[:160], (6, 16), cv2.FONT_HERSHEY_SIMPLEX, 0.5, STATUS_BGR, 1, cv2.LINE_AA)
    return frame


def annotate_frame(frame: np.ndarray, location: BoardLocation | None, detections: Sequence[Detection],
                   status: str = "") -> np.ndarray:
    """A copy of `frame` with the board grid, the detections and `status` drawn on it."""
    out = frame.copy()
    draw_board(out, location)
    draw_detections(out, detections)
    if status:
        draw_status(out, status)
    return out


__all__ = ["annotate_frame", "draw_board", "draw_detections", "draw_status"]
