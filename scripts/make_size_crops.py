#!/usr/bin/env python3
"""Cuts labelled pyramid crops at the board's scale out of a synthetic dataset, for training the
size classifier (companion/vision/size_reader.py).

Reads each image's truth sidecar and writes crops made exactly as `crop_at_board_scale` makes them
at run time (the scene camera's plane standing in for the located board's), into an ultralytics
classification folder: OUT/{train,val,test}/{S,M,L}/<dataset>-<image>-<object>.jpg. The dataset's
own split is kept, so test crops come from test images. Pieces less than `--min-visible` in view
are skipped (the default keeps the bands of towers that show a third of their piece).

    python scripts/make_size_crops.py datasets/pieces-hd datasets/sizes-v1 [--jitter 0.08] [--webcam 0.3] [--seed 0]

Training crops take a box shifted and scaled a little (a detector's boxes are a few pixels off)
and a contact point a few pixels off; `--webcam W` cuts that share of the training images once more
after one of companion/webcam.py's effects (`...-webcam.jpg`).
"""

from __future__ import annotations

import argparse
import json
import random
from pathlib import Path

import cv2
import numpy as np

from companion.evaluation import table_homography
from companion.synth.piece_crops import add_webcam_option, jittered_box, pyramids_in_view, rendered_items, webcam_looks
from companion.vision.size_reader import crop_at_board_scale


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("dataset", type=Path)
    parser.add_argument("out", type=Path)
    parser.add_argument("--min-visible", type=float, default=0.3)
    parser.add_argument("--jitter", type=float, default=0.08, help="random box shift (share of the box); its scale moves by 3/4 of it")
    parser.add_argument("--point-jitter", type=float, default=3.0, help="contact point noise, pixels")
    add_webcam_option(parser)
    parser.add_argument("--splits", default="train,val,test")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    rng = random.Random(args.seed)
    effects_rng = np.random.default_rng(args.seed)
    splits = set(args.splits.split(","))
    counts: dict[str, int] = {}
    for split, stem, truth, image in rendered_items(args.dataset, splits):
        plane = table_homography(truth["camera"], (truth.get("board") or {}).get("plane_z_mm", 0.0))
        looks = [("", image)]
        looks += webcam_looks(image, split, args.webcam, rng, effects_rng)
        for obj in pyramids_in_view(truth, args.min_visible):
            j = args.jitter if split == "train" else 0.0
            box = jittered_box(obj["box_px"], rng, j, 0.75 * j)
            # As a Detection's ground point: the contact keypoint where it shows, else the box's bottom middle.
            x1, _, x2, y2 = obj["box_px"]
            ground = obj["contact_px"] if obj.get("contact_visibility") else ((x1 + x2) / 2, y2)
            p = args.point_jitter if split == "train" else 0.0
            ground = (ground[0] + rng.gauss(0, p), ground[1] + rng.gauss(0, p)) if p else tuple(ground)
            folder = args.out / split / obj["size"]
            folder.mkdir(parents=True, exist_ok=True)
            for suffix, look in looks:
                crop = crop_at_board_scale(look, box, ground, plane)
                if crop is None:
                    continue
                cv2.imwrite(str(folder / f"{args.dataset.name}-{stem}-{obj['id']}{suffix}.jpg"), crop)
                counts[f"{split}/{obj['size']}"] = counts.get(f"{split}/{obj['size']}", 0) + 1
    print(json.dumps(dict(sorted(counts.items()))))


if __name__ == "__main__":
    main()
