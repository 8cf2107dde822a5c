"""Icebomb Arena (Christopher Hickman, 2004-05): gladiators, bombs and blocks on a chessboard.

Rules: ../shared/rules/icebomb-arena.txt. Rulings where the text is silent: docs/rulings/icebomb-arena.md.

The game's shape, as nodes of the shared interface:

    BID (simultaneous, secret) -> [EDGE_DRAW (chance) when the high bid ties]
    -> BOMBS (one at a time, Edge first, clockwise) -> ENTER (likewise)
    -> rounds of: PLAN (simultaneous, secret) -> ACTION (two passes, Edge-at-round-start first)
    with PAY nodes in the "your stash is your life" variant, where each point of damage is
    paid by the gladiator choosing a pyramid to remove from the game.

Action text forms (seat P1.. in seat order, clockwise; squares named from a1):

    P1 bid LMM        P1 bid -          edge P3 (chance: a tied bid drawn)
    P1 bomb c4        P1 enter d5
    P1 plan LN MU     (a large pointing N and a medium upright = block; "-" for none)
    P1 move LN        P1 block M c5     P1 forfeit M
    P1 pay M          (from the stash)  P1 pay LN (a planned pyramid from the hand)
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, replace
from enum import Enum
from functools import cache
from itertools import combinations_with_replacement
from typing import Any, ClassVar

from companion.boards.square import SquareGrid, square_grid
from companion.games import register
from companion.games.base import (
    CHANCE,
    SIMULTANEOUS,
    TERMINAL,
    Game,
    GameError,
    InvalidActionError,
    Outcome,
    State,
    parse_seat,
    seat_name,
)
from companion.pieces import CARDINALS, PIECES_PER_SIZE_IN_STASH, Direction, Size

START_LIFE = 10
STASH_IS_LIFE = "stash-is-life"
SIZES = (Size.SMALL, Size.MEDIUM, Size.LARGE)

Counts = tuple[int, int, int]  # pieces of each size: (small, medium, large)
FULL_STASH: Counts = (PIECES_PER_SIZE_IN_STASH,) * 3
NO_PIECES: Counts = (0, 0, 0)


def arena_shape(num_players: int) -> tuple[int, int]:
    """(files, ranks) of the arena: 8x8, 6x6 for three gladiators, half the board (8x4) for two."""
    return {2: (8, 4), 3: (6, 6)}.get(num_players, (8, 8))


def bombs_each(num_players: int) -> int:
    return {2: 4, 3: 3}.get(num_players, 2)


def _add(counts: Counts, size: int, n: int = 1) -> Counts:
    c = list(counts)
    c[size - 1] += n
    return (c[0], c[1], c[2])


class Phase(str, Enum):
    BID = "bid"
    EDGE_DRAW = "edge-draw"
    BOMBS = "bombs"
    ENTER = "enter"
    PLAN = "plan"
    ACTION = "action"
    PAY = "pay"
    OVER = "over"


# --- planned pyramids -----------------------------------------------------------------

@dataclass(frozen=True, slots=True, order=True)
class Planned:
    """A pyramid set out in the Planning Phase: pointing a direction (a movement) or upright (a block)."""

    size: Size
    direction: Direction | None  # None: standing upright, a block

    @property
    def is_block(self) -> bool:
        return self.direction is None

    def __str__(self) -> str:
        return self.size.letter + (self.direction.value if self.direction else "U")

    @classmethod
    def parse(cls, text: str) -> Planned:
        if len(text) != 2 or text[0] not in "SML" or text[1] not in "NESWU":
            raise InvalidActionError(f"bad planned pyramid {text!r} (expected size S/M/L then N/E/S/W or U, e.g. LN)")
        return cls(Size.parse(text[0]), None if text[1] == "U" else Direction(text[1]))


def _sort_key(p: Planned) -> tuple[int, int]:
    return (-p.size, 4 if p.direction is None else CARDINALS.index(p.direction))


ALL_PLANNED = tuple(sorted((Planned(s, d) for s in SIZES for d in (*CARDINALS, None)), key=_sort_key))


# --- actions ------------------------------------------------------------------------------

@dataclass(frozen=True, slots=True)
class Bid:
    """Secret bid for The Edge: the pieces hidden in hand, as counts (small, medium, large)."""

    player: int
    pieces: Counts

    @property
    def pips(self) -> int:
        s, m, l = self.pieces
        return s + 2 * m + 3 * l

    def __str__(self) -> str:
        s, m, l = self.pieces
        return f"{seat_name(self.player)} bid {'L' * l + 'M' * m + 'S' * s or '-'}"


@dataclass(frozen=True, slots=True)
class EdgeDraw:
    """Chance: the random pick among gladiators tied for the high bid."""

    winner: int
    player: None = None

    def __str__(self) -> str:
        return f"edge {seat_name(self.winner)}"


@dataclass(frozen=True, slots=True)
class PlaceBomb:
    player: int
    square: str

    def __str__(self) -> str:
        return f"{seat_name(self.player)} bomb {self.square}"


@dataclass(frozen=True, slots=True)
class Enter:
    player: int
    square: str

    def __str__(self) -> str:
        return f"{seat_name(self.player)} enter {self.square}"


@dataclass(frozen=True, slots=True)
class Plan:
    """Secret choice of the round's pyramids, in canonical order (largest first)."""

    player: int
    pyramids: tuple[Planned, ...]

    def __str__(self) -> str:
        return f"{seat_name(self.player)} plan {' '.join(map(str, self.pyramids)) or '-'}"


@dataclass(frozen=True, slots=True)
class Move:
    player: int
    size: Size
    direction: Direction

    def __str__(self) -> str:
        return f"{seat_name(self.player)} move {self.size.letter}{self.direction.value}"


