"""A six-sided die's top face read by counting its pips, where the view allows.

The detector finds a d6 but not its value (the die shows any face, and a class per face would
split a rare class six ways). Once the table's plane is known, its homography gives the camera
(companion/vision/sizing.py), and with it where the die's top face is: the middle of the detected
box is about the die's middle, half a die above the table; the top face's middle is half a die
higher, and its pips lie within a circle round it. Pips are the small blobs there that differ
from the face's own tone (dark on a light die, light on a dark one). Pips on the side faces lie
outside that circle. A die too small in the picture for its pips to be told apart, or a count
that is not 1-6, stays unread (None): the referee then goes without it.

Vision code: this says what the die shows, never whether a roll was legal.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace
from collections.abc import Sequence

import cv2
import numpy as np

from companion.vision.detection import Detection
from companion.vision.sizing import PlaneCamera


@dataclass(frozen=True)
class DiceConfig:
    """Attributes:
        die_mm: a d6's side (game dice are 12-16 mm).
        pip_mm: a pip's diameter.
        top_reach: pips lie within this share of the side from the top face's middle (the corner
            pips of a 5 or 6 are 0.38 of the side away; the rest is room for the camera's estimate
            of where the face is; side faces' pips begin at 0.5).
        close_reach: when more than six pips lie within `top_reach`, they are counted again within this.
        min_pip_px: a pip narrower than this in the picture is not counted.
        contrast: a pixel belongs to a pip when it differs from the face's tone by this much (0-255).

    Chosen together (session 19, `python scripts/eval_dice.py`, true boxes) on the referee, pieces-hd
    and mix-s18 renders, where a reach of 0.53 reads fewer dice and 0.56 takes in side faces' pips: on
    582 dice of renders never used to choose them (`scripts/eval_dice.py datasets/mix-s19
    datasets/stacks-s19`) 3 px, 0.5 and 0.46 read 71 % of the dice, 86.7 % of those right (61.7 % of all),
    against 42 % and 87.0 % (36.9 %) with session 8's 4 px and 0.46, and 60.8 % of all with 3 px and 0.48.
    """

    die_mm: float = 15.0
    pip_mm: float = 3.0
    top_reach: float = 0.5
    close_reach: float = 0.46
    min_pip_px: float = 3.0
    contrast: float = 45.0


def read_dice(frame: np.ndarray, detections: Sequence[Detection], plane_to_image: np.ndarray,
              focal: float | None = None, config: DiceConfig = DiceConfig()) -> list[Detection]:
    """The detections with each d6's `value` read where the view allows (others unchanged).

    Args:
        frame: the BGR frame the detections were made in.
        plane_to_image: homography from the table's plane (mm) to the frame's pixels.
        focal: the camera's focal length in pixels when its intrinsics are known.
    """
    h, w = frame.shape[:2]
    camera = PlaneCamera.from_homography(plane_to_image, (w, h), focal)
    if camera is None or not any(d.kind == "d6" for d in detections):
        return list(detections)
    gray = cv2.cvtColor(frame, cv2.COLOR_BGR2GRAY) if frame.ndim == 3 else frame
    return [replace(d, value=read_d6(gray, d.box, camera, config)) if d.kind == "d6" else d for d in detections]


def read_d6(gray: np.ndarray, box: Sequence[float], camera: PlaneCamera,
            config: DiceConfig = DiceConfig()) -> int | None:
    """The pips on top of the d6 whose box is `box` in `gray`, or None when they cannot be counted."""
    side = config.die_mm
    for _ in range(2):
        # Dice differ in size: the one whose cube fills the box as seen, found in two rounds.
        middle = _die_middle(box, camera, side / 2)
        if middle is None:
            return None
        span = _cube_span(camera, middle, side)
        seen = math.hypot(box[2] - box[0], box[3] - box[1])
        if span <= 0 or seen <= 0:
            return None
        side *= seen / span
    top = np.array([middle[0], middle[1], side])
    # The top face's middle and, round it, how far a mm reaches in the picture (both ways).
    probe = camera.project(np.array([top, top + [1.0, 0, 0], top + [0, 1.0, 0]]))
    centre = probe[0]
    mm_px = float(np.mean([np.hypot(*(probe[k] - centre)) for k in (1, 2)]))
    pip_mm = config.pip_mm * side / config.die_mm
    if pip_mm * mm_px < config.min_pip_px:
        return None
    reach = 0.6 * side * mm_px
    x0, y0 = int(max(0, centre[0] - reach - 2)), int(max(0, centre[1] - reach - 2))
    x1, y1 = int(min(gray.shape[1], centre[0] + reach + 3)), int(min(gray.shape[0], centre[1] + reach + 3))
    if x1 - x0 < 4 or y1 - y0 < 4:
        return None
    patch = gray[y0:y1, x0:x1].astype(np.float32)
    yy, xx = np.mgrid[y0:y1, x0:x1]
    # The circle round the top's middle, squashed as the camera sees the face.
    reach_mm = _reach_on_top(xx, yy, top, camera)
    face = reach_mm <= 0.35 * side
    if face.sum() < 10:
        return None
    tone = float(np.median(patch[face]))
    pips = ((np.abs(patch - tone) > config.contrast) & (reach_mm <= 0.6 * side)).astype(np.uint8)
    count, labels, stats, _ = cv2.connectedComponentsWithStats(pips, connectivity=8)
    pip_area = math.pi * (pip_mm * mm_px / 2) ** 2
    blobs = [(stats[k, cv2.CC_STAT_AREA], float(np.median(reach_mm[labels == k]))) for k in range(1, count)
             if stats[k, cv2.CC_STAT_AREA] >= 0.3 * pip_area]
    # A pip of the top face has its middle on it (side faces' pips map beyond its edge). Where the
    # face's estimate is off, a side pip can come within reach: more than six is read again closer in.
    for reach in (config.top_reach, config.close_reach):
        # Pips a pixel apart in a small picture run together: a blob counts as the pips its area holds.
        found = sum(max(1, round(area / pip_area)) for area, at in blobs if at <= reach * side)
        if found <= 6:
            break
    return found if 1 <= found <= 6 else None


def _cube_span(camera: PlaneCamera, middle: np.ndarray, side: float) -> float:
    """The diagonal of the box a cube of `side` standing at `middle` makes in the picture (its turn
    about the vertical taken as 22.5 degrees, between square-on and corner-on)."""
    a, half = math.radians(22.5), side / 2
    turn = np.array([[math.cos(a), -math.sin(a)], [math.sin(a), math.cos(a)]])
    square = np.array([(-half, -half), (half, -half), (half, half), (-half, half)]) @ turn.T + middle[:2]
    corners = [(x, y, z) for x, y in square for z in (0.0, side)]
    px = camera.project(np.array(corners))
    return float(np.hypot(*(px.max(axis=0) - px.min(axis=0))))


def _die_middle(box: Sequence[float], camera: PlaneCamera, height_mm: float) -> np.ndarray | None:
    """Where on the table the die stands: the ray through its box's middle meets the plane of
    its own middle (half a die up) there."""
    seen = np.array([(box[0] + box[2]) / 2, (box[1] + box[3]) / 2, 1.0])
    to_image = _plane_at(camera, height_mm)
    if abs(np.linalg.det(to_image)) < 1e-9:
        return None
    x, y, w = np.linalg.solve(to_image, seen)
    return np.array([x / w, y / w])


def _reach_on_top(xx: np.ndarray, yy: np.ndarray, top: np.ndarray, camera: PlaneCamera) -> np.ndarray:
    """For each pixel, how far (mm) from the top face's middle the point of the top face's plane
    it sees lies."""
    mm = np.linalg.inv(_plane_at(camera, top[2])) @ np.stack([xx.ravel(), yy.ravel(), np.ones(xx.size)])
    mm = mm[:2] / mm[2]
    return np.hypot(mm[0] - top[0], mm[1] - top[1]).reshape(xx.shape)


def _plane_at(camera: PlaneCamera, z_mm: float) -> np.ndarray:
    """The homography from the horizontal plane `z_mm` above the table (its x, y in mm) to the picture."""
    p = camera.projection
    return np.column_stack([p[:, 0], p[:, 1], p[:, 2] * z_mm + p[:, 3]])
