#!/usr/bin/env python3
"""The piece checker's threshold (companion/vision/piece_check.py), chosen on a validation split and
measured on a test split: the whole evaluation of `companion eval` once per threshold, from one run
of the detector per image.

    python scripts/choose_check_threshold.py DATASET [--split val] [--thresholds 0.5,0.7,0.8,0.9,0.95] \
        [--check-model models/checks.pt] [--model models/pieces.pt] [--limit N] [--per-game]

Each image is read as `companion eval` reads it (the detector within the true board's region, dice
and sizes read on the scene camera's plane); the checker scores every pyramid once; then, for no
checker and for each threshold, the pyramids it calls no piece that surely are dropped, sizes are
checked by the geometry, and the figures are counted. Prints recall and precision with colour and
size right, false detections per image, and (`--per-game`) the same per game.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections import defaultdict
from pathlib import Path

import cv2

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from companion import models  # noqa: E402
from companion.evaluation import (Tally, look_closer, score_image, table_homography, with_dice_read,  # noqa: E402
                                  with_sizes_checked)
from companion.recognize import model_detector  # noqa: E402
from companion.vision.classes import PYRAMID  # noqa: E402
from companion.vision.piece_check import PieceChecker, crop_for_check  # noqa: E402
from companion.vision.size_reader import sizes_read_on_board  # noqa: E402


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("dataset", type=Path)
    parser.add_argument("--split", default="val", choices=("train", "val", "test", "all"))
    parser.add_argument("--thresholds", default="0.5,0.7,0.8,0.9,0.95")
    parser.add_argument("--check-model", type=Path, default=models.CHECK_WEIGHTS)
    parser.add_argument("--model", type=Path, default=models.DETECTOR_WEIGHTS)
    parser.add_argument("--limit", type=int)
    parser.add_argument("--per-game", action="store_true")
    args = parser.parse_args()
    thresholds = [float(t) for t in args.thresholds.split(",")]
    detect = model_detector(args.model, checks=None)
    checker = PieceChecker(args.check_model)
    settings = ["off"] + thresholds
    overall = {s: Tally() for s in settings}
    per_game: dict[str, dict] = defaultdict(lambda: {s: Tally() for s in settings})
    pattern = "*/*.json" if args.split == "all" else f"{args.split}/*.json"
    paths = sorted((args.dataset / "truth").glob(pattern))[: args.limit]
    if not paths:
        parser.error(f"no truth sidecars under {args.dataset / 'truth' / args.split}")
    for path in paths:
        truth = json.loads(path.read_text())
        frame = cv2.imread(str(args.dataset / "images" / path.parent.name / (path.stem + ".jpg")))
        if frame is None:
            print(f"skipped {path.stem}: its image is missing or unreadable", file=sys.stderr)
            continue
        plane = table_homography(truth["camera"], (truth.get("board") or {}).get("plane_z_mm", 0.0))
        found = with_dice_read(look_closer(detect, frame, truth), truth, frame)
        found = sizes_read_on_board(detect, frame, found, plane)
        crops = {k: crop_for_check(frame, d, plane) for k, d in enumerate(found) if d.kind == PYRAMID}
        crops = {k: c for k, c in crops.items() if c is not None}
        none = dict(zip(crops, checker.none_probabilities(list(crops.values()))))
        for setting in settings:
            kept = found if setting == "off" else [d for k, d in enumerate(found) if none.get(k, 0.0) < setting]
            score_image(truth, with_sizes_checked(kept, truth), [overall[setting], per_game[truth["game"]][setting]])

    def row(tally: Tally) -> dict:
        f = tally.figures()
        return {"recall": f["recall_colour_and_size"], "precision": f["precision_colour_and_size"],
                "false_per_image": f["false_detections_per_image"]}

    print(f"{args.dataset} ({args.split}, {len(paths)} images), checker {args.check_model}:")
    for setting in settings:
        print(json.dumps({"threshold": setting, **row(overall[setting])}))
    if args.per_game:
        for game, tallies in sorted(per_game.items()):
            print(game, " ".join(f"{s}: {row(t)['recall']}/{row(t)['precision']}" for s, t in tallies.items()))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