@dataclass(frozen=True, slots=True)
class Block:
    player: int
    size: Size
    square: str

    def __str__(self) -> str:
        return f"{seat_name(self.player)} block {self.size.letter} {self.square}"


@dataclass(frozen=True, slots=True)
class Forfeit:
    """The planned block cannot be placed (no empty orthogonal neighbour) and nothing else is left."""

    player: int
    size: Size

    def __str__(self) -> str:
        return f"{seat_name(self.player)} forfeit {self.size.letter}"


@dataclass(frozen=True, slots=True)
class Pay:
    """"Your stash is your life": one point of damage paid with a pyramid removed from the game,
    from the stash (`planned` None) or a planned pyramid still in hand."""

    player: int
    size: Size
    planned: Planned | None = None

    def __str__(self) -> str:
        return f"{seat_name(self.player)} pay {self.planned if self.planned else self.size.letter}"


IcebombAction = Bid | EdgeDraw | PlaceBomb | Enter | Plan | Move | Block | Forfeit | Pay


def _square(text: str) -> str:
    t = text.lower()
    if len(t) < 2 or not ("a" <= t[0] <= "z") or not t[1:].isdigit() or t[1] == "0":
        raise InvalidActionError(f"bad square {text!r} (expected a file letter and rank, e.g. c4)")
    return t


def parse_action(text: str) -> IcebombAction:
    words = text.split()
    if len(words) == 2 and words[0] == "edge":
        return EdgeDraw(parse_seat(words[1]))
    if len(words) < 2:
        raise InvalidActionError(f"incomplete Icebomb Arena action {text!r}")
    player, verb, args = parse_seat(words[0]), words[1], words[2:]
    try:
        if verb == "bid" and len(args) == 1:
            letters = "" if args[0] == "-" else args[0]
            if not letters and args[0] != "-" or any(ch not in "SML" for ch in letters):
                raise InvalidActionError(f"bad bid {args[0]!r} (expected pieces as letters, e.g. LMS, or -)")
            return Bid(player, (letters.count("S"), letters.count("M"), letters.count("L")))
        if verb == "bomb" and len(args) == 1:
            return PlaceBomb(player, _square(args[0]))
        if verb == "enter" and len(args) == 1:
            return Enter(player, _square(args[0]))
        if verb == "plan" and len(args) >= 1:
            # Any order is accepted; the action keeps the canonical one (largest first, then N E S W U).
            pyramids = () if args == ["-"] else tuple(sorted((Planned.parse(a) for a in args), key=_sort_key))
            return Plan(player, pyramids)
        if verb == "move" and len(args) == 1:
            planned = Planned.parse(args[0])
            if planned.direction is None:
                raise InvalidActionError(f"{text!r}: an upright pyramid is a block, not a move")
            return Move(player, planned.size, planned.direction)
        if verb == "block" and len(args) == 2:
            return Block(player, Size.parse(args[0]), _square(args[1]))
        if verb == "forfeit" and len(args) == 1:
            return Forfeit(player, Size.parse(args[0]))
        if verb == "pay" and len(args) == 1:
            if len(args[0]) == 2:
                planned = Planned.parse(args[0])
                return Pay(player, planned.size, planned)
            return Pay(player, Size.parse(args[0]))
    except ValueError as exc:
        if isinstance(exc, InvalidActionError):
            raise
        raise InvalidActionError(f"bad Icebomb Arena action {text!r}: {exc}") from None
    raise InvalidActionError(f"unknown Icebomb Arena action {text!r}")


# --- legal move tables (cached: they depend only on small counts) --------------------------

@cache
def _bids(stash: Counts, cap: int) -> tuple[Counts, ...]:
    return tuple((s, m, l) for l in range(stash[2] + 1) for m in range(stash[1] + 1)
                 for s in range(stash[0] + 1) if s + 2 * m + 3 * l <= cap)


@cache
def _plans(stash: Counts) -> tuple[tuple[Planned, ...], ...]:
    """Every legal plan from a stash: two pyramids (one if only one is left), at most one upright."""
    total = sum(stash)
    if total == 0:
        return ((),)
    k = min(2, total)
    plans = []
    for combo in combinations_with_replacement(ALL_PLANNED, k):
        if sum(p.is_block for p in combo) > 1:
            continue
        need = [0, 0, 0]
        for p in combo:
            need[p.size - 1] += 1
        if all(need[i] <= stash[i] for i in range(3)):
            plans.append(tuple(sorted(combo, key=_sort_key)))
    return tuple(plans)


@cache
def _bid_actions(p: int, stash: Counts, cap: int) -> tuple[Bid, ...]:
    return tuple(Bid(p, c) for c in _bids(stash, cap))


@cache
def _plan_actions(p: int, stash: Counts) -> tuple[Plan, ...]:
    return tuple(Plan(p, plan) for plan in _plans(stash))


# --- the state --------------------------------------------------------------------------------

