#!/usr/bin/env python3
"""Cuts crops for the tip classifier (companion/vision/tips.py) out of a synthetic dataset.

The boxes and their classes ('piece': a real piece sitting on another in the picture; 'tip': the
part of a piece a detector takes for a smaller one stacked on it) come from the scene's truth
(companion/synth/tip_crops.py); crops are cut as `tips.tip_crop` cuts them at run time, into an
ultralytics classification folder OUT/{train,val,test}/{piece,tip}/*.jpg; the dataset's own split
is kept.

    python scripts/make_tip_crops.py datasets/tips-a datasets/tips-v1 [--jitter 0.08] [--webcam 0.3] [--seed 0]
    python scripts/make_tip_crops.py datasets/tips-a datasets/tips-v1 --detector [--tip-copies 4] [--webcam 0.3] [--seed 1]

Training crops take boxes moved a little (a detector's are a few pixels off); `--webcam W` cuts
that share of the training images once more after one of companion/webcam.py's effects.
`--detector` cuts, instead, the candidates the shipped detector (without a tip classifier) finds,
looking within the board's region as the companion does, each labelled as the true box it overlaps
most (`tip_crops.detected_labels`): the boxes the classifier is shown at run time.
"""

from __future__ import annotations

import argparse
import json
import random
import sys
from pathlib import Path

import cv2
import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from companion.synth.piece_crops import add_webcam_option, jittered_box, rendered_items, webcam_looks  # noqa: E402
from companion.synth.tip_crops import detected_labels, labelled_boxes  # noqa: E402
from companion.pieces import Pose  # noqa: E402
from companion.vision.classes import PYRAMID  # noqa: E402
from companion.vision.tips import TIP, candidates, tip_crop  # noqa: E402


def _detected(detect, image: np.ndarray, truth: dict) -> list[tuple[str, tuple[float, ...]]]:
    """The detector's candidates in `image` with their labels (those overlapping no true box left out)."""
    from companion.evaluation import look_closer

    found = [d for d in look_closer(detect, image, truth) if d.kind == PYRAMID and d.pose == Pose.UPRIGHT]
    chosen = [found[k].box for k in candidates([d.box for d in found])]
    return [(label, box) for label, box in zip(detected_labels(truth, chosen), chosen) if label is not None]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("dataset", type=Path)
    parser.add_argument("out", type=Path)
    parser.add_argument("--min-visible", type=float, default=0.3)
    parser.add_argument("--jitter", type=float, default=0.08, help="random box shift (share of the box); its scale moves by 3/4 of it")
    add_webcam_option(parser)
    parser.add_argument("--splits", default="train,val,test")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--detector", action="store_true", help="cut the detector's candidates (see above)")
    parser.add_argument("--tip-copies", type=int, default=1,
                        help="with --detector, write each tip of the training split this many times: the "
                             "detector's tips are rare (about 1 candidate in 30), and they are what it must learn")
    args = parser.parse_args()
    rng = random.Random(args.seed)
    effects_rng = np.random.default_rng(args.seed)
    splits = set(args.splits.split(","))
    counts: dict[str, int] = {}
    detect = None
    if args.detector:
        from companion.recognize import model_detector

        detect = model_detector(tips=None)
    for split, stem, truth, image in rendered_items(args.dataset, splits):
        looks = [("", image)]
        looks += webcam_looks(image, split, args.webcam, rng, effects_rng)
        if detect is None:
            boxes = [(label, jittered_box(box, rng, args.jitter if split == "train" else 0.0,
                                          0.75 * args.jitter if split == "train" else 0.0))
                     for label, box in labelled_boxes(truth, args.min_visible)]
            name = ""
        else:
            boxes = _detected(detect, image, truth)
            name = "-detected"
        for n, (label, box) in enumerate(boxes):
            folder = args.out / split / label
            folder.mkdir(parents=True, exist_ok=True)
            copies = args.tip_copies if detect is not None and label == TIP and split == "train" else 1
            for suffix, look in looks:
                crop = tip_crop(look, box)
                for copy in range(copies):
                    again = f"-copy{copy}" if copy else ""
                    cv2.imwrite(str(folder / f"{args.dataset.name}-{stem}{name}-{n}{suffix}{again}.jpg"), crop)
                    counts[f"{split}/{label}"] = counts.get(f"{split}/{label}", 0) + 1
    print(json.dumps(dict(sorted(counts.items()))))


if __name__ == "__main__":
    main()
