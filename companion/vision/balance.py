"""A colour cast of the room's light, estimated from a picture and taken out of crops of it.

A webcam under warm bulbs or cool daylight tints every piece, and the colour classifier was
trained on renders whose white balance varies by about a tenth. The cast is estimated by the
shades-of-grey method (the picture's channel means, each taken as a sixth-power mean so bright
pixels weigh most: a Minkowski norm between grey-world and white-patch). A picture may also be
tinted by what it shows (a wooden table, green felt), and a full correction greys those out and
shifts every piece the other way; so the detector (companion/vision/detect.py) estimates the cast
of the picture it is given (the board's region with a margin round it, or the whole frame on a
bare table) and takes only half of it out, and only as a second view of each piece's crop that the
colour classifier averages with the crop as it is (docs/pipeline.md, "Each colour read with the
room's cast taken out").
"""

from __future__ import annotations

import cv2
import numpy as np

MINKOWSKI_P = 6
"""The shades-of-grey norm: 1 is grey-world (the mean), infinity white-patch (the brightest)."""
ESTIMATE_WIDTH = 160
"""The cast is estimated on a grid of about this many pixels across (it is a property of the whole picture)."""
MAX_GAIN = 1.6
"""No channel is scaled by more than this (or less than its inverse), whatever the estimate."""


def cast_gains(frame: np.ndarray) -> np.ndarray:
    """Per-channel gains (B, G, R) that would make the picture's shades-of-grey estimate neutral."""
    if frame.ndim != 3 or frame.shape[2] != 3:
        raise ValueError(f"expected a BGR image of shape (h, w, 3), got {frame.shape}")
    step = max(1, frame.shape[1] // ESTIMATE_WIDTH)
    pixels = frame[::step, ::step].reshape(-1, 3).astype(np.float64) / 255.0
    estimate = np.power(np.mean(np.power(pixels, MINKOWSKI_P), axis=0), 1.0 / MINKOWSKI_P)
    if not np.all(estimate > 1e-3):  # a channel with no light at all: nothing to balance against
        return np.ones(3)
    return np.clip(estimate.mean() / estimate, 1.0 / MAX_GAIN, MAX_GAIN)


def with_gains(image: np.ndarray, gains: np.ndarray, strength: float = 1.0) -> np.ndarray:
    """`image` (a picture, or a crop of it) with `strength` of `gains` applied (0: unchanged, 1: all
    of them), in the log of the gains so that half a correction is half of it whichever way it goes."""
    if not 0.0 <= strength <= 1.0:
        raise ValueError(f"strength must be in [0, 1], got {strength}")
    if strength == 0.0:
        return image
    scaled = np.power(np.asarray(gains, np.float64), strength)
    lut = np.clip(np.round(np.arange(256)[:, None] * scaled[None, :]), 0, 255).astype(np.uint8)
    return cv2.LUT(image, lut.reshape(256, 1, 3))  # one table per channel


def balanced(frame: np.ndarray, strength: float = 1.0) -> np.ndarray:
    """The picture with `strength` of its own colour cast taken out."""
    return with_gains(frame, cast_gains(frame), strength)
