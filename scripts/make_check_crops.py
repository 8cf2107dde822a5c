#!/usr/bin/env python3
"""Cuts the piece checker's training crops (companion/vision/piece_check.py) from the shipped
detector's own output on a rendered dataset, each detection labelled by the truth.

Each image is read as `companion eval` reads it (the detector within the true board's region, the
sizes read at the scene camera's scale), and every pyramid found is matched to the truth as the
evaluation matches it (IoU >= 0.5, the pieces at least half in view first). A detection matched to
a pyramid at least half in view is a "piece"; one that matches no object at all, or only a token,
is "none"; one matched to a piece barely in view is left out. Crops go into an ultralytics
classification folder: OUT/{train,val,test}/{none,piece}/<dataset>-<image>-<k>.jpg, the dataset's
own split kept.

    python scripts/make_check_crops.py datasets/verify-s362 datasets/checks-v1 [--splits train,val] [--limit N]
    python scripts/make_check_crops.py datasets/verify-s362 datasets/checks-v1 --tips-only --splits train

The detector makes few mistakes a set, so `--tips-only` adds the commonest kind drawn from the truth
alone, without running the detector: the tip of each upright pyramid that nothing rests on, boxed
as a smaller pyramid would be (its box and contact point scaled about its apex by the two sizes'
heights, a little more or less), as "none" (`...-tip<id><size>.jpg`; `--tips-per-image`, 1 by
default). Only upright pieces: a lying piece's tip is where a nested one shows (Zamboni Wars).

Prints the counts per split and class, and how many images were read.
"""

from __future__ import annotations

import argparse
import json
import random
import sys
import time
from pathlib import Path

import cv2

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from companion.evaluation import IOU_MATCH, MIN_VISIBLE, look_closer, match_by_box, table_homography  # noqa: E402
from companion.recognize import DEFAULT_MODEL, DEFAULT_SIZE_MODEL, model_detector  # noqa: E402
from companion.vision.classes import PYRAMID  # noqa: E402
from companion.vision.detection import box_iou  # noqa: E402
from companion.pieces import HEIGHT_MM, Size  # noqa: E402
from companion.vision.piece_check import A_PIECE, CHECK_GROWTH, NOT_A_PIECE, crop_for_check  # noqa: E402
from companion.vision.size_reader import crop_at_board_scale, sizes_read_on_board  # noqa: E402


def labelled(truth: dict, detections: list) -> list[tuple[int, str]]:
    """(detection index, label) for each pyramid detection that gets a label (see the module's text)."""
    objects = [o for o in truth["objects"] if o.get("box_px")]
    judged = [o.get("visible_fraction", 1.0) >= MIN_VISIBLE for o in objects]
    matched = match_by_box([o["box_px"] for o in objects], [d.box for d in detections], IOU_MATCH, judged=judged)
    of_detection = {k: j for j, k in enumerate(matched) if k is not None}
    out = []
    for k, d in enumerate(detections):
        if d.kind != PYRAMID:
            continue
        j = of_detection.get(k)
        if j is None or objects[j]["kind"] != PYRAMID:
            out.append((k, NOT_A_PIECE))
        elif judged[j]:
            out.append((k, A_PIECE))
    return out


def tip_boxes(truth: dict, rng: random.Random) -> list[tuple[str, tuple[float, ...], tuple[float, float]]]:
    """(name, box, contact point) of a smaller pyramid's outline over the tip of each upright piece
    that nothing rests on, fully in view with its apex showing (see the module's text)."""
    objects = [o for o in truth["objects"] if o.get("box_px")]
    top_level: dict = {}
    for o in objects:
        if o.get("stack") is not None:
            top_level[o["stack"]] = max(top_level.get(o["stack"], 0), o.get("level", 0))
    out = []
    for o in objects:
        if o["kind"] != PYRAMID or o.get("pose") != "upright" or o.get("visible_fraction", 0) < 0.8 \
                or o.get("apex_visibility") != 2 or (o.get("stack") is not None and o.get("level", 0) < top_level[o["stack"]]):
            continue
        size = Size.parse(o["size"])
        ax, ay = o["apex_px"]
        for smaller in (s for s in Size if s < size):
            r = HEIGHT_MM[smaller] / HEIGHT_MM[size] * rng.uniform(0.9, 1.15)
            box = tuple(a + r * (v - a) for v, a in zip(o["box_px"], (ax, ay, ax, ay)))
            contact = (ax + r * (o["contact_px"][0] - ax), ay + r * (o["contact_px"][1] - ay))
            if any(q["kind"] == PYRAMID and box_iou(q["box_px"], box) > 0.5 for q in objects if q is not o):
                continue
            out.append((f"tip{o['id']}{smaller.letter}", box, contact))
    return out


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("dataset", type=Path)
    parser.add_argument("out", type=Path)
    parser.add_argument("--splits", default="train,val,test")
    parser.add_argument("--limit", type=int, help="at most this many images per split")
    parser.add_argument("--model", type=Path, default=DEFAULT_MODEL)
    parser.add_argument("--tips-only", action="store_true", help="only the tips drawn from the truth (see above)")
    parser.add_argument("--tips-per-image", type=int, default=1, help="with --tips-only, at most this many an image")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    rng = random.Random(args.seed)
    detect = None if args.tips_only else model_detector(args.model, colours=None, sizes=DEFAULT_SIZE_MODEL, checks=None)
    counts: dict[str, int] = {}
    images, start = 0, time.perf_counter()
    for split in args.splits.split(","):
        paths = sorted((args.dataset / "truth" / split).glob("*.json"))[: args.limit]
        for path in paths:
            truth = json.loads(path.read_text())
            frame = cv2.imread(str(args.dataset / "images" / split / (path.stem + ".jpg")))
            if frame is None:
                print(f"skipped {path.stem}: its image is missing or unreadable", file=sys.stderr)
                continue
            plane = table_homography(truth["camera"], (truth.get("board") or {}).get("plane_z_mm", 0.0))
            if args.tips_only:
                tips = tip_boxes(truth, rng)
                for name, box, contact in rng.sample(tips, min(len(tips), args.tips_per_image)):
                    crop = crop_at_board_scale(frame, box, contact, plane, CHECK_GROWTH)
                    if crop is not None:
                        folder = args.out / split / NOT_A_PIECE
                        folder.mkdir(parents=True, exist_ok=True)
                        cv2.imwrite(str(folder / f"{args.dataset.name}-{path.stem}-{name}.jpg"), crop)
                        counts[f"{split}/{NOT_A_PIECE} (tips)"] = counts.get(f"{split}/{NOT_A_PIECE} (tips)", 0) + 1
                images += 1
                continue
            detections = sizes_read_on_board(detect, frame, look_closer(detect, frame, truth), plane)
            for k, label in labelled(truth, detections):
                crop = crop_for_check(frame, detections[k], plane)
                if crop is None:
                    continue
                folder = args.out / split / label
                folder.mkdir(parents=True, exist_ok=True)
                cv2.imwrite(str(folder / f"{args.dataset.name}-{path.stem}-{k}.jpg"), crop)
                counts[f"{split}/{label}"] = counts.get(f"{split}/{label}", 0) + 1
            images += 1
            if images % 100 == 0:
                print(f"{images} images, {time.perf_counter() - start:.0f} s: {json.dumps(counts)}", flush=True)
    print(json.dumps({"images": images, "seconds": round(time.perf_counter() - start), **dict(sorted(counts.items()))}))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
