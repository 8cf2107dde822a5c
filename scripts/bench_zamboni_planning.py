"""Times Zamboni Wars move planning for a roll of 6 on an empty board (goal: under 5 ms).

Usage: python scripts/bench_zamboni_planning.py [repeats]

Prints the median time of the exact enumeration (every end position and facing that
spends exactly the roll) and of the full plan the page shows (one path per end position
and the shots from there), for a Zamboni in each start corner.
"""

from __future__ import annotations

import statistics
import sys
import time
from dataclasses import replace

from companion.boards.coasters import martian_coasters
from companion.games import get_game
from companion.games.zamboni_wars import Zamboni, plan_moves, reach
from companion.pieces import Direction

GOAL_MS = 5.0


def median_ms(fn, repeats: int) -> float:
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        fn()
        times.append((time.perf_counter() - start) * 1000)
    return statistics.median(times)


def main(argv: list[str]) -> int:
    repeats = int(argv[1]) if len(argv) > 1 else 200
    board = martian_coasters()
    g = board.grid
    starts = [("a1", Direction.N), ("a6", Direction.E), ("f6", Direction.S), ("f1", Direction.W)]
    game = get_game("zamboni-wars")
    worst_enum = worst_plan = 0.0
    for name, facing in starts:
        me = Zamboni(g.parse(name), facing)
        enum_ms = median_ms(lambda: reach(board, me, 6).ends(), repeats)
        # An empty board: only the planning Zamboni. `replace` gives a state with an empty memo.
        empty = replace(game.new_initial_state(2), zambonis=(me, None))
        plan_ms = median_ms(lambda: plan_moves(replace(empty), roll=6, seat=0), repeats)
        count = len(reach(board, me, 6).ends())
        print(f"{name} {facing.value}: {count:3d} end positions; enumeration {enum_ms:.3f} ms, "
              f"full plan with paths and targets {plan_ms:.3f} ms")
        worst_enum, worst_plan = max(worst_enum, enum_ms), max(worst_plan, plan_ms)
    verdict = "OK" if worst_enum < GOAL_MS else "TOO SLOW"
    print(f"roll of 6, empty board: enumeration {worst_enum:.3f} ms (goal < {GOAL_MS} ms: {verdict}); "
          f"full plan {worst_plan:.3f} ms")
    return 0 if worst_enum < GOAL_MS else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv))
