#!/usr/bin/env python3
"""Rules-engine speed: random full games per second and applied actions per second.

"Applied" means `State.apply`, which checks legality (`illegal_reason`) before resolving,
exactly as the referee does with every event. Choosing the random action needs the legal
action list too; that time is reported separately, so the figure is not flattered.

    python scripts/bench_rules.py [--game icebomb-arena] [--seconds 10] [--profile] [--json OUT]
"""

from __future__ import annotations

import argparse
import cProfile
import io
import json
import pstats
import random
import time

from companion.games import CHANCE, TERMINAL, game_names, get_game
from companion.games.base import sample_chance


def bench(name: str, seconds: float, seed: int = 1) -> dict:
    game = get_game(name)
    rng = random.Random(seed)
    games = actions = 0
    apply_time = choose_time = 0.0
    deadline = time.perf_counter() + seconds
    players = max(game.min_players, min(4, game.max_players))
    while time.perf_counter() < deadline:
        state = game.new_initial_state(players)
        for _ in range(game.playout_limit):
            t0 = time.perf_counter()
            p = state.current_player()
            if p == TERMINAL:
                break
            if p == CHANCE:
                action = sample_chance(state, rng)
            else:
                seats = state.players_to_act()
                action = rng.choice(state.legal_actions(seats[0] if len(seats) == 1 else rng.choice(seats)))
            t1 = time.perf_counter()
            state = state.apply(action)
            t2 = time.perf_counter()
            choose_time += t1 - t0
            apply_time += t2 - t1
            actions += 1
        games += 1
    total = apply_time + choose_time
    return {
        "game": name,
        "players": players,
        "games": games,
        "actions": actions,
        "games_per_s": games / total,
        "applied_actions_per_s": actions / apply_time,
        "actions_per_s_with_move_choice": actions / total,
        "apply_share": apply_time / total,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--game", action="append", help="game name (default: every registered game)")
    parser.add_argument("--seconds", type=float, default=10.0, help="time per game")
    parser.add_argument("--profile", action="store_true", help="print where the time goes")
    parser.add_argument("--json", help="also write the results to this JSON file")
    args = parser.parse_args()
    results = []
    print(f"{'game':16} {'players':>7} {'games/s':>9} {'applied actions/s':>18} {'with move choice':>17}")
    for name in args.game or game_names():
        if args.profile:
            profiler = cProfile.Profile()
            profiler.enable()
        r = bench(name, args.seconds)
        results.append(r)
        print(f"{name:16} {r['players']:>7} {r['games_per_s']:>9.1f} {r['applied_actions_per_s']:>18,.0f} "
              f"{r['actions_per_s_with_move_choice']:>17,.0f}")
        if args.profile:
            profiler.disable()
            out = io.StringIO()
            pstats.Stats(profiler, stream=out).sort_stats("tottime").print_stats(12)
            print(out.getvalue())
    if args.json:
        with open(args.json, "w") as f:
            json.dump(results, f, indent=2)


if __name__ == "__main__":
    main()
