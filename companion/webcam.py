"""What real webcams and rooms do to a picture, beyond what the scene renderer already varies.

The renderer (companion/synth/render.py) varies exposure, white balance by up to 12 %, a light
blur, sensor noise and JPEG quality 55-95. A hidden set of real photographs will judge the
detector, so `companion eval --webcam EFFECT` measures how the figures fall when a picture is
worse than the renders: a tungsten or fluorescent colour cast, a dim room, a hand-held camera's
motion blur, a focus set for the far side of the table, heavy compression, a low-resolution
camera, and glare on the glossy plastic.

Each effect takes a strength from 0 (the picture as it is) to 1 (the effect as evaluated); the
training crops may be made with random effects at random strengths up to 1
(`scripts/synth crops --webcam-share`), so the evaluation stays at the edge of what was trained on.
Every effect is a pure function of the picture, a seed and the strength, and keeps the picture's
size and type.
"""

from __future__ import annotations

from typing import Callable

import cv2
import numpy as np

Effect = Callable[[np.ndarray, np.random.Generator, float], np.ndarray]


def _channel_gains(image: np.ndarray, bgr: tuple[float, float, float], strength: float) -> np.ndarray:
    gains = 1.0 + strength * (np.array(bgr, np.float32) - 1.0)
    return np.clip(image.astype(np.float32) * gains, 0, 255).astype(np.uint8)


def warm_light(image: np.ndarray, rng: np.random.Generator, strength: float = 1.0) -> np.ndarray:
    """A tungsten lamp and a camera that does not correct it: blue falls, red rises."""
    return _channel_gains(image, (0.72, 0.95, 1.15), strength)


def cool_light(image: np.ndarray, rng: np.random.Generator, strength: float = 1.0) -> np.ndarray:
    """Fluorescent tubes: blue and green up, red down."""
    return _channel_gains(image, (1.15, 1.05, 0.78), strength)


def dim_room(image: np.ndarray, rng: np.random.Generator, strength: float = 1.0) -> np.ndarray:
    """Under half the light: a darker picture with the gain's noise on it."""
    dark = image.astype(np.float32) * (1.0 - 0.58 * strength)
    noisy = dark + rng.normal(0.0, 6.0 * strength, image.shape).astype(np.float32)
    return np.clip(noisy, 0, 255).astype(np.uint8)


def motion_blur(image: np.ndarray, rng: np.random.Generator, strength: float = 1.0) -> np.ndarray:
    """The camera (or the table) moved during the exposure: a streak up to 11 px long at some angle."""
    length = 1 + 2 * round(5 * strength)
    angle = float(rng.uniform(0, 180))
    if length < 3:
        return image.copy()
    kernel = np.zeros((length, length), np.float32)
    kernel[length // 2, :] = 1.0 / length
    turn = cv2.getRotationMatrix2D((length / 2 - 0.5, length / 2 - 0.5), angle, 1.0)
    kernel = cv2.warpAffine(kernel, turn, (length, length))
    return cv2.filter2D(image, -1, kernel / max(float(kernel.sum()), 1e-6))


def out_of_focus(image: np.ndarray, rng: np.random.Generator, strength: float = 1.0) -> np.ndarray:
    """Focus set for somewhere else: a blur of up to 2.5 px (the renderer blurs by at most 1.4)."""
    sigma = 2.5 * strength
    return cv2.GaussianBlur(image, (0, 0), sigma) if sigma >= 0.3 else image.copy()


def heavy_compression(image: np.ndarray, rng: np.random.Generator, strength: float = 1.0) -> np.ndarray:
    """A video stream squeezed for USB bandwidth: JPEG down to quality 25 (8x8 blocks, colour smeared)."""
    quality = int(round(95 - 70 * strength))
    ok, data = cv2.imencode(".jpg", image, [cv2.IMWRITE_JPEG_QUALITY, quality])
    if not ok:
        raise RuntimeError("JPEG encoding failed")
    return cv2.imdecode(data, cv2.IMREAD_COLOR)


def low_resolution(image: np.ndarray, rng: np.random.Generator, strength: float = 1.0) -> np.ndarray:
    """A camera with up to half the pixels across (640 for a 1280 picture), scaled up to the size
    the companion was given."""
    h, w = image.shape[:2]
    factor = 1.0 / (1.0 + strength)
    small = cv2.resize(image, (max(1, round(w * factor)), max(1, round(h * factor))), interpolation=cv2.INTER_AREA)
    return cv2.resize(small, (w, h), interpolation=cv2.INTER_LINEAR)


def glare(image: np.ndarray, rng: np.random.Generator, strength: float = 1.0) -> np.ndarray:
    """Lamps reflected on glossy plastic and a varnished table: a few soft white patches, some over
    pieces, burning out what is under their middle."""
    h, w = image.shape[:2]
    light = np.zeros((h, w), np.float32)
    for _ in range(4):
        centre = (int(rng.uniform(0.1, 0.9) * w), int(rng.uniform(0.1, 0.9) * h))
        axes = (int(rng.uniform(0.02, 0.06) * w), int(rng.uniform(0.01, 0.04) * w))
        cv2.ellipse(light, centre, axes, float(rng.uniform(0, 180)), 0, 360, 1.0, -1)
    light = cv2.GaussianBlur(light, (0, 0), 0.01 * w)
    light = np.clip(light / max(float(light.max()), 1e-6), 0, 1)[..., None] * (230.0 * strength)
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


def _check_picture(image: np.ndarray) -> None:
    if image.ndim != 3 or image.shape[2] != 3 or image.dtype != np.uint8:
        raise ValueError(f"expected a BGR uint8 picture, got shape {image.shape} and type {image.dtype}")


def apply_effect(name: str, image: np.ndarray, seed: int, strength: float = 1.0) -> np.ndarray:
    """`image` (BGR uint8) as the named effect leaves it; the same name, picture, seed and strength
    give the same result."""
    if name not in EFFECTS:
        raise ValueError(f"unknown webcam effect {name!r} (expected one of: {', '.join(EFFECTS)})")
    if not 0.0 <= strength <= 1.0:
        raise ValueError(f"strength must be between 0 and 1, got {strength}")
    _check_picture(image)
    return EFFECTS[name](image, np.random.default_rng(seed), strength)


def random_effect(image: np.ndarray, rng: np.random.Generator) -> tuple[str, float, np.ndarray]:
    """One effect drawn at random, at a random strength (0.3-1): (its name, the strength, the picture)."""
    _check_picture(image)
    name = str(rng.choice(list(EFFECTS)))
    strength = float(rng.uniform(0.3, 1.0))
    return name, strength, EFFECTS[name](image, rng, strength)
