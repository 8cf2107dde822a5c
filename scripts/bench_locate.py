"""Board localisation benchmark on the synthetic frames of tests/vision/test_locate.py.

    python scripts/bench_locate.py [--frames 200] [--kinds chess,coasters,hex,table] [--json] [--board-model M]

For every board kind: the share of 1280x720 frames (pieces on 35-50 % of the cells, 0-2 hands,
blur, noise, JPEG) where the board was found with every cell assigned correctly, the mean and
worst corner error as a fraction of the board's side, the time to localise from scratch, and the
time of the locked check per frame. Frame seeds start at 10000, apart from the tests' seeds.
`--board-model` lets the localiser ask the board model too (companion/vision/board_finder.py);
its time is then part of every localisation from scratch.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from companion.vision.locate import BoardLock, BoardNotFound, Locator  # noqa: E402
from tests.vision.test_locate import SPECS, a1_point, evaluate, make_scene  # noqa: E402


def bench_kind(name: str, frames: int, first_seed: int = 10000, board_model=None) -> dict:
    spec = SPECS[name]
    locator = Locator(spec, board_model=board_model)
    found, errors, times, reasons = 0, [], [], {}
    worst = (0.0, None)
    for seed in range(first_seed, first_seed + frames):
        frame, h_true = make_scene(spec, seed, pieces=0.35 + 0.15 * (seed % 2),
                                   hands=0 if name == "table" else None)
        hint = a1_point(spec, h_true, np.random.default_rng(seed + 999))
        start = time.perf_counter()
        try:
            loc = locator.locate(frame, a1_near=hint)
        except BoardNotFound as exc:
            times.append(time.perf_counter() - start)
            reasons[exc.reason] = reasons.get(exc.reason, 0) + 1
            continue
        times.append(time.perf_counter() - start)
        err, cells_ok = evaluate(loc, spec, h_true)
        if cells_ok:
            found += 1
            errors.append(err)
            worst = max(worst, (err, seed))
        else:
            reasons["wrong-cells"] = reasons.get("wrong-cells", 0) + 1
    # The locked check on a still camera: one frame localised, then the same view checked.
    frame, h_true = make_scene(spec, first_seed, pieces=0.4, hands=0)
    lock = BoardLock(locator)
    lock.update(frame, a1_near=a1_point(spec, h_true, np.random.default_rng(0)))
    checks = []
    for _ in range(50):
        start = time.perf_counter()
        status = lock.update(frame)
        checks.append(time.perf_counter() - start)
    ms = np.array(times) * 1000
    return {"board": name, "frames": frames, "found_rate": found / frames,
            "mean_corner_error": float(np.mean(errors)) if errors else None,
            "worst_corner_error": worst[0], "worst_seed": worst[1], "failures": reasons,
            "scratch_ms_median": float(np.median(ms)), "scratch_ms_p95": float(np.percentile(ms, 95)),
            "scratch_ms_max": float(ms.max()), "locked_check_ms_median": float(np.median(checks) * 1000),
            "locked_state": status.state}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--frames", type=int, default=200)
    parser.add_argument("--kinds", default=",".join(SPECS))
    parser.add_argument("--json", action="store_true")
    parser.add_argument("--board-model", type=Path, help="the board model's weights, asked as the localiser does")
    args = parser.parse_args()
    board_model = None
    if args.board_model is not None:
        from companion.vision.board_finder import BoardFinder
        board_model = BoardFinder(args.board_model)
    results = [bench_kind(name, args.frames, board_model=board_model) for name in args.kinds.split(",")]
    if args.json:
        json.dump(results, sys.stdout, indent=2)
        print()
        return 0
    print(f"{'board':10} {'found':>7} {'mean err':>9} {'worst':>7} {'scratch ms':>18} {'locked ms':>9}  failures")
    for r in results:
        mean = f"{100 * r['mean_corner_error']:.2f}%" if r["mean_corner_error"] is not None else "-"
        print(f"{r['board']:10} {100 * r['found_rate']:6.1f}% {mean:>9} {100 * r['worst_corner_error']:6.2f}% "
              f"{r['scratch_ms_median']:6.1f} (p95 {r['scratch_ms_p95']:5.1f}) {r['locked_check_ms_median']:9.2f}  "
              f"{r['failures'] or ''}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
