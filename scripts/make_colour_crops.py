#!/usr/bin/env python3
"""Cuts labelled pyramid crops out of a synthetic dataset, for training the colour classifier.

Reads each image's truth sidecar (scripts/synth dataset ...) and writes 64x64 crops, made exactly
as companion.vision.colour.crop_for_colour makes them at run time, into an ultralytics
classification folder: OUT/{train,val,test}/<colour>/<dataset>-<image>-<object>.jpg (the dataset's
name keeps crops of several datasets cut into one folder apart). Pieces less than
half visible are skipped; the dataset's own split is kept, so test crops come from test images.

    python scripts/make_colour_crops.py datasets/pieces-v1 datasets/colours-v1 [--jitter 0.12] [--cast 0.3] [--webcam 0.5]
                                        [--margin -0.02]

With `--cast C` each training image is cut a second time under a colour cast (blue and red gains
each drawn from 1 +- C, the exposure from 0.75-1.1), as a lamp or a camera's white balance would
leave it, and those crops are written beside the others (`...-cast.jpg`): the renders vary white
balance by only 12 % (companion/webcam.py measures what a stronger cast does). With `--webcam W`
that share of the training images is cut once more after one of companion/webcam.py's effects at a
random strength (a dim room, blur, heavy compression, glare...; `...-webcam.jpg`).
"""

from __future__ import annotations

import argparse
import json
import random
from pathlib import Path

import cv2
import numpy as np

from companion.synth.piece_crops import add_webcam_option, jittered_box, pyramids_in_view, rendered_items, webcam_looks
from companion.vision.colour import CROP_MARGIN, DETECTION_CROP_MARGIN, crop_for_colour


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("dataset", type=Path)
    parser.add_argument("out", type=Path)
    parser.add_argument("--min-visible", type=float, default=0.5)
    parser.add_argument("--jitter", type=float, default=0.12,
                        help="random box shift/scale (fraction of the box), like a detector's imprecision")
    parser.add_argument("--cast", type=float, default=0.0,
                        help="also cut each training image under a random colour cast of this strength")
    add_webcam_option(parser)
    parser.add_argument("--margin", type=float, default=CROP_MARGIN,
                        help="share of the box added round it (negative: inside it); the detector's crops use "
                             f"{DETECTION_CROP_MARGIN}")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    rng = random.Random(args.seed)
    effects_rng = np.random.default_rng(args.seed)
    counts: dict[str, int] = {}
    for split, stem, truth, image in rendered_items(args.dataset):
        looks = [("", image)]
        if args.cast and split == "train":
            gains = np.array([1 + rng.uniform(-args.cast, args.cast), 1.0, 1 + rng.uniform(-args.cast, args.cast)])
            cast = image.astype(np.float32) * (gains * rng.uniform(0.75, 1.1)).astype(np.float32)
            looks.append(("-cast", np.clip(cast, 0, 255).astype(np.uint8)))
        looks += webcam_looks(image, split, args.webcam, rng, effects_rng)
        for obj in pyramids_in_view(truth, args.min_visible):
            j = args.jitter if split == "train" else 0.0
            box = jittered_box(obj["box_px"], rng, j, j)
            folder = args.out / split / obj["colour"]
            folder.mkdir(parents=True, exist_ok=True)
            for suffix, look in looks:
                cv2.imwrite(str(folder / f"{args.dataset.name}-{stem}-{obj['id']}{suffix}.jpg"), crop_for_colour(look, box, args.margin))
                counts[f"{split}/{obj['colour']}"] = counts.get(f"{split}/{obj['colour']}", 0) + 1
    print(json.dumps(dict(sorted(counts.items()))))


if __name__ == "__main__":
    main()
