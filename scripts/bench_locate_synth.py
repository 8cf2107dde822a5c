"""Board localisation on the scene generator's renders (companion.synth), against their sidecars.

    python scripts/bench_locate_synth.py [--frames 50] [--games icebomb-arena,zamboni-wars,ice-arena,space-arena]
                                         [--framing free|referee]
    python scripts/bench_locate_synth.py --dataset datasets/referee --split all --frames 1000
    python scripts/bench_locate_synth.py ... --board-model models/boards.pt   # with the board model's guesses

Each render comes with the exact board-plane-to-image homography in its JSON sidecar. For each
frame this reports whether the board was found with every cell assigned correctly, and the mean
corner error of the playing area as a fraction of its side, and how many frames show the whole
playing area at all (many renders crop it, which the localiser rightly reports as cut-by-frame).
The renders are 1280x720; the a1 corner is given as a person would point at it at set-up.
`--framing referee` renders the same tables with the camera stood back to show the whole board,
as one set up to referee a game is. `--dataset DIR` reads a rendered dataset's pictures and sidecars
instead of rendering (`--split all` for every split, `--frames` then caps each game's count).
Frames with a hand over the board are counted apart as well: the tracker skips them and the board
lock keeps the board found in calm frames. `--board-model` lets the localiser ask the board model
where its own search fails (companion/vision/board_finder.py); `by_board_model` counts those found so.
`--lock-after-hand` also plays each frame with a hand over the wholly visible board to a board lock,
then three times the same scene rendered without its hands, as a camera sees a hand come and go at
set-up, and counts the locks that end with every cell right (the lock searches a still frame again).
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

from companion.vision.locate import BoardLock, BoardNotFound, BoardSpec, Locator  # noqa: E402
from companion.vision.mapper import board_spec_from_truth  # noqa: E402


def _apply(h: np.ndarray, pts: np.ndarray) -> np.ndarray:
    p = np.column_stack([pts, np.ones(len(pts))]) @ h.T
    return p[:, :2] / p[:, 2:3]


def check(loc, spec: BoardSpec, h_true: np.ndarray) -> tuple[float, bool]:
    true_c = _apply(h_true, spec.playing_corners)
    side = np.mean([np.hypot(*(true_c[i] - true_c[i - 1])) for i in range(len(true_c))])
    err = float(np.mean(np.hypot(*(loc.corners - true_c).T))) / side
    inv = np.linalg.inv(h_true)
    ok = all(cv2.pointPolygonTest(poly.astype(np.float32), tuple(float(v) for v in _apply(inv, np.array([c.centre]))[0]),
                                  False) >= 0 for c, (_, poly) in zip(loc.cells(), spec.cells()))
    return err, ok


def _hand_over(truth: dict, board_corners: np.ndarray) -> bool:
    """Whether a hand's box reaches into the board's bounding box: the tracker skips such frames (the
    lock keeps the board found in calm ones), so the figures without them are the pipeline's."""
    x0, y0 = board_corners.min(axis=0)
    x1, y1 = board_corners.max(axis=0)
    for obj in truth["objects"]:
        box = obj.get("box_px") if obj["kind"] == "hand" else None
        if box and box[0] < x1 and box[2] > x0 and box[1] < y1 and box[3] > y0:
            return True
    return False


def without_hands(renderer, truth: dict, framing: str) -> np.ndarray:
    """The scene of a render's sidecar rendered again without its hands."""
    from dataclasses import replace

    from companion.synth.render import encode_jpeg
    from companion.synth.scenes import sample_scene

    width, height = truth["image"]["width"], truth["image"]["height"]
    scene = sample_scene(truth["game"], truth["seed"], width, height, framing)
    scene = replace(scene, objects=[o for o in scene.objects if o.kind != "hand"])
    jpeg = encode_jpeg(renderer.render(scene).image, scene.look.jpeg_quality)
    return cv2.imdecode(np.frombuffer(jpeg, np.uint8), cv2.IMREAD_COLOR)


def lock_ends_right(spec: BoardSpec, board_model, with_hand: np.ndarray, clean: np.ndarray, hint, h_true) -> bool:
    """A board lock fed the frame with a hand, then the clean one three times: every cell right at the end?"""
    lock = BoardLock(Locator(spec, board_model=board_model))
    lock.update(with_hand, a1_near=tuple(hint))
    for _ in range(3):
        lock.update(clean)
    return lock.location is not None and check(lock.location, spec, h_true)[1]


def rendered(renderer, game: str, first_seed: int, frames: int, framing: str):
    """(name, frame, truth) of `frames` fresh renders of `game`."""
    from companion.synth.dataset import render_item

    for seed in range(first_seed, first_seed + frames):
        jpeg, truth = render_item(renderer, game, seed, 1280, 720, framing)
        yield seed, cv2.imdecode(np.frombuffer(jpeg, np.uint8), cv2.IMREAD_COLOR), truth


