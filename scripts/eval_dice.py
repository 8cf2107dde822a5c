#!/usr/bin/env python3
"""Measures the dice readers (companion/vision/dice.py) on rendered scenes, apart from the detector.

    python scripts/eval_dice.py datasets/referee [datasets/pieces-hd ...] [--kind d6|d8] [--min-visible 0.8]
                                [--min-pip-px 3] [--top-reach 0.5] [--close-reach 0.46] [--model W] [--split S] [--json]

Each die of the kind asked (d6 pips by default, d8 numbers with --kind d8) of a scene with a board,
at least `--min-visible` in view and with a true top value, is read
from its true box with the board's true homography, as the companion reads a detected die. Prints,
per dataset and for all: the share of dice read at all, the share of those read right, and the share of
all dice read right, with the dice binned by their box's larger side in pixels (pips of dice under 30 px
can hardly be told apart), and the time a reading takes. `companion eval` reports the same shares with
the detector's boxes. With `--model`, the dice face classifier reads them as `read_dice` does with it (its surer
readings, and the less sure ones the pips or the drawn numbers agree with).
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections import Counter
from dataclasses import replace
from pathlib import Path

import cv2
import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from companion.vision.detection import Detection  # noqa: E402
from companion.vision.dice import DiceConfig, DiceFaceClassifier, _d8_templates, read_d6, read_d8, read_dice  # noqa: E402
from companion.vision.mapper import location_from_truth  # noqa: E402
from companion.vision.sizing import PlaneCamera  # noqa: E402

BINS = (20, 30, 40, 50, 60)


def size_bin(side: float) -> str:
    below = [b for b in BINS if side < b]
    return f"<{below[0]} px" if below else f">={BINS[-1]} px"


def measure(dataset: Path, config: DiceConfig, min_visible: float, kind: str = "d6",
            faces: DiceFaceClassifier | None = None, split: str = "*") -> Counter:
    tally: Counter = Counter()
    for path in sorted((dataset / "truth").glob(f"{split}/*.json")):
        truth = json.loads(path.read_text())
        dice = [o for o in truth["objects"] if o["kind"] == kind and o.get("box_px") and o.get("value")
                and o.get("visible_fraction", 0) >= min_visible]
        if not dice or truth.get("board") is None:
            continue
        image = next((dataset / "images" / path.parent.name).glob(path.stem + ".*"), None)
        if image is None:
            continue
        colour = cv2.imread(str(image))
        gray = cv2.cvtColor(colour, cv2.COLOR_BGR2GRAY)
        location = location_from_truth(truth)
        camera = PlaneCamera.from_homography(np.asarray(location.H, float), (gray.shape[1], gray.shape[0]))
        if camera is None:
            continue
        for die in dice:
            box = die["box_px"]
            started = time.perf_counter()
            if faces is not None:
                value = read_dice(colour, [Detection(kind, tuple(box), 1.0, kind)], location.H, config=config,
                                  faces=faces)[0].value
            else:
                value = read_d6(gray, box, camera, config) if kind == "d6" else read_d8(gray, box, camera)
            tally[("all", "seconds")] += time.perf_counter() - started
            bin_ = size_bin(max(box[2] - box[0], box[3] - box[1]))
            for key in ("all", bin_):
                tally[(key, "dice")] += 1
                tally[(key, "read")] += value is not None
                tally[(key, "right")] += value == die["value"]
    return tally


def summary(tally: Counter, key: str) -> dict:
    dice, read, right = tally[(key, "dice")], tally[(key, "read")], tally[(key, "right")]
    return {"dice": dice, "read": round(read / dice, 3) if dice else None,
            "right_of_read": round(right / read, 3) if read else None,
            "right_of_all": round(right / dice, 3) if dice else None,
            **({"ms_per_die": round(1000 * tally[(key, "seconds")] / dice, 2)} if key == "all" and dice else {})}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("datasets", nargs="+", type=Path)
    parser.add_argument("--kind", choices=("d6", "d8"), default="d6")
    parser.add_argument("--min-visible", type=float, default=0.8)
    parser.add_argument("--min-pip-px", type=float, help=f"default {DiceConfig().min_pip_px}")
    parser.add_argument("--top-reach", type=float, help=f"default {DiceConfig().top_reach}")
    parser.add_argument("--close-reach", type=float, help=f"default {DiceConfig().close_reach}")
    parser.add_argument("--model", type=Path, help="read with the dice face classifier at these weights")
    parser.add_argument("--split", default="*", help="one split of each dataset (train, val, test); default all")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    config = DiceConfig()
    if args.min_pip_px is not None:
        config = replace(config, min_pip_px=args.min_pip_px)
    if args.top_reach is not None:
        config = replace(config, top_reach=args.top_reach)
    if args.close_reach is not None:
        config = replace(config, close_reach=args.close_reach)
    faces = DiceFaceClassifier(args.model) if args.model else None
    _d8_templates()  # built once, on the first d8 read: not counted in the time per die
    total: Counter = Counter()
    report: dict = {"config": {"min_pip_px": config.min_pip_px, "top_reach": config.top_reach,
                               "close_reach": config.close_reach}, "datasets": {}}
    for dataset in args.datasets:
        if not (dataset / "truth").is_dir():
            raise SystemExit(f"eval_dice: {dataset} has no truth/ folder (a dataset made by scripts/synth)")
        tally = measure(dataset, config, args.min_visible, args.kind, faces, args.split)
        total += tally
        report["datasets"][str(dataset)] = summary(tally, "all")
    report["all"] = summary(total, "all")
    report["by_size"] = {b: summary(total, b) for b in sorted({k for k, _ in total} - {"all"})}
    if args.json:
        print(json.dumps(report, indent=2))
        return 0
    print(f"  {report['all'].get('ms_per_die')} ms per die read (its frame already in memory)")
    if args.kind == "d6":
        print(f"min_pip_px {config.min_pip_px}, top_reach {config.top_reach}, close_reach {config.close_reach}")
    for name, row in [*report["datasets"].items(), ("all", report["all"]), *report["by_size"].items()]:
        print(f"  {name:28} {row['dice']:5} dice  read {row['read']}  right of read {row['right_of_read']}  "
              f"right of all {row['right_of_all']}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
