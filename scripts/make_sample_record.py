#!/usr/bin/env python3
"""Writes the bundled sample record: a full four-gladiator Icebomb Arena game.

The gladiators are simple greedy bots (seeded), so the game is aggressive and short
enough to read: each action is chosen by looking one action ahead for damage dealt,
damage taken and distance to the nearest rival. Usage:

    python scripts/make_sample_record.py [--seed 3] [--out companion/data/samples/icebomb-arena-4p.jsonl]
"""

from __future__ import annotations

import argparse
import random
from pathlib import Path

from companion.games import CHANCE, SIMULTANEOUS, TERMINAL, get_game
from companion.games.base import sample_chance
from companion.games.icebomb_arena import Phase, Plan
from companion.records import RecordHeader, write_record

NAMES = ("Ann", "Bob", "Cy", "Dee")


def nearest_rival_distance(state, p: int) -> int:
    here = state.gladiators[p]
    if here is None:
        return 0
    others = [c for q, c in enumerate(state.gladiators) if q != p and c is not None]
    return min((state.grid.manhattan(here, c) for c in others), default=0)


def score(state, p: int) -> float:
    rivals = sum(state.life_of(q) for q in range(state.num_players) if q != p)
    return 3 * state.life_of(p) - 2 * rivals - nearest_rival_distance(state, p) + (2 if state.edge == p else 0)


def choose(state, p: int, rng: random.Random):
    actions = state.legal_actions(p)
    if state.phase == Phase.BID:
        return rng.choice([a for a in actions if a.pips <= 3])
    if state.phase == Phase.PLAN:
        # Plans that point at least one pyramid toward the nearest rival, picked at random.
        here = state.gladiators[p]
        rival = min((c for q, c in enumerate(state.gladiators) if q != p and c is not None),
                    key=lambda c: state.grid.manhattan(here, c))
        (hf, hr), (rf, rr) = state.grid.coords(here), state.grid.coords(rival)
        toward = {d for d, ok in (("E", rf > hf), ("W", rf < hf), ("N", rr > hr), ("S", rr < hr)) if ok}
        good = [a for a in actions if isinstance(a, Plan) and any(q.direction and q.direction.value in toward
                                                                   for q in a.pyramids)]
        return rng.choice(good or actions)
    if state.phase in (Phase.BOMBS, Phase.ENTER):
        return rng.choice(actions)
    scored = [(score(state.apply(a), p) + rng.random() * 0.5, i) for i, a in enumerate(actions)]
    return actions[max(scored)[1]]


def play(seed: int) -> tuple[list[str], object]:
    rng = random.Random(seed)
    game = get_game("icebomb-arena")
    state = game.new_initial_state(len(NAMES))
    actions: list[str] = []
    while state.current_player() != TERMINAL:
        p = state.current_player()
        if p == CHANCE:
            action = sample_chance(state, rng)
        else:
            seat = rng.choice(state.players_to_act()) if p == SIMULTANEOUS else p
            action = choose(state, seat, rng)
        actions.append(str(action))
        state = state.apply(action)
    return actions, state


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seed", type=int, default=3)
    parser.add_argument("--out", type=Path, default=Path("companion/data/samples/icebomb-arena-4p.jsonl"))
    args = parser.parse_args()
    actions, final = play(args.seed)
    write_record(args.out, RecordHeader("icebomb-arena", NAMES, "standard", args.seed), actions)
    print(f"{len(actions)} actions, {final.round} rounds, winner: "
          f"{', '.join(NAMES[p] for p in final.outcome().winners)} -> {args.out}")


if __name__ == "__main__":
    main()