def stored(dataset: Path, split: str, game: str, frames: int):
    """(name, frame, truth) of up to `frames` stored renders of `game` in a dataset's split."""
    pattern = "*/*.json" if split == "all" else f"{split}/*.json"
    count = 0
    for path in sorted((dataset / "truth").glob(pattern)):
        if count >= frames:
            return
        truth = json.loads(path.read_text())
        if truth.get("game") != game:
            continue
        frame = cv2.imread(str(dataset / "images" / path.parent.name / (path.stem + ".jpg")))
        if frame is None:
            raise FileNotFoundError(f"image for {path} is missing or unreadable")
        count += 1
        yield f"{path.parent.name}/{path.stem}", frame, truth


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--frames", type=int, default=50)
    parser.add_argument("--games", default="icebomb-arena,zamboni-wars,ice-arena,space-arena")
    parser.add_argument("--first-seed", type=int, default=5000)
    parser.add_argument("--framing", choices=("free", "referee"), default="free")
    parser.add_argument("--json", action="store_true")
    parser.add_argument("--dataset", type=Path, help="read this rendered dataset instead of rendering")
    parser.add_argument("--split", default="test", help="with --dataset: its split, or all")
    parser.add_argument("--board-model", type=Path, help="the board model's weights, asked where the search fails")
    parser.add_argument("--lock-after-hand", action="store_true",
                        help="also lock on each frame with a hand over the board, then on the scene without it")
    args = parser.parse_args()
    board_model = None
    if args.board_model is not None:
        from companion.vision.board_finder import BoardFinder
        board_model = BoardFinder(args.board_model)
    if args.dataset is None or args.lock_after_hand:
        try:
            from companion.synth.render import Renderer
            renderer = Renderer()
        except Exception as exc:  # noqa: BLE001 - any failure to start the renderer ends the benchmark
            print(f"bench_locate_synth: the scene renderer is not usable here: {exc}", file=sys.stderr)
            return 2
    if args.dataset is not None and not (args.dataset / "truth").is_dir():
        print(f"bench_locate_synth: {args.dataset} has no truth/ folder of sidecars", file=sys.stderr)
        return 2
    results = []
    for game in args.games.split(","):
        found, errors, times, reasons = 0, [], [], {}
        by_board_model = 0
        frames = 0
        in_view, found_in_view = 0, 0
        calm, found_calm = 0, 0  # wholly in view with no hand over the board, as the tracker's frames are
        locks_after_hand, locks_right = 0, 0
        # reason -> frames (seeds or names) whose board was wholly in view, "(hand)" after those with a hand over it
        missed_in_view: dict[str, list] = {}
        scenes = (rendered(renderer, game, args.first_seed, args.frames, args.framing) if args.dataset is None
                  else stored(args.dataset, args.split, game, args.frames))
        for name, frame, truth in scenes:
            frames += 1
            if truth.get("board") is None:
                reasons["no board in scene"] = reasons.get("no board in scene", 0) + 1
                continue
            spec = board_spec_from_truth(truth)
            h_true = np.array(truth["board"]["homography_mm_to_px"], float)
            hint = _apply(h_true, spec.playing_corners[:1])[0]
            corners = _apply(h_true, spec.outline() if spec.kind == "hex" else spec.playing_corners)
            height, width = frame.shape[:2]
            visible = bool(corners.min() >= 0 and corners[:, 0].max() < width and corners[:, 1].max() < height)
            in_view += visible
            without_hand = visible and not _hand_over(truth, corners)
            calm += without_hand
            if args.lock_after_hand and visible and not without_hand:
                framing = (truth.get("item") or {}).get("framing", args.framing)
                locks_after_hand += 1
                locks_right += lock_ends_right(spec, board_model, frame, without_hands(renderer, truth, framing),
                                               hint, h_true)
            start = time.perf_counter()
            try:
                loc = Locator(spec, board_model=board_model).locate(frame, a1_near=tuple(hint))
            except BoardNotFound as exc:
                reasons[exc.reason] = reasons.get(exc.reason, 0) + 1
                if visible:
                    missed_in_view.setdefault(exc.reason, []).append(name if without_hand else f"{name} (hand)")
                continue
            finally:
                times.append(time.perf_counter() - start)
            err, ok = check(loc, spec, h_true)
            if ok:
                found += 1
                by_board_model += loc.method == "board-model"
                found_in_view += visible
                found_calm += without_hand
                errors.append(err)
            else:
                reasons["wrong-cells"] = reasons.get("wrong-cells", 0) + 1
                if visible:
                    missed_in_view.setdefault("wrong-cells", []).append(name if without_hand else f"{name} (hand)")
        results.append({"game": game, "frames": frames, "found_rate": found / frames if frames else 0.0,
                        "board_in_view": in_view, "found_in_view": found_in_view,
                        "in_view_without_hand": calm, "found_without_hand": found_calm, "by_board_model": by_board_model,
                        "locks_after_hand": locks_after_hand, "locks_right_after_hand": locks_right,
                        "mean_corner_error": float(np.mean(errors)) if errors else None,
                        "scratch_ms_median": float(np.median(times) * 1000) if times else None, "failures": reasons,
                        "missed_in_view": missed_in_view})
    if args.json:
        json.dump(results, sys.stdout, indent=2)
        print()
    else:
        for r in results:
            mean = f"{100 * r['mean_corner_error']:.2f}%" if r["mean_corner_error"] is not None else "-"
            ms = f"{r['scratch_ms_median']:.0f} ms" if r["scratch_ms_median"] is not None else "-"
            print(f"{r['game']:14} found {100 * r['found_rate']:5.1f}%  (board wholly in view in {r['board_in_view']}, "
                  f"found in {r['found_in_view']} of those; {r['found_without_hand']} of the "
                  f"{r['in_view_without_hand']} without a hand over it; {r['by_board_model']} by the board model)  mean corner error {mean:>7}  {ms:>7}  "
                  f"{r['failures'] or ''}")
            if r["locks_after_hand"]:
                print(f"    locked on a frame with a hand over the board, then shown it without: "
                      f"{r['locks_right_after_hand']} of {r['locks_after_hand']} ended right")
            for reason, names in r["missed_in_view"].items():
                print(f"    missed with the board in view ({reason}): {', '.join(str(n) for n in names)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
