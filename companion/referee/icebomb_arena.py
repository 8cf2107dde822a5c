"""Icebomb Arena on the table: gladiators (pawns), bombs (beads), blocks, revealed plans.

What a camera sees of an Icebomb Arena state: a pawn on each living gladiator's square, a glass
bead on each bomb, each block as an upright pyramid of its owner's colour and size, and, once plans
are revealed, each gladiator's unused planned pyramids in front of their seat (lying towards the
planned direction, or upright for a block). Bids and plans before the reveal are hidden in hands,
so the reveal is explained by every player's secret plan at once: each player's plan is read off
their seat zone.
"""

from __future__ import annotations

import itertools
from collections import Counter
from collections.abc import Sequence
from typing import Any

from companion.games.base import CHANCE, TERMINAL
from companion.games.icebomb_arena import Phase, Plan, Planned, IcebombState
from companion.pieces import CARDINALS, Colour, Pose, Size
from companion.referee.core import Adapter
from companion.vision.observation import Observation, SeenPiece
from companion.vision.tracker import item_text

MAX_JOINT_REVEALS = 16
"""Reveals offered at most when seat zones fit several plans equally; past it, the first fit of each."""
# Pyramids a glass bead can be taken for.
GLASS_LIKE = (Colour.CLEAR, Colour.WHITE)


def _zone_items(colour: Colour, seat: int, planned: Sequence[Any]) -> Counter:
    return Counter(f"{colour.value}-{q.size.letter} {q.direction.value if q.direction else 'U'} @P{seat + 1}"
                   for q in planned)


class IcebombAdapter(Adapter):
    """`colours[p]` is the colour seat p plays (blocks and plans are told apart by colour)."""

    game = "icebomb-arena"

    def __init__(self, colours: Sequence[Colour]):
        self.colours = tuple(colours)

    def expected(self, state: IcebombState) -> Counter:
        grid = state.grid
        items: Counter = Counter()
        for p, cell in enumerate(state.gladiators):
            if cell is not None and state.alive[p]:
                items[f"pawn @{grid.name(cell)}"] += 1
        for cell in state.bombs:
            items[f"bead @{grid.name(cell)}"] += 1
        for cell, block in enumerate(state.blocks):
            if block is not None:
                owner, size = block
                items[f"{self.colours[owner].value}-{Size(size).letter} U @{grid.name(cell)}"] += 1
        if state.phase not in (Phase.BID, Phase.PLAN, Phase.EDGE_DRAW):
            for p, hand in enumerate(state.hands):
                if hand and state.alive[p]:
                    items += _zone_items(self.colours[p], p, hand)
        return items

    def seen(self, observation: Observation) -> tuple[Counter, Counter]:
        """As every game sees its pieces, except that a small clear or white upright pyramid on a
        square, of a colour no seat plays, is no block: it is a glass bead (a bomb) taken for a
        pyramid (session 7's detector reads the demo's clear bead on a6 so). It counts as that bead,
        unsure."""
        items, unsure = super().seen(observation)
        for p in observation.pieces:
            if (p.is_pyramid and p.cell is not None and p.colour in GLASS_LIKE and p.colour not in self.colours
                    and p.size == Size.SMALL and p.pose == Pose.UPRIGHT):
                text = item_text(p)
                items[text] -= 1
                unsure[text] -= 1 if unsure[text] else 0
                items[f"bead @{p.cell}"] += 1
                unsure[f"bead @{p.cell}"] += 1
        return +items, +unsure

    def relevant(self, piece: SeenPiece) -> bool:
        if piece.kind in ("d6", "d8"):
            return False
        if piece.zone is not None:
            return piece.is_pyramid
        return piece.cell is not None

    def candidates(self, state: IcebombState, seen: Counter) -> list[tuple[Any, ...]]:
        player = state.current_player()
        if player == TERMINAL:
            return []
        if player == CHANCE:
            return [(a,) for a, _ in state.chance_outcomes()]
        if state.phase == Phase.PLAN:
            # The reveal: every player still to commit chooses the plan their seat zone shows. Where
            # the zone fits several plans as well (a piece whose direction the camera could not
            # tell), each is offered, so that the referee names them as ambiguous.
            choices = []
            for p in state.players_to_act():
                shown = Counter({k: v for k, v in seen.items() if k.endswith(f"@P{p + 1}")})
                scored = [(_mismatch(_zone_items(self.colours[p], p, a.pyramids), shown), a)
                          for a in state.legal_actions(p)]
                least = min(score for score, _ in scored)
                choices.append([a for score, a in scored if score == least])
            if not choices:
                return []
            joint = list(itertools.islice(itertools.product(*choices), MAX_JOINT_REVEALS + 1))
            return joint if len(joint) <= MAX_JOINT_REVEALS else [tuple(c[0] for c in choices)]
        if state.phase == Phase.BID:
            return []  # secret bids are entered by hand: nothing on the table shows them
        return [(a,) for a in state.legal_actions()]

    def revisions(self, state: IcebombState, action: Any) -> list[Any]:
        """A revealed plan with one of its pyramids read another way: one size larger or smaller,
        or facing another way (a small lying pointing away from the camera looks upright). A plan
        piece is read once, at the reveal, lying in its own coloured shadow."""
        if not isinstance(action, Plan):
            return []
        found = []
        for k, piece in enumerate(action.pyramids):
            others = [Planned(Size(s), piece.direction) for s in (piece.size - 1, piece.size + 1) if 1 <= s <= 3]
            others += [Planned(piece.size, d) for d in (*CARDINALS, None) if d != piece.direction]
            for other_piece in others:
                pyramids = (*action.pyramids[:k], other_piece, *action.pyramids[k + 1:])
                # Parsed from its text, the plan's pyramids come in the engine's own order.
                other = state.game.parse_action(str(Plan(action.player, pyramids)))
                if other != action and other not in found and state.illegal_reason(other) is None:
                    found.append(other)
        return found


def _mismatch(a: Counter, b: Counter) -> int:
    return sum((a - b).values()) + sum((b - a).values())


def plan_of(colours: Sequence[Colour], state: IcebombState, seat: int, seen: Counter) -> Plan | None:
    """The plan whose pyramids match seat `seat`'s zone exactly, or None."""
    shown = Counter({k: v for k, v in seen.items() if k.endswith(f"@P{seat + 1}")})
    for action in state.legal_actions(seat):
        if isinstance(action, Plan) and _mismatch(_zone_items(colours[seat], seat, action.pyramids), shown) == 0:
            return action
    return None