@dataclass(frozen=True, slots=True)
class IcebombState(State):
    """A position of Icebomb Arena. Squares are cells of the arena's SquareGrid.

    `hands[p]` holds the pyramids p planned and has not yet used (None while p has not
    committed a plan this round). `queue` is who acts next, in order: the remaining bomb
    layers, gladiators to enter, or the Action Phase's two passes. `life` is used by the
    standard game; in "your stash is your life" life is the pyramids in stash and hand,
    less `owed` (damage not yet paid by choosing the pyramids to remove).
    """

    num_players: int
    variant: str
    phase: Phase
    round: int
    life: tuple[int, ...]
    alive: tuple[bool, ...]
    edge: int | None
    stash: tuple[Counts, ...]
    removed: tuple[Counts, ...]
    gladiators: tuple[int | None, ...]
    bombs: frozenset[int]
    blocks: tuple[tuple[int, int] | None, ...]  # per cell: (owner, size)
    bids: tuple[Bid | None, ...]
    tied: tuple[int, ...]
    hands: tuple[tuple[Planned, ...] | None, ...]
    queue: tuple[int, ...]
    owed: tuple[int, ...]
    after_pay: Phase | None
    ended: Outcome | None

    # --- the interface ---------------------------------------------------------------
    @property
    def game(self) -> Game:
        return ICEBOMB_ARENA

    @property
    def grid(self) -> SquareGrid:
        return square_grid(*arena_shape(self.num_players))

    @property
    def stash_is_life(self) -> bool:
        return self.variant == STASH_IS_LIFE

    def current_player(self) -> int:
        phase = self.phase
        if phase in (Phase.BID, Phase.PLAN):
            return SIMULTANEOUS
        if phase == Phase.EDGE_DRAW:
            return CHANCE
        if phase == Phase.OVER:
            return TERMINAL
        return self.queue[0]

    def players_to_act(self) -> tuple[int, ...]:
        if self.phase == Phase.BID:
            return tuple(p for p in range(self.num_players) if self.bids[p] is None)
        if self.phase == Phase.PLAN:
            return tuple(p for p in range(self.num_players) if self.hands[p] is None)
        return State.players_to_act(self)

    def life_of(self, p: int) -> int:
        if not self.alive[p]:
            return 0
        if self.stash_is_life:
            return sum(self.stash[p]) + len(self.hands[p] or ()) - self.owed[p]
        return self.life[p]

    def legal_actions(self, player: int | None = None) -> list[IcebombAction]:
        phase = self.phase
        if phase == Phase.OVER:
            return []
        if phase == Phase.EDGE_DRAW:
            return [EdgeDraw(p) for p in self.tied] if player is None else []
        seats = self.players_to_act() if player is None else (player,) if player in self.players_to_act() else ()
        actions: list[IcebombAction] = []
        for p in seats:
            actions.extend(self._legal_for(p))
        return actions

    def _legal_for(self, p: int) -> list[IcebombAction]:
        phase, grid = self.phase, self.grid
        if phase == Phase.BID:
            return list(_bid_actions(p, self.stash[p], self._bid_cap(p)))
        if phase == Phase.PLAN:
            return list(_plan_actions(p, self.stash[p]))
        if phase in (Phase.BOMBS, Phase.ENTER):
            occupied = self._occupied()
            make = PlaceBomb if phase == Phase.BOMBS else Enter
            return [make(p, grid.name(c)) for c in grid.cells if c not in occupied]
        if phase == Phase.PAY:
            out: list[IcebombAction] = [Pay(p, s) for s in SIZES if self.stash[p][s - 1]]
            out.extend(Pay(p, q.size, q) for q in dict.fromkeys(self.hands[p] or ()))
            return out
        # Action Phase
        hand = self.hands[p] or ()
        out = []
        for q in dict.fromkeys(hand):
            if q.direction is not None:
                out.append(Move(p, q.size, q.direction))
            else:
                out.extend(Block(p, q.size, grid.name(c)) for c in self._block_squares(p))
        if not out:
            out = [Forfeit(p, q.size) for q in dict.fromkeys(hand)]
        return out

    def is_secret(self, action: IcebombAction) -> bool:
        # Bids are hidden in hand and plans under the hands until everyone reveals.
        return isinstance(action, (Bid, Plan))

    def illegal_reason(self, action: IcebombAction) -> str | None:
        phase, kind = self.phase, type(action)
        if phase == Phase.OVER:
            return "the game is over"
        if kind is EdgeDraw:
            if phase != Phase.EDGE_DRAW:
                return "no tied bid is waiting to be drawn"
            return None if action.winner in self.tied else f"{seat_name(action.winner)} is not among the tied bidders"
        p = action.player
        if not isinstance(p, int) or not 0 <= p < self.num_players:
            return f"there is no seat {seat_name(p) if isinstance(p, int) else repr(p)} with {self.num_players} gladiators"
        if not self.alive[p]:
            return f"{seat_name(p)} is dead"
        if p not in self.players_to_act():
            return f"it is not {seat_name(p)}'s turn ({self.turn_text()} to act in the {phase.value} phase)"
        expected = {Phase.BID: Bid, Phase.PLAN: Plan, Phase.BOMBS: PlaceBomb, Phase.ENTER: Enter,
                    Phase.PAY: Pay, Phase.EDGE_DRAW: EdgeDraw}.get(phase)
        if phase == Phase.ACTION:
            if kind not in (Move, Block, Forfeit):
                return f"the Action Phase needs a move, block or forfeit, not {action}"
            return self._action_reason(action)
        if kind is not expected:
            return f"the {phase.value} phase needs a {expected.__name__.lower()} action, not {action}"
        if kind is Bid:
            if any(action.pieces[i] > self.stash[p][i] for i in range(3)):
                return f"{seat_name(p)} has only {self._stash_text(p)} to bid with"
            cap = self._bid_cap(p)
            return None if action.pips <= cap else f"a bid of {action.pips} would leave no life (at most {cap})"
        if kind is Plan:
            return self._plan_reason(action)
        if kind in (PlaceBomb, Enter):
            if not self.grid.contains(action.square):
                return f"{action.square} is off the {self.grid.files}x{self.grid.ranks} arena"
            cell = self.grid.parse(action.square)
            return None if cell not in self._occupied() else f"{action.square} is not empty"
        # Pay
        if action.planned is None:
            return None if self.stash[p][action.size - 1] else f"{seat_name(p)} has no {action.size.name.lower()} in the stash"
        return None if action.planned in (self.hands[p] or ()) else f"{seat_name(p)} has no {action.planned} in hand"

    def _plan_reason(self, action: Plan) -> str | None:
        p, plan = action.player, action.pyramids
        total = sum(self.stash[p])
        if len(plan) != min(2, total):
            return f"{seat_name(p)} must plan {min(2, total)} pyramid(s), not {len(plan)}"
        if sum(q.is_block for q in plan) > 1:
            return "no more than one pyramid may be a block (upright)"
        need = [0, 0, 0]
        for q in plan:
            need[q.size - 1] += 1
        if any(need[i] > self.stash[p][i] for i in range(3)):
            return f"{seat_name(p)}'s stash has only {self._stash_text(p)}"
        return None

    def _action_reason(self, action: Move | Block | Forfeit) -> str | None:
        p, hand = action.player, self.hands[action.player] or ()
        if type(action) is Move:
            return None if Planned(action.size, action.direction) in hand else \
                f"{seat_name(p)} did not plan {action.size.letter}{action.direction.value} (hand: {_hand_text(hand)})"
        if Planned(action.size, None) not in hand:
            return f"{seat_name(p)} has no {action.size.letter} block in hand (hand: {_hand_text(hand)})"
        free = self._block_squares(p)
        if type(action) is Forfeit:
            if free:
                return f"the block can be placed ({', '.join(map(self.grid.name, free))}): it must be played"
            if any(q.direction is not None for q in hand):
                return "a movement pyramid is always playable: it must be played rather than forfeit"
            return None
        if not self.grid.contains(action.square):
            return f"{action.square} is off the {self.grid.files}x{self.grid.ranks} arena"
        if self.grid.parse(action.square) not in free:
            return f"a block goes on an empty square beside {seat_name(p)} (not diagonal): {action.square} is not one"
        return None

    def chance_outcomes(self) -> list[tuple[EdgeDraw, float]]:
        if self.phase != Phase.EDGE_DRAW:
            return []
        return [(EdgeDraw(p), 1.0 / len(self.tied)) for p in self.tied]

    def outcome(self) -> Outcome | None:
        return self.ended

    # --- applying actions ----------------------------------------------------------------
    def _resolve(self, action: IcebombAction) -> tuple[IcebombState, list[str]]:
        effects: list[str] = []
        kind = type(action)
        if kind is Bid:
            bids = _set(self.bids, action.player, action)
            state = replace(self, bids=bids)
            if all(b is not None or not self.alive[i] for i, b in enumerate(bids)):
                state = state._reveal_bids(effects)
        elif kind is EdgeDraw:
            effects.append(f"drawn among the tied bidders: {seat_name(action.winner)}")
            state = self._award_edge(action.winner, effects)
        elif kind is PlaceBomb:
            cell = self.grid.parse(action.square)
            state = replace(self, bombs=self.bombs | {cell})._advance_setup(effects)
        elif kind is Enter:
            cell = self.grid.parse(action.square)
            state = replace(self, gladiators=_set(self.gladiators, action.player, cell))._advance_setup(effects)
        elif kind is Plan:
            p = action.player
            stash = self.stash[p]
            for q in action.pyramids:
                stash = _add(stash, q.size, -1)
            state = replace(self, stash=_set(self.stash, p, stash), hands=_set(self.hands, p, action.pyramids))
            if all(h is not None for h in state.hands):
                state = state._reveal_plans(effects)
        elif kind is Pay:
            state = self._pay(action, effects)
        else:
            state = self._act(action, effects)
        return state, effects

    def _reveal_bids(self, effects: list[str]) -> IcebombState:
        bids = [b for b in self.bids if b is not None]
        effects.append("bids revealed: " + ", ".join(f"{seat_name(b.player)} {b.pips}" for b in bids))
        high = max(b.pips for b in bids)
        tied = tuple(b.player for b in bids if b.pips == high)
        if len(tied) > 1:
            effects.append(f"{len(tied)} gladiators tie at {high}: The Edge is drawn at random")
            return replace(self, phase=Phase.EDGE_DRAW, tied=tied)
        return self._award_edge(tied[0], effects)

    def _award_edge(self, winner: int, effects: list[str]) -> IcebombState:
        cost = self.bids[winner].pips
        effects.append(f"{seat_name(winner)} takes The Edge for {cost} life" if cost else
                       f"{seat_name(winner)} takes The Edge for nothing")
        state = replace(self, edge=winner, tied=(), bids=(None,) * self.num_players,
                        phase=Phase.BOMBS, queue=self._clockwise_from(winner) * bombs_each(self.num_players))
        if cost:
            state = state._damage(winner, cost, effects)
        return state._after_damage(effects, self.alive)

    def _advance_setup(self, effects: list[str]) -> IcebombState:
        queue = self.queue[1:]
        if queue:
            return replace(self, queue=queue)
        if self.phase == Phase.BOMBS:
            return replace(self, phase=Phase.ENTER, queue=self._clockwise_from(self.edge))
        return self._start_round(effects, first=True)

    def _start_round(self, effects: list[str], first: bool = False) -> IcebombState:
        living = [p for p in range(self.num_players) if self.alive[p]]
        if not any(sum(self.stash[p]) for p in living):
            effects.append("no living gladiator has a pyramid to plan with: the game ends in a tie")
            return replace(self, phase=Phase.OVER, queue=(), ended=Outcome("stalemate", tuple(living)))
        hands = tuple((() if sum(self.stash[p]) == 0 else None) if self.alive[p] else () for p in range(self.num_players))
        return replace(self, phase=Phase.PLAN, round=1 if first else self.round + 1, hands=hands, queue=())

    def _reveal_plans(self, effects: list[str]) -> IcebombState:
        effects.append("plans revealed: " + ", ".join(
            f"{seat_name(p)} {_hand_text(h)}" for p, h in enumerate(self.hands) if self.alive[p]))
        order = self._clockwise_from(self.edge)
        state = replace(self, phase=Phase.ACTION, queue=order + order)
        return state._skip_idle(effects)

    def _skip_idle(self, effects: list[str]) -> IcebombState:
        """Drops from the front of the Action Phase queue anyone dead or with nothing in hand;
        starts the next round when the queue runs out."""
        queue = self.queue
        while queue and not (self.alive[queue[0]] and self.hands[queue[0]]):
            queue = queue[1:]
        if queue:
            return replace(self, queue=queue) if queue is not self.queue else self
        hands = tuple(() for _ in range(self.num_players))
        return replace(self, queue=(), hands=hands)._start_round(effects)

    def _act(self, action: Move | Block | Forfeit, effects: list[str]) -> IcebombState:
        p = action.player
        planned = Planned(action.size, action.direction if type(action) is Move else None)
        hand = list(self.hands[p])
        hand.remove(planned)
        state = replace(self, hands=_set(self.hands, p, tuple(hand)), queue=self.queue[1:])
        if type(action) is Forfeit:
            effects.append(f"{seat_name(p)} cannot place the {action.size.name.lower()} block: action forfeit")
            state = replace(state, stash=_set(state.stash, p, _add(state.stash[p], action.size)))
        elif type(action) is Block:
            cell = self.grid.parse(action.square)
            effects.append(f"{seat_name(p)} blocks {action.square} with a {action.size.name.lower()}")
            state = replace(state, blocks=_set(state.blocks, cell, (p, int(action.size))))
        else:
            # The movement pyramid is back in the stash at once (FAQ), in time to replace a shrinking block.
            state = replace(state, stash=_set(state.stash, p, _add(state.stash[p], action.size)))
            state, alive_before = state._walk(p, action.direction, int(action.size), effects)
            return state._after_damage(effects, alive_before)
        return state._after_damage(effects, self.alive)

    def _walk(self, p: int, direction: Direction, steps: int,
              effects: list[str]) -> tuple[IcebombState, tuple[bool, ...]]:
        """Moves gladiator p; also returns who was alive before the last step, since only the
        deaths of one step (a fight) are simultaneous."""
        grid, state = self.grid, self
        start, told = state.gladiators[p], len(effects)
        here, alive_before = start, state.alive
        for _ in range(steps):
            if sum(state.alive) <= 1:
                break  # the game ended with the last death; the rest of the move never happens
            alive_before = state.alive
            here = state.gladiators[p]
            ahead = grid.step(here, direction)
            if ahead is None:
                effects.append(f"{seat_name(p)} is stopped by the arena edge")
                break
            if state.blocks[ahead] is not None:
                effects.append(f"{seat_name(p)} is stopped by a block at {grid.name(ahead)}")
                state = state._bump_block(ahead, effects)
                break
            other = state._gladiator_at(ahead)
            if other is not None:
                beyond = grid.step(ahead, direction)
                if beyond is not None and state.blocks[beyond] is None and state._gladiator_at(beyond) is None:
                    effects.append(f"{seat_name(p)} pushes {seat_name(other)} to {grid.name(beyond)}")
                    state = replace(state, gladiators=_set(state.gladiators, other, beyond))
                    state = state._enter_square(other, beyond, effects)
                else:
                    if beyond is not None and state.blocks[beyond] is not None:
                        effects.append(f"{seat_name(other)} cannot be pushed into the block at {grid.name(beyond)}")
                        state = state._bump_block(beyond, effects)
                    state = state._fight(p, other, effects)
                    break
            state = replace(state, gladiators=_set(state.gladiators, p, ahead))
            here = ahead
            state = state._enter_square(p, ahead, effects)
            if not state.alive[p]:
                break
        end = state.gladiators[p] if state.alive[p] else here
        if end != start:
            effects.insert(told, f"{seat_name(p)} moves {grid.name(start)}-{grid.name(end)}")
        return state, alive_before

    def _enter_square(self, p: int, cell: int, effects: list[str]) -> IcebombState:
        if cell not in self.bombs:
            return self
        effects.append(f"the bomb at {self.grid.name(cell)} explodes under {seat_name(p)}")
        return replace(self, bombs=self.bombs - {cell})._damage(p, 1, effects)

    def _bump_block(self, cell: int, effects: list[str]) -> IcebombState:
        owner, size = self.blocks[cell]
        stash = _add(self.stash[owner], size)  # the bumped block goes back to its owner's stash
        smaller = size - 1
        if smaller and stash[smaller - 1]:
            stash = _add(stash, smaller, -1)
            block = (owner, smaller)
            effects.append(f"{seat_name(owner)}'s block at {self.grid.name(cell)} shrinks to {Size(smaller).name.lower()}")
        else:
            block = None
            effects.append(f"{seat_name(owner)}'s block at {self.grid.name(cell)} is removed")
        return replace(self, stash=_set(self.stash, owner, stash), blocks=_set(self.blocks, cell, block))

    def _fight(self, attacker: int, defender: int, effects: list[str]) -> IcebombState:
        shielded = self.edge == attacker
        effects.append(f"{seat_name(attacker)} fights {seat_name(defender)}"
                       + (" (The Edge spares the attacker)" if shielded else ""))
        state = self._damage(defender, 1, effects)
        if not shielded:
            state = state._damage(attacker, 1, effects)
        if self.edge != attacker:
            effects.append(f"{seat_name(attacker)} takes The Edge")
        return replace(state, edge=attacker)

    def _damage(self, p: int, amount: int, effects: list[str]) -> IcebombState:
        if not self.alive[p]:
            return self
        if self.stash_is_life:
            state = replace(self, owed=_set(self.owed, p, self.owed[p] + amount))
        else:
            state = replace(self, life=_set(self.life, p, self.life[p] - amount))
        effects.append(f"{seat_name(p)} loses {amount} life ({max(state.life_of(p), 0)} left)")
        if state.life_of(p) <= 0:
            state = state._die(p, effects)
        return state

    def _die(self, p: int, effects: list[str]) -> IcebombState:
        effects.append(f"{seat_name(p)} dies")
        stash, removed = self.stash[p], self.removed[p]
        for q in self.hands[p] or ():
            stash = _add(stash, q.size)
        if self.stash_is_life:
            removed = tuple(removed[i] + stash[i] for i in range(3))
            stash = NO_PIECES
        return replace(self, alive=_set(self.alive, p, False), gladiators=_set(self.gladiators, p, None),
                       stash=_set(self.stash, p, stash), removed=_set(self.removed, p, removed),
                       hands=_set(self.hands, p, () if self.hands[p] is not None else None),
                       owed=_set(self.owed, p, 0))

    def _after_damage(self, effects: list[str], alive_before: tuple[bool, ...]) -> IcebombState:
        """Ends the game when one or no gladiator is left; else collects debts or moves on."""
        state = self
        if self.stash_is_life:
            # Placing one's last pyramid as a block also empties stash and hand.
            for p in range(self.num_players):
                if state.alive[p] and state.life_of(p) <= 0:
                    state = state._die(p, effects)
        living = [p for p in range(self.num_players) if state.alive[p]]
        if len(living) <= 1:
            if living:
                effects.append(f"{seat_name(living[0])} is the last gladiator standing")
                ended = Outcome("last gladiator standing", (living[0],))
            else:
                last = tuple(p for p in range(self.num_players) if alive_before[p])
                effects.append("the last gladiators die together: a tie")
                ended = Outcome("tie", last)
            return replace(state, phase=Phase.OVER, queue=(), ended=ended)
        if any(state.owed):
            debtor = next(p for p in range(self.num_players) if state.owed[p])
            return replace(state, after_pay=state.phase, phase=Phase.PAY, queue=(debtor,) + state.queue)
        if state.phase == Phase.ACTION:
            return state._skip_idle(effects)
        return state

    def _pay(self, action: Pay, effects: list[str]) -> IcebombState:
        p = action.player
        if action.planned is None:
            state = replace(self, stash=_set(self.stash, p, _add(self.stash[p], action.size, -1)))
            where = "stash"
        else:
            hand = list(self.hands[p])
            hand.remove(action.planned)
            state = replace(self, hands=_set(self.hands, p, tuple(hand)))
            where = f"hand ({action.planned})"
        effects.append(f"{seat_name(p)} removes a {action.size.name.lower()} from the game, from the {where}")
        state = replace(state, removed=_set(state.removed, p, _add(state.removed[p], action.size)),
                        owed=_set(state.owed, p, state.owed[p] - 1))
        if any(state.owed):
            debtor = next(i for i in range(self.num_players) if state.owed[i])
            return replace(state, queue=(debtor,) + state.queue[1:])
        state = replace(state, phase=state.after_pay, after_pay=None, queue=state.queue[1:])
        if state.phase == Phase.ACTION:
            return state._skip_idle(effects)
        return state

    # --- helpers ---------------------------------------------------------------------------
    def _bid_cap(self, p: int) -> int:
        # Ruling: a bid may not cost all of a gladiator's life (see docs/rulings/icebomb-arena.md).
        return self.life_of(p) - 1

    def _clockwise_from(self, seat: int) -> tuple[int, ...]:
        """Living seats in clockwise order starting with `seat`, or the first living one after it."""
        n = self.num_players
        return tuple(s for s in ((seat + i) % n for i in range(n)) if self.alive[s])

    def action_order(self) -> list[int]:
        """Who acts in the rest of this Action Phase, in order, skipping the dead and
        anyone whose hand will be empty by their turn."""
        left = {p: len(self.hands[p] or ()) for p in range(self.num_players) if self.alive[p]}
        order = []
        for p in self.queue if self.phase == Phase.ACTION else ():
            if left.get(p, 0) > 0:
                left[p] -= 1
                order.append(p)
        return order

    def _occupied(self) -> set[int]:
        cells = set(self.bombs)
        cells.update(c for c in self.gladiators if c is not None)
        cells.update(c for c, b in enumerate(self.blocks) if b is not None)
        return cells

    def _gladiator_at(self, cell: int) -> int | None:
        for p, c in enumerate(self.gladiators):
            if c == cell:
                return p
        return None

    def _block_squares(self, p: int) -> list[int]:
        here = self.gladiators[p]
        if here is None:
            return []
        return [c for c in self.grid.neighbours(here, CARDINALS)
                if self.blocks[c] is None and c not in self.bombs and c not in self.gladiators]

    def _stash_text(self, p: int) -> str:
        s, m, l = self.stash[p]
        return f"{l} large, {m} medium, {s} small"

    # --- facts and checks ----------------------------------------------------------------------
    def invariant_violations(self) -> list[str]:
        problems = []
        n, grid = self.num_players, self.grid
        on_board: list[list[int]] = [[0, 0, 0] for _ in range(n)]
        for b in self.blocks:
            if b is not None:
                on_board[b[0]][b[1] - 1] += 1
        for p in range(n):
            in_hand = [0, 0, 0]
            for q in self.hands[p] or ():
                in_hand[q.size - 1] += 1
            for i in range(3):
                total = self.stash[p][i] + in_hand[i] + on_board[p][i] + self.removed[p][i]
                if total != PIECES_PER_SIZE_IN_STASH or self.stash[p][i] < 0:
                    problems.append(f"{seat_name(p)} has {total} {SIZES[i].name.lower()} pyramids accounted for")
            if not self.stash_is_life and not 0 <= self.life[p] <= START_LIFE:
                problems.append(f"{seat_name(p)} has life {self.life[p]}")
            if self.alive[p] and self.round > 0 and self.gladiators[p] is None:
                problems.append(f"{seat_name(p)} is alive but not in the arena")
            if not self.alive[p] and self.gladiators[p] is not None:
                problems.append(f"{seat_name(p)} is dead but still in the arena")
        cells = [c for c in self.gladiators if c is not None]
        blocked = [c for c, b in enumerate(self.blocks) if b is not None]
        everything = cells + blocked + list(self.bombs)
        if len(everything) != len(set(everything)):
            problems.append("two things share a square")
        if any(not 0 <= c < grid.size for c in everything):
            problems.append("something is off the arena")
        if len(self.blocks) != grid.size:
            problems.append("block table does not match the arena")
        if self.phase == Phase.OVER and self.ended is None:
            problems.append("game over without an outcome")
        return problems

    def summary(self) -> dict[str, Any]:
        grid = self.grid
        secret_phase = self.phase in (Phase.BID, Phase.PLAN)
        players = []
        for p in range(self.num_players):
            hand = self.hands[p]
            players.append({
                "seat": seat_name(p),
                "life": self.life_of(p),
                "alive": self.alive[p],
                "edge": self.edge == p,
                "square": None if self.gladiators[p] is None else grid.name(self.gladiators[p]),
                "stash": {"small": self.stash[p][0], "medium": self.stash[p][1], "large": self.stash[p][2]},
                "committed": (self.bids[p] is not None) if self.phase == Phase.BID else (hand is not None),
                "hand": None if (secret_phase or hand is None) else [str(q) for q in hand],
                "removed": sum(self.removed[p]),
            })
        return {
            "game": ICEBOMB_ARENA.name,
            "variant": self.variant,
            "arena": f"{grid.files}x{grid.ranks}",
            "round": self.round,
            "phase": self.phase.value,
            "to_act": self.turn_text(),
            "order": [seat_name(p) for p in self.action_order()],
            "edge": None if self.edge is None else seat_name(self.edge),
            "players": players,
            "bombs": sorted(grid.name(c) for c in self.bombs),
            "blocks": [{"square": grid.name(c), "owner": seat_name(b[0]), "size": Size(b[1]).letter}
                       for c, b in enumerate(self.blocks) if b is not None],
            "outcome": None if self.ended is None else self.ended.to_json(),
        }

    def __str__(self) -> str:
        grid = self.grid
        lines = [f"Icebomb Arena ({self.variant}, {grid.files}x{grid.ranks}), round {self.round}, "
                 f"{self.phase.value} phase: {self.turn_text()}"]
        marks = {c: "*" for c in self.bombs}
        for c, b in enumerate(self.blocks):
            if b is not None:
                marks[c] = Size(b[1]).letter
        for p, c in enumerate(self.gladiators):
            if c is not None:
                marks[c] = str((p + 1) % 10)
        for r in reversed(range(grid.ranks)):
            lines.append(f"{r + 1:>2} " + " ".join(marks.get(grid.cell(f, r), ".") for f in range(grid.files)))
        lines.append("   " + " ".join(chr(ord("a") + f) for f in range(grid.files)))
        lines.append("   (1-9: gladiators, *: bombs, S/M/L: blocks)")
        for p in range(self.num_players):
            where = "dead" if not self.alive[p] else (grid.name(self.gladiators[p]) if self.gladiators[p] is not None else "-")
            edge = "  The Edge" if self.edge == p else ""
            lines.append(f"{seat_name(p)}: life {self.life_of(p):>2}  at {where:4}  stash "
                         f"L{self.stash[p][2]} M{self.stash[p][1]} S{self.stash[p][0]}{edge}")
        if self.ended is not None:
            winners = ", ".join(seat_name(p) for p in self.ended.winners)
            lines.append(f"Game over ({self.ended.termination}): {winners}")
        return "\n".join(lines)

    def to_json(self) -> dict[str, Any]:
        grid = self.grid
        return {
            "game": ICEBOMB_ARENA.name,
            "players": self.num_players,
            "variant": self.variant,
            "phase": self.phase.value,
            "round": self.round,
            "life": list(self.life),
            "alive": list(self.alive),
            "edge": self.edge,
            "stash": [list(c) for c in self.stash],
            "removed": [list(c) for c in self.removed],
            "gladiators": [None if c is None else grid.name(c) for c in self.gladiators],
            "bombs": sorted(grid.name(c) for c in self.bombs),
            "blocks": [[grid.name(c), b[0], b[1]] for c, b in enumerate(self.blocks) if b is not None],
            "bids": [None if b is None else str(b) for b in self.bids],
            "tied": list(self.tied),
            "hands": [None if h is None else [str(q) for q in h] for h in self.hands],
            "queue": list(self.queue),
            "owed": list(self.owed),
            "after_pay": None if self.after_pay is None else self.after_pay.value,
            "ended": None if self.ended is None else self.ended.to_json(),
        }


