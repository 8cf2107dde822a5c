"""A webcam as a pinhole camera (OpenCV conventions: x right, y down, z forward)."""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class Camera:
    """Intrinsics and the world-to-camera transform; x_cam = R @ x_world + t (millimetres)."""

    width: int
    height: int
    fx: float
    fy: float
    cx: float
    cy: float
    rotation: tuple[tuple[float, float, float], ...]
    translation: tuple[float, float, float]

    @property
    def K(self) -> np.ndarray:
        return np.array([[self.fx, 0, self.cx], [0, self.fy, self.cy], [0, 0, 1.0]])

    @property
    def R(self) -> np.ndarray:
        return np.array(self.rotation, dtype=np.float64)

    @property
    def t(self) -> np.ndarray:
        return np.array(self.translation, dtype=np.float64)

    @property
    def position(self) -> np.ndarray:
        """The camera centre in world coordinates."""
        return -self.R.T @ self.t

    def to_camera(self, points: np.ndarray) -> np.ndarray:
        return np.asarray(points, dtype=np.float64) @ self.R.T + self.t

    def project(self, points: np.ndarray) -> np.ndarray:
        """Pixel coordinates (n, 2) of world points (n, 3); points behind the camera give NaN."""
        cam = self.to_camera(np.atleast_2d(points))
        z = np.where(cam[:, 2] > 1e-6, cam[:, 2], np.nan)
        return np.stack([self.fx * cam[:, 0] / z + self.cx, self.fy * cam[:, 1] / z + self.cy], axis=1)

    def plane_homography(self, z: float = 0.0) -> np.ndarray:
        """3x3 homography from board-plane millimetres (x, y) at height z to pixels."""
        r = self.R
        h = self.K @ np.column_stack([r[:, 0], r[:, 1], r[:, 2] * z + self.t])
        return h / h[2, 2]

    def to_json(self) -> dict:
        return {"width": self.width, "height": self.height, "fx": self.fx, "fy": self.fy, "cx": self.cx,
                "cy": self.cy, "R": [list(row) for row in self.rotation], "t": list(self.translation),
                "position_mm": [round(float(v), 3) for v in self.position]}

    @classmethod
    def from_json(cls, data: dict) -> Camera:
        return cls(int(data["width"]), int(data["height"]), float(data["fx"]), float(data["fy"]),
                   float(data["cx"]), float(data["cy"]), tuple(tuple(float(v) for v in row) for row in data["R"]),
                   tuple(float(v) for v in data["t"]))


def look_at(eye: np.ndarray, target: np.ndarray, roll_deg: float = 0.0) -> tuple[np.ndarray, np.ndarray]:
    """(R, t) of a camera at `eye` looking at `target`, image up roughly towards world +z or +y."""
    eye, target = np.asarray(eye, float), np.asarray(target, float)
    forward = target - eye
    forward /= np.linalg.norm(forward)
    # Looking straight down, "up" in the image is undefined: take world +y then.
    up = np.array([0, 0, 1.0]) if abs(forward[2]) < 0.999 else np.array([0, 1.0, 0])
    right = np.cross(forward, up)
    right /= np.linalg.norm(right)
    down = np.cross(forward, right)
    r = np.stack([right, down, forward])
    roll = math.radians(roll_deg)
    c, s = math.cos(roll), math.sin(roll)
    r = np.array([[c, -s, 0], [s, c, 0], [0, 0, 1]]) @ r
    return r, -r @ eye


def webcam(rng: np.random.Generator, target: np.ndarray, width: int = 640, height: int = 480,
           distance_mm: tuple[float, float] = (300, 1000), max_tilt_deg: float = 45.0,
           min_tilt_deg: float = 0.0, fit_span_mm: float | None = None) -> Camera:
    """A random webcam: 55-80 degrees of horizontal view, `distance_mm` from `target`, tilted
    `min_tilt_deg` to `max_tilt_deg` from straight down, at any azimuth, with a little roll.

    `fit_span_mm`: instead of `distance_mm`, stand back so that something this wide around the
    target fills 70-95 % of the picture's height (or width, when narrower), as a camera set up to
    watch a whole board is."""
    hfov = math.radians(rng.uniform(55, 80))
    fx = (width / 2) / math.tan(hfov / 2)
    fy = fx * rng.uniform(0.99, 1.01)
    cx = width / 2 + rng.normal(0, width * 0.01)
    cy = height / 2 + rng.normal(0, height * 0.01)
    # Webcams on a stand sit nearer more often than not: favour the near end of the range.
    distance = distance_mm[0] + (distance_mm[1] - distance_mm[0]) * rng.random() ** 1.6
    if fit_span_mm is not None:
        narrow = min(hfov, 2 * math.atan(math.tan(hfov / 2) * height / width))
        distance = (fit_span_mm / 2) / math.tan(narrow / 2) / rng.uniform(0.7, 0.95)
    tilt = math.radians(rng.uniform(min_tilt_deg, max_tilt_deg))
    azimuth = rng.uniform(0, 2 * math.pi)
    offset = np.array([math.sin(tilt) * math.cos(azimuth), math.sin(tilt) * math.sin(azimuth), math.cos(tilt)])
    eye = np.asarray(target, float) + distance * offset
    if tilt < math.radians(1):
        # Nearly straight down: choose the image's up direction at random rather than always north.
        r, _ = look_at(eye, target)
        spin = rng.uniform(0, 2 * math.pi)
        c, s = math.cos(spin), math.sin(spin)
        r = np.array([[c, -s, 0], [s, c, 0], [0, 0, 1]]) @ r
        t = -r @ eye
    else:
        r, t = look_at(eye, target, roll_deg=rng.normal(0, 3))
    return Camera(width, height, float(fx), float(fy), float(cx), float(cy),
                  tuple(tuple(float(v) for v in row) for row in r), tuple(float(v) for v in t))
