#!/usr/bin/env python3
"""Cuts the dice face classifier's training patches (companion/vision/dice.py, `top_face_patch`) from renders.

    python scripts/make_die_crops.py OUT DATASET... [--copies 3] [--jitter 0.04] [--min-visible 0.5] [--seed 0]

Each d6 and d8 of a scene with a board, at least `--min-visible` in view and with a true top value, is
cut as the companion cuts a detected die: its box through the board's true homography to the top
face seen from straight above. The box's edges are moved by up to `--jitter` of its size (the
detector's boxes are not the true ones) and the patch turned at random (a die lies at any turn), in
`--copies` cuts for the training split and one for the others. Writes OUT/<split>/<kind>-<value>/*.png,
the folders ultralytics' classifier trains from.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections import Counter
from pathlib import Path

import cv2
import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from companion.vision.dice import top_face_patch  # noqa: E402
from companion.vision.mapper import location_from_truth  # noqa: E402
from companion.vision.sizing import PlaneCamera  # noqa: E402


def jittered(box: list[float], rng: np.random.Generator, jitter: float) -> list[float]:
    w, h = box[2] - box[0], box[3] - box[1]
    moves = rng.uniform(-jitter, jitter, 4) * np.array([w, h, w, h])
    return [float(v) for v in np.asarray(box, float) + moves]


def cut(dataset: Path, out: Path, copies: int, jitter: float, min_visible: float,
        rng: np.random.Generator) -> Counter:
    tally: Counter = Counter()
    for path in sorted((dataset / "truth").glob("*/*.json")):
        split = path.parent.name
        truth = json.loads(path.read_text())
        dice = [o for o in truth["objects"] if o["kind"] in ("d6", "d8") and o.get("box_px") and o.get("value")
                and o.get("visible_fraction", 0) >= min_visible]
        if not dice or truth.get("board") is None:
            continue
        image_path = next((dataset / "images" / split).glob(path.stem + ".*"), None)
        if image_path is None:
            continue
        image = cv2.imread(str(image_path))
        camera = PlaneCamera.from_homography(np.asarray(location_from_truth(truth).H, float),
                                             (image.shape[1], image.shape[0]))
        if camera is None:
            continue
        for k, die in enumerate(dice):
            label = f"{die['kind']}-{die['value']}"
            for copy in range(copies if split == "train" else 1):
                patch = top_face_patch(image, die["kind"], jittered(die["box_px"], rng, jitter), camera,
                                       float(rng.uniform(0, 360)))
                if patch is None:
                    continue
                folder = out / split / label
                folder.mkdir(parents=True, exist_ok=True)
                cv2.imwrite(str(folder / f"{dataset.name}-{path.stem}-{k}-{copy}.png"), patch)
                tally[(split, die["kind"])] += 1
    return tally


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("out", type=Path)
    parser.add_argument("datasets", nargs="+", type=Path)
    parser.add_argument("--copies", type=int, default=3)
    parser.add_argument("--jitter", type=float, default=0.04)
    parser.add_argument("--min-visible", type=float, default=0.5)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    rng = np.random.default_rng(args.seed)
    total: Counter = Counter()
    for dataset in args.datasets:
        if not (dataset / "truth").is_dir():
            raise SystemExit(f"make_die_crops: {dataset} has no truth/ folder (a dataset made by scripts/synth)")
        total += cut(dataset, args.out, args.copies, args.jitter, args.min_visible, rng)
    for (split, kind), n in sorted(total.items()):
        print(f"  {split:6} {kind}: {n} patches")
    return 0


if __name__ == "__main__":
    sys.exit(main())
