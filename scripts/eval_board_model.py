#!/usr/bin/env python3
"""How close the board model's outline comes to the truth, on a rendered dataset's sidecars.

    python scripts/eval_board_model.py [--model models/boards_openvino_model] [--dataset datasets/referee]
                                       [--split all] [--json]

For each render with a board, the model is asked for that board kind; the figure is each corner's
distance from the true outline corner (`companion.vision.board_keypoints`), averaged over the
corners, as a share of the outline's mean side, and the same for the sides of the box round the
outline (the model's box, which is surer than its corners). Boards whose middle is out of the
picture are left out, as they are from training.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

import cv2
import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from companion.models import board_model_for_inference  # noqa: E402
from companion.vision.board_finder import BoardFinder  # noqa: E402
from companion.vision.board_keypoints import board_keypoints, keypoint_label, outline_side_px  # noqa: E402
from companion.vision.mapper import location_from_truth  # noqa: E402


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", type=Path, default=board_model_for_inference())
    parser.add_argument("--dataset", type=Path, default=Path("datasets/referee"))
    parser.add_argument("--split", default="all", help="a split of the dataset, or all")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    if args.model is None:
        print("eval_board_model: no board model in models/ and none given (--model)", file=sys.stderr)
        return 2
    finder = BoardFinder(args.model)
    pattern = "*/*.json" if args.split == "all" else f"{args.split}/*.json"
    per_kind: dict[str, dict[str, list]] = {}
    for path in sorted((args.dataset / "truth").glob(pattern)):
        truth = json.loads(path.read_text())
        location = location_from_truth(truth)
        spec = location.spec
        if keypoint_label(spec, location.H, location.image_size) is None:
            continue
        frame = cv2.imread(str(args.dataset / "images" / path.parent.name / (path.stem + ".jpg")))
        if frame is None:
            raise FileNotFoundError(f"image for {path} is missing or unreadable")
        start = time.perf_counter()
        guess = finder(frame, spec.kind)
        figures = per_kind.setdefault(spec.kind, {"side": [], "box": [], "ms": []})
        figures["ms"].append(1000 * (time.perf_counter() - start))
        if guess is None:
            figures["side"].append(np.inf)
            figures["box"].append(np.inf)
            continue
        corners = board_keypoints(spec, location.H)
        side = outline_side_px(corners)
        figures["side"].append(float(np.mean(np.hypot(*(guess.corners - corners).T))) / side)
        true_box = np.concatenate([corners.min(axis=0), corners.max(axis=0)])
        figures["box"].append(float(np.mean(np.abs(guess.box - true_box))) / side)
    results = []
    for kind, figures in per_kind.items():
        side, box = np.array(figures["side"]), np.array(figures["box"])
        found = np.isfinite(side)
        results.append({"kind": kind, "boards": len(side), "not_found": int((~found).sum()),
                        "median_share_of_side": float(np.median(side[found])) if found.any() else None,
                        "p90_share_of_side": float(np.percentile(side[found], 90)) if found.any() else None,
                        "box_side_median_share": float(np.median(box[found])) if found.any() else None,
                        "box_side_p90_share": float(np.percentile(box[found], 90)) if found.any() else None,
                        "median_ms": float(np.median(figures["ms"]))})
    if args.json:
        json.dump(results, sys.stdout, indent=2)
        print()
    else:
        for r in results:
            print(f"{r['kind']:9} {r['boards']:4} boards, {r['not_found']} not found; corner error median "
                  f"{100 * (r['median_share_of_side'] or 0):.1f} % of the side (p90 "
                  f"{100 * (r['p90_share_of_side'] or 0):.1f} %); box sides {100 * (r['box_side_median_share'] or 0):.1f} % "
                  f"(p90 {100 * (r['box_side_p90_share'] or 0):.1f} %); {r['median_ms']:.0f} ms")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