def _set(values: tuple, index: int, value: Any) -> tuple:
    return values[:index] + (value,) + values[index + 1:]


def _hand_text(hand: tuple[Planned, ...] | None) -> str:
    return " ".join(map(str, hand)) if hand else "-"


# --- the game -------------------------------------------------------------------------------

class IcebombArena(Game):
    name: ClassVar[str] = "icebomb-arena"
    title: ClassVar[str] = "Icebomb Arena"
    min_players: ClassVar[int] = 2
    max_players: ClassVar[int] = 10  # one stash colour each, of the ten standard colours
    variants: ClassVar[Mapping[str, str]] = {
        "standard": "ten life each; 8x8 arena for 4+, 6x6 with 3 bombs each for 3, 8x4 with 4 bombs each for 2",
        STASH_IS_LIFE: "no life counter: damage removes pyramids from the stash; an empty stash dies",
    }
    playout_limit: ClassVar[int] = 20000

    def new_initial_state(self, num_players: int, variant: str = "standard",
                          options: Mapping[str, Any] | None = None) -> IcebombState:
        self.check_player_count(num_players)
        self.check_variant(variant)
        if options:
            raise GameError(f"Icebomb Arena takes no options (got {', '.join(options)})")
        n = num_players
        return IcebombState(
            num_players=n, variant=variant, phase=Phase.BID, round=0,
            life=(0 if variant == STASH_IS_LIFE else START_LIFE,) * n, alive=(True,) * n, edge=None,
            stash=(FULL_STASH,) * n, removed=(NO_PIECES,) * n, gladiators=(None,) * n, bombs=frozenset(),
            blocks=(None,) * square_grid(*arena_shape(n)).size, bids=(None,) * n, tied=(),
            hands=((),) * n, queue=(), owed=(0,) * n, after_pay=None, ended=None)

    def position(self, num_players: int, gladiators: Mapping[int, str], *, edge: int,
                 bombs: tuple[str, ...] = (), blocks: Mapping[str, tuple[int, str]] | None = None,
                 life: Mapping[int, int] | None = None, round: int = 1,
                 variant: str = "standard") -> IcebombState:
        """A position at the start of a round's Planning Phase, as a table shows it.

        `gladiators` maps living seats (0-based) to squares; seats not named are dead.
        `blocks` maps squares to (owner seat, size letter). Stashes hold whatever is not
        in the arena. This is how a position read off the table (or a test) enters the engine.
        """
        state = self.new_initial_state(num_players, variant)
        grid = state.grid
        blocks = blocks or {}
        board: list[tuple[int, int] | None] = [None] * grid.size
        stash = [list(FULL_STASH) for _ in range(num_players)]
        for square, (owner, size) in blocks.items():
            pips = Size.parse(size)
            board[grid.parse(square)] = (owner, int(pips))
            stash[owner][pips - 1] -= 1
            if stash[owner][pips - 1] < 0:
                raise GameError(f"{seat_name(owner)} has more than {PIECES_PER_SIZE_IN_STASH} {pips.name.lower()} blocks")
        alive = tuple(p in gladiators for p in range(num_players))
        lives = tuple((life or {}).get(p, START_LIFE) if alive[p] else 0 for p in range(num_players))
        if variant == STASH_IS_LIFE:
            lives = (0,) * num_players
        state = replace(
            state, phase=Phase.ACTION, round=round - 1, alive=alive, life=lives, edge=edge,
            stash=tuple((s[0], s[1], s[2]) for s in stash),
            gladiators=tuple(grid.parse(gladiators[p]) if alive[p] else None for p in range(num_players)),
            bombs=frozenset(grid.parse(b) for b in bombs), blocks=tuple(board))
        problems = state.invariant_violations()
        if problems:
            raise GameError("impossible position: " + "; ".join(problems))
        return state._start_round([])

    def parse_action(self, text: str) -> IcebombAction:
        return parse_action(text)

    def state_from_json(self, data: Mapping[str, Any]) -> IcebombState:
        try:
            n = int(data["players"])
            grid = square_grid(*arena_shape(n))
            blocks: list[tuple[int, int] | None] = [None] * grid.size
            for square, owner, size in data["blocks"]:
                blocks[grid.parse(square)] = (int(owner), int(size))

            def action(text: str | None, kind: type) -> Any:
                if text is None:
                    return None
                parsed = parse_action(text)
                if type(parsed) is not kind:
                    raise GameError(f"expected a {kind.__name__} in state data, got {text!r}")
                return parsed

            def counts(c: list[int]) -> Counts:
                if len(c) != 3:
                    raise GameError(f"piece counts need three numbers, got {c!r}")
                return (int(c[0]), int(c[1]), int(c[2]))

            ended = data["ended"]
            state = IcebombState(
                num_players=n, variant=str(data["variant"]), phase=Phase(data["phase"]), round=int(data["round"]),
                life=tuple(int(x) for x in data["life"]), alive=tuple(bool(x) for x in data["alive"]),
                edge=None if data["edge"] is None else int(data["edge"]),
                stash=tuple(counts(c) for c in data["stash"]), removed=tuple(counts(c) for c in data["removed"]),
                gladiators=tuple(None if s is None else grid.parse(s) for s in data["gladiators"]),
                bombs=frozenset(grid.parse(s) for s in data["bombs"]), blocks=tuple(blocks),
                bids=tuple(action(b, Bid) for b in data["bids"]), tied=tuple(int(x) for x in data["tied"]),
                hands=tuple(None if h is None else tuple(Planned.parse(q) for q in h) for h in data["hands"]),
                queue=tuple(int(x) for x in data["queue"]), owed=tuple(int(x) for x in data["owed"]),
                after_pay=None if data["after_pay"] is None else Phase(data["after_pay"]),
                ended=None if ended is None else Outcome(
                    str(ended["termination"]), tuple(int(x) for x in ended["winners"]), None),
            )
        except (KeyError, TypeError, ValueError) as exc:
            raise GameError(f"bad Icebomb Arena state data: {exc!r}") from None
        self.check_variant(state.variant)
        for name in ("life", "alive", "stash", "removed", "gladiators", "bids", "hands", "owed"):
            if len(getattr(state, name)) != n:
                raise GameError(f"bad Icebomb Arena state data: {name} has {len(getattr(state, name))} entries for {n} players")
        return state


ICEBOMB_ARENA = register(IcebombArena())
