"""What the crop classifiers (colour, size, tips) train on: the labelled pyramids of a rendered dataset,
each box moved a little as a detector's would be (scripts/make_colour_crops.py, make_size_crops.py,
make_tip_crops.py)."""

from __future__ import annotations

import argparse
import json
import random
from collections.abc import Iterator
from pathlib import Path

import cv2
import numpy as np

from companion.webcam import random_effect


def pyramids_in_view(truth: dict, min_visible: float) -> list[dict]:
    """The sidecar's pyramids at least `min_visible` in view, with a box."""
    return [obj for obj in truth["objects"]
            if obj.get("kind") == "pyramid" and obj.get("visible_fraction", 0) >= min_visible and obj.get("box_px")]


def jittered_box(box, rng: random.Random, shift: float, scale: float) -> tuple[float, float, float, float]:
    """`box` (x1, y1, x2, y2) moved by up to `shift` of its width and height and scaled by up to
    `scale` either way. Three draws from `rng` whatever the amounts, so that a split cut without
    jitter leaves the generator where a jittered one would."""
    x1, y1, x2, y2 = box
    w, h = x2 - x1, y2 - y1
    dx, dy = rng.uniform(-shift, shift) * w, rng.uniform(-shift, shift) * h
    s = 1 + rng.uniform(-scale, scale)
    cx, cy = (x1 + x2) / 2 + dx, (y1 + y2) / 2 + dy
    return (cx - w * s / 2, cy - h * s / 2, cx + w * s / 2, cy + h * s / 2)


def rendered_items(dataset: Path, splits: set[str] | None = None) -> Iterator[tuple[str, str, dict, np.ndarray]]:
    """(split, item name, truth sidecar, BGR image) of each rendered item of `dataset` (in name
    order; only `splits` when given), skipping an item whose image is missing or unreadable."""
    for truth_path in sorted(Path(dataset).glob("truth/*/*.json")):
        split = truth_path.parent.name
        if splits is not None and split not in splits:
            continue
        image = cv2.imread(str(Path(dataset) / "images" / split / (truth_path.stem + ".jpg")))
        if image is not None:
            yield split, truth_path.stem, json.loads(truth_path.read_text()), image


def webcam_share(text: str) -> float:
    """The `--webcam` option's value: a share between 0 and 1."""
    value = float(text)
    if not 0.0 <= value <= 1.0:
        raise argparse.ArgumentTypeError(f"--webcam is a share between 0 and 1, got {value}")
    return value


def add_webcam_option(parser: argparse.ArgumentParser) -> None:
    """The crop scripts' `--webcam W`: that share of the training images is cut once more after a webcam effect."""
    parser.add_argument("--webcam", type=webcam_share, default=0.0,
                        help="share of training images also cut after a random webcam effect (companion/webcam.py)")


def webcam_looks(image: np.ndarray, split: str, share: float, rng: random.Random,
                 effects_rng: np.random.Generator) -> list[tuple[str, np.ndarray]]:
    """[("-webcam", the image after a random webcam effect)] for `share` of the training images, else []."""
    if share and split == "train" and rng.random() < share:
        return [("-webcam", random_effect(image, effects_rng)[2])]
    return []
