"""A board's outline as keypoints a YOLO pose model can learn, and homographies back from them.

The board model (`models/boards.pt`, trained by `scripts/train_board_model.py`) finds the whole
board in a frame as one object whose keypoints are the board's outer corners: 4 for a chessboard's
8x8 grid and for the Martian Coasters' square, 6 for a hex board's outline (`BoardSpec.outline`).
A board looks the same after a quarter turn (a sixth for a hex), so the model cannot say which
corner is a1; the keypoints are therefore ordered by where they lie in the picture (clockwise on
screen, starting from the corner nearest a fixed direction from the board's middle), and the set-up
orientation picks among the board's symmetric readings afterwards, as for every other cue.

Pure geometry: no model and no I/O here.
"""

from __future__ import annotations

import math

import cv2
import numpy as np

from companion.vision.locate import BoardSpec
from companion.vision.locate.geometry import _apply_h

BOARD_CLASSES = ("chess", "coasters", "hex")
MAX_KEYPOINTS = 6
# Where the first keypoint lies, seen from the board's middle (degrees, image y downwards). A square
# board seen from a seat has its corners near the diagonals, so up-left is never a tie; a hex board's
# outline has a corner at each side (`BoardSpec.outline`), so its corners lie near -120, -60, 0...
# degrees from a seat, and -60 is one of them rather than between two.
_START_DEGREES = {"chess": -135.0, "coasters": -135.0, "hex": -60.0}


def outline_size(kind: str) -> int:
    return 6 if kind == "hex" else 4


def picture_order(points: np.ndarray, kind: str) -> np.ndarray:
    """Indices of `points` (a convex outline in the picture) clockwise on screen from the start corner."""
    points = np.asarray(points, float)
    middle = points.mean(axis=0)
    angles = np.degrees(np.arctan2(points[:, 1] - middle[1], points[:, 0] - middle[0]))
    start = int(np.argmin(np.abs((angles - _START_DEGREES[kind] + 180.0) % 360.0 - 180.0)))
    turned = (angles - angles[start]) % 360.0
    return np.argsort(turned, kind="stable")


def board_keypoints(spec: BoardSpec, homography: np.ndarray) -> np.ndarray:
    """The board's outer corners in the picture, in picture order (n x 2)."""
    corners = _apply_h(np.asarray(homography, float), spec.outline())
    return corners[picture_order(corners, spec.kind)]


def keypoint_label(spec: BoardSpec, homography: np.ndarray, size: tuple[int, int]) -> tuple[int, np.ndarray, np.ndarray] | None:
    """One training label: (class, box x0 y0 x1 y1 in pixels, keypoints MAX_KEYPOINTS x 3 in pixels).

    A corner outside the picture is given with visibility 0 (not learnt); a square board's last two
    keypoints are unused (0, 0, 0). None when the board's middle is out of the picture: too little
    of it shows to teach where its corners are.
    """
    if spec.kind not in BOARD_CLASSES:
        return None
    w, h = size
    corners = board_keypoints(spec, homography)
    middle = corners.mean(axis=0)
    if not (0 <= middle[0] < w and 0 <= middle[1] < h):
        return None
    inside = (corners[:, 0] >= 0) & (corners[:, 0] < w) & (corners[:, 1] >= 0) & (corners[:, 1] < h)
    keypoints = np.zeros((MAX_KEYPOINTS, 3))
    keypoints[:len(corners), :2] = corners
    keypoints[:len(corners), 2] = np.where(inside, 2.0, 0.0)
    keypoints[:len(corners)][~inside, :2] = 0.0
    x0, y0 = np.clip(corners.min(axis=0), 0, [w - 1, h - 1])
    x1, y1 = np.clip(corners.max(axis=0), 0, [w - 1, h - 1])
    return BOARD_CLASSES.index(spec.kind), np.array([x0, y0, x1, y1]), keypoints


def symmetric_homographies(spec: BoardSpec, corners: np.ndarray) -> list[np.ndarray]:
    """Every board-to-picture homography that puts the board's outline on `corners` (picture order).

    One per turn of the board onto itself (4 for square boards, 6 for hex); the set-up orientation
    chooses among them. The board's own corner order runs the other way round on screen from the
    picture order (the board plane's y points away from the camera's seat, the picture's y down), so
    the outline is matched to the corners reversed; a fit that mirrors the board is left out.
    """
    outline = spec.outline()
    n = len(outline)
    corners = np.asarray(corners, float)[:n]
    out = []
    for shift in range(n):
        for step in (-1, 1):
            order = [(shift + step * i) % n for i in range(n)]
            h, _ = cv2.findHomography(outline[order], corners, 0)
            if h is None or not _keeps_handedness(h, outline):
                continue
            residual = np.abs(_apply_h(h, outline[order]) - corners).max()
            if residual <= 0.25 * outline_side_px(corners):
                out.append(h / h[2, 2])
    return out


def _keeps_handedness(h: np.ndarray, outline: np.ndarray) -> bool:
    """True when the homography shows the board as a camera above it would (not mirrored)."""
    projected = _apply_h(h, outline)
    board_turn = _signed_area(outline)
    picture_turn = _signed_area(projected)
    # Board plane y-up to picture y-down flips the sign of the area for an unmirrored view.
    return board_turn * picture_turn < 0


def _signed_area(points: np.ndarray) -> float:
    x, y = points[:, 0], points[:, 1]
    return 0.5 * float(np.sum(x * np.roll(y, -1) - np.roll(x, -1) * y))


def outline_side_px(corners: np.ndarray) -> float:
    """The mean side of a closed outline (n x 2 pixels)."""
    return float(np.mean([math.dist(corners[i], corners[i - 1]) for i in range(len(corners))]))
