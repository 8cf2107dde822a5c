"""What real webcams and rooms do to a picture, beyond what the scene renderer already varies.

The renderer (companion/synth/render.py) varies exposure, white balance by up to 12 %, a light
blur, sensor noise and JPEG quality 55-95. A hidden set of real photographs will judge the
detector, so `companion eval --webcam EFFECT` measures how the figures fall when a picture is
worse than anything the detector trained on: a tungsten or fluorescent colour cast, a dim room,
a hand-held camera's motion blur, a focus set for the far side of the table, heavy compression,
a low-resolution camera, and glare on the glossy plastic.

Each effect is a pure function of the picture and a seed (the same picture and seed give the same
result), keeps the picture's size and type, and is meant to be applied to a clean render.
"""

from __future__ import annotations

from typing import Callable

import cv2
import numpy as np

Effect = Callable[[np.ndarray, np.random.Generator], np.ndarray]


def _channel_gains(image: np.ndarray, bgr: tuple[float, float, float]) -> np.ndarray:
    return np.clip(image.astype(np.float32) * np.array(bgr, np.float32), 0, 255).astype(np.uint8)


def warm_light(image: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """A tungsten lamp and a camera that does not correct it: blue falls, red rises."""
    return _channel_gains(image, (0.72, 0.95, 1.15))


def cool_light(image: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """Fluorescent tubes: blue and green up, red down."""
    return _channel_gains(image, (1.15, 1.05, 0.78))


def dim_room(image: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """Under half the light: a darker picture with the gain's noise on it."""
    dark = image.astype(np.float32) * 0.42
    noisy = dark + rng.normal(0.0, 6.0, image.shape).astype(np.float32)
    return np.clip(noisy, 0, 255).astype(np.uint8)


def motion_blur(image: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """The camera (or the table) moved during the exposure: a streak 11 px long at some angle."""
    length = 11
    kernel = np.zeros((length, length), np.float32)
    kernel[length // 2, :] = 1.0 / length
    turn = cv2.getRotationMatrix2D((length / 2 - 0.5, length / 2 - 0.5), float(rng.uniform(0, 180)), 1.0)
    kernel = cv2.warpAffine(kernel, turn, (length, length))
    return cv2.filter2D(image, -1, kernel / max(float(kernel.sum()), 1e-6))


def out_of_focus(image: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """Focus set for somewhere else: a blur of 2.5 px (the renderer blurs by at most about 1)."""
    return cv2.GaussianBlur(image, (0, 0), 2.5)


def heavy_compression(image: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """A video stream squeezed for USB bandwidth: JPEG at quality 25 (8x8 blocks, colour smeared)."""
    ok, data = cv2.imencode(".jpg", image, [cv2.IMWRITE_JPEG_QUALITY, 25])
    if not ok:
        raise RuntimeError("JPEG encoding failed")
    return cv2.imdecode(data, cv2.IMREAD_COLOR)


def low_resolution(image: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """A 640-pixel-wide camera, its picture scaled up to the size the companion was given."""
    h, w = image.shape[:2]
    small = cv2.resize(image, (max(1, w // 2), max(1, h // 2)), interpolation=cv2.INTER_AREA)
    return cv2.resize(small, (w, h), interpolation=cv2.INTER_LINEAR)


def glare(image: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """Lamps reflected on glossy plastic and a varnished table: a few soft white patches, some over
    pieces, burning out what is under their middle."""
    h, w = image.shape[:2]
    light = np.zeros((h, w), np.float32)
    for _ in range(4):
        centre = (int(rng.uniform(0.1, 0.9) * w), int(rng.uniform(0.1, 0.9) * h))
        axes = (int(rng.uniform(0.02, 0.06) * w), int(rng.uniform(0.01, 0.04) * w))
        cv2.ellipse(light, centre, axes, float(rng.uniform(0, 180)), 0, 360, 1.0, -1)
    light = cv2.GaussianBlur(light, (0, 0), 0.01 * w)
    light = np.clip(light / max(float(light.max()), 1e-6), 0, 1)[..., None] * 230.0
    return np.clip(image.astype(np.float32) + light, 0, 255).astype(np.uint8)


EFFECTS: dict[str, Effect] = {
    "warm-light": warm_light,
    "cool-light": cool_light,
    "dim-room": dim_room,
    "motion-blur": motion_blur,
    "out-of-focus": out_of_focus,
    "heavy-compression": heavy_compression,
    "low-resolution": low_resolution,
    "glare": glare,
}


def apply_effect(name: str, image: np.ndarray, seed: int) -> np.ndarray:
    """`image` (BGR uint8) as the named effect leaves it; the same name, picture and seed give the
    same result."""
    if name not in EFFECTS:
        raise ValueError(f"unknown webcam effect {name!r} (expected one of: {', '.join(EFFECTS)})")
    if image.ndim != 3 or image.shape[2] != 3 or image.dtype != np.uint8:
        raise ValueError(f"expected a BGR uint8 picture, got shape {image.shape} and type {image.dtype}")
    return EFFECTS[name](image, np.random.default_rng(seed))
