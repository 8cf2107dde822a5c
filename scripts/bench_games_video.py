"""The scripted games of tests/referee/test_games_video.py refereed with the shipped detector.

    python scripts/bench_games_video.py [--games zamboni-wars,ice-arena,space-arena,icetowers] [--model WEIGHTS] [--json]

The test referees each scripted game (Zamboni Wars, Ice Arena, ARENA, IceTowers; a fixed camera, a
hand passing between moves) from the render's own labels, so it checks the rules chain with perfect
detections. Here the same games are rendered at 1280x720 at full quality and each calm position is
read by the detector (within the board's region, as the companion looks) and the mapper; the board
is placed where the render put it, so localisation is measured elsewhere (bench_locate*.py). Each
position is judged against the last one the referee agreed with, and the cells whose picture changed
since, as the pipeline does. Prints, per game, the moves read as scripted, the moves accepted wrongly
(a legal action that is not the scripted one), how many of those the page would have shown with the
camera's doubts (the verdict names pieces the mapper was unsure of: the players are asked to look),
and the verdicts.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from companion.recognize import DEFAULT_MODEL, model_detector  # noqa: E402
from companion.referee import Referee  # noqa: E402
from companion.vision.change import changed_cells  # noqa: E402
from companion.vision.dice import dice_read_on_board  # noqa: E402
from companion.vision.mapper import Mapper, config_for, location_from_truth  # noqa: E402
from companion.vision.region import detect_near_board  # noqa: E402
from companion.vision.size_reader import sizes_read_on_board  # noqa: E402
from tests.referee import scripted_games  # noqa: E402
from tests.referee.test_games_video import CALM_BEFORE, CALM_AFTER, SCRIPTS, film  # noqa: E402

SIZE = (1280, 720)


def _at_webcam_size() -> None:
    """The scripts' scenes are drawn at 480x360 for the tests' speed; a webcam gives 1280x720."""
    for scene in (scripted_games.zamboni_scene, scripted_games.ice_arena_scene, scripted_games.arena_scene,
                  scripted_games.icetowers_scene):
        scene.__defaults__ = tuple(SIZE if d == (480, 360) else d for d in scene.__defaults__)


def calm_positions(frame_count: int, hand_frames: set[int]) -> list[int]:
    """The last calm frame before the first move, then the last calm frame after each move."""
    out = [CALM_BEFORE - 1]
    i = CALM_BEFORE
    while i < frame_count:
        while i in hand_frames:
            i += 1
        i += CALM_AFTER
        out.append(i - 1)
    return out


def referee_game(name: str, renderer, detect) -> dict:
    script = SCRIPTS[name]
    frames, truths, hand_frames, _ = film(renderer, script)
    mapper = Mapper(script.game, config_for(script.game))
    location = location_from_truth(truths[0])
    on_cells = location.spec.kind != "table"

    def observe(index: int):
        frame = frames[index]
        detections = detect_near_board(detect, frame, location.corners if on_cells else None)
        detections = sizes_read_on_board(detect, frame, detections, location.H)
        return mapper.map(dice_read_on_board(detect, frame, detections, location.H), location)

    positions = calm_positions(len(frames), hand_frames)
    referee = Referee(script.adapter(), script.start())
    base, baseline = positions[0], observe(positions[0])
    rows = []
    for move, index in zip(script.moves, positions[1:]):
        seen = observe(index)
        changed = None
        if on_cells:
            changed = changed_cells(frames[base], frames[index], location,
                                    lambda mm: mapper.cell_of(location.spec, mm)[0],
                                    pieces_before=baseline.pieces, pieces_after=seen.pieces)
        verdict = referee.judge(seen, baseline, changed)
        scripted = "; ".join(map(str, script.actions(move)))
        rows.append({"scripted": scripted, "read": verdict.text, "accepted": verdict.accepted,
                     "right": verdict.accepted and verdict.text.split(" (")[0] == scripted,
                     "doubts": list(verdict.doubts)})
        if verdict.accepted:
            referee.state, base, baseline = verdict.state, index, seen
    return {"game": name, "moves": len(rows), "right": sum(r["right"] for r in rows),
            "accepted_wrongly": sum(r["accepted"] and not r["right"] for r in rows),
            "wrongly_with_doubts": sum(r["accepted"] and not r["right"] and bool(r["doubts"]) for r in rows),
            "verdicts": sum(not r["accepted"] for r in rows), "positions": rows}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--games", default=",".join(SCRIPTS))
    parser.add_argument("--model", type=Path, default=DEFAULT_MODEL,
                        help="detector weights (default: the shipped ones); to judge a candidate before shipping it")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    from companion.synth.render import Renderer

    _at_webcam_size()
    renderer, detect = Renderer(), model_detector(args.model)
    start = time.perf_counter()
    results = [referee_game(name, renderer, detect) for name in args.games.split(",")]
    if args.json:
        print(json.dumps(results, indent=2))
        return 0
    print(f"{'game':14} {'right':>7} {'wrongly accepted':>17} {'of those doubted':>17} {'verdicts':>9}")
    for r in results:
        print(f"{r['game']:14} {r['right']:>3} of {r['moves']:<2} {r['accepted_wrongly']:>17} "
              f"{r['wrongly_with_doubts']:>17} {r['verdicts']:>9}")
        for row in r["positions"]:
            if not row["right"]:
                doubted = f" (doubts: {', '.join(row['doubts'])})" if row["doubts"] else ""
                print(f"    scripted {row['scripted']!r}: {row['read'][:160]}{doubted}")
    print(f"({time.perf_counter() - start:.0f} s)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
