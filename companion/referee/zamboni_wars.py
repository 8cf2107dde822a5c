"""Zamboni Wars on the table: each Zamboni's square, facing and armour, and the cover dice.

A Zamboni is a nest of its player's pieces lying flat; the camera sees the outer piece (level 0
of the nest), whose size is the armour left, since a hit always takes the largest piece: large
means three pieces, medium two, small one. Inner pieces, when seen at all, add nothing the outer
one does not say, so they are ignored. With the cover rule the Treehouse dice (d6) standing on
the coasters are cover; any other die (the one rolled for movement) is not part of the position.

A seen move is explained by any roll that allows it (every roll leaves the same state). When the
camera counted the pips of the movement die (the one d6 beside the board) and that roll allows the
move, that roll is the one recorded; else the first that does. The count never makes a move
illegal: pips are miscounted too often for that (companion/vision/dice.py). A laser shot that misses
looks like holding fire, and a hit like the removal of the target's outer piece.
"""

from __future__ import annotations

from collections import Counter
from typing import Any

from companion.boards.square import square_grid
from companion.games.base import CHANCE, TERMINAL
from companion.games.zamboni_wars import DIE_FACES, Fire, Hold, Phase, Roll, ZamboniState
from companion.pieces import Pose, Size
from companion.referee.core import Adapter
from companion.vision.observation import Observation, SeenPiece

_GRID = square_grid(6, 6)


def zamboni_text(colour: str, armour: Size | int, facing: str, cell: str) -> str:
    """'red-L NE @c3': a Zamboni by its outer piece, facing and square."""
    return f"{colour}-{Size(armour).letter} {facing} @{cell}"


class ZamboniAdapter(Adapter):
    game = "zamboni-wars"

    def expected(self, state: ZamboniState) -> Counter:
        items: Counter = Counter()
        for seat, z in enumerate(state.zambonis):
            if z is not None:
                items[zamboni_text(state.colour_of(seat).value, z.armour, z.facing.value, _GRID.name(z.cell))] += 1
        for cell in state.cover:
            items[f"die @{_GRID.name(cell)}"] += 1
        self._cover_rule = state.cover_rule
        return items

    def seen(self, observation: Observation) -> tuple[Counter, Counter]:
        off_board = [p.value for p in observation.pieces if p.kind == "d6" and p.cell is None]
        self._rolled = off_board[0] if len(off_board) == 1 else None
        items, unsure = Counter(), Counter()
        for p in observation.pieces:
            text = self._item(p)
            if text is not None:
                items[text] += 1
                if p.unsure:
                    unsure[text] += 1
        return items, unsure

    def _item(self, p: SeenPiece) -> str | None:
        if p.cell is None:
            return None
        if p.is_pyramid:
            if p.pose != Pose.LYING or (p.level or 0) > 0:
                return None  # an inner piece of a nest, or a piece standing up: not a Zamboni
            return f"{p.piece_text} {p.direction or '?'} @{p.cell}"
        if p.kind == "d6":
            return f"die @{p.cell}"
        return None

    def compare(self, expected: Counter, seen: Counter, unsure: Counter) -> float:
        if not getattr(self, "_cover_rule", True):
            seen = Counter({k: v for k, v in seen.items() if not k.startswith("die ")})
        return super().compare(expected, seen, unsure)

    def candidates(self, state: ZamboniState, seen: Counter) -> list[tuple[Any, ...]]:
        player = state.current_player()
        if player == TERMINAL:
            return []
        if state.phase == Phase.MOVE_ROLL:
            # Every roll with every move it allows, the roll the movement die shows first: of
            # explanations leaving one state, the first is recorded.
            rolled = getattr(self, "_rolled", None)
            out = []
            for value in sorted(DIE_FACES, key=lambda v: v != rolled):
                rolled = state.apply(Roll(value))
                out += [(Roll(value), move) for move in rolled.legal_actions()]
            return out
        if state.phase == Phase.AIM:
            target = state.aimed_at()
            out: list[tuple[Any, ...]] = [(Hold(state.turn),)]
            if target is not None:
                out += [(Fire(state.turn, target.seat), Roll(v)) for v in DIE_FACES]
            return out
        if player == CHANCE:
            return [(a,) for a, _ in state.chance_outcomes()]
        return [(a,) for a in state.legal_actions()]
