"""Zamboni Wars (Chris Kice, 2006): armoured Zambonis with lasers on the Martian Coasters.

Rules: ../shared/rules/zamboni-wars.txt. Rulings where the text is silent:
docs/rulings/zamboni-wars.md. Board: `companion.boards.coasters`.

The game's shape, as nodes of the shared interface:

    [COVER_ROLL_OFF (chance), with the Treehouse cover rule]
    -> turns, clockwise from P1: MOVE_ROLL (chance, d6) -> MOVE (the player's end position)
       -> [AIM (fire or hold), when the laser points at a Zamboni in range]
       -> [LASER_ROLL (chance, d6)]

A move is written as where the Zamboni ends (square, facing and, when it pushed cover,
where the cover dice end), which is what the camera sees; any path that spends exactly
the roll and ends there makes it legal. `plan_moves` lists every such end position
with one path for it and the shots it would allow.

Action text forms (seats P1.., squares named from a1, facings N NE E SE S SW W NW):

    cover P2          cover P1 P3      (chance: the roll-off for the cover dice)
    roll 4                             (chance: the movement die, or the laser's hit die)
    P1 move c3 E      P1 move a4 N cover a5
    P1 fire P2        P1 hold
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from enum import Enum
from itertools import combinations
from math import comb
from typing import Any, ClassVar

from companion.boards.coasters import QUADRANTS, CoasterBoard, Quadrant, coaster_board, martian_coasters
from companion.boards.square import Cell, square_grid
from companion.games import register
from companion.games.base import (
    CHANCE,
    TERMINAL,
    Game,
    GameError,
    InvalidActionError,
    Outcome,
    State,
    parse_seat,
    seat_name,
    split_words,
)
from companion.pieces import ALL_DIRECTIONS, Colour, Direction, Pyramid, Size

DIE_FACES = (1, 2, 3, 4, 5, 6)
LASER_RANGE = 4
FULL_ARMOUR = 3
#: The lowest die roll that hits, by how many pieces the target has left.
HIT_ON = {3: 4, 2: 5, 1: 6}
COVER = "cover"
WARP = "warp"
COVER_AND_WARP = "cover-warp"
_GRID = square_grid(6, 6)

#: Which coaster each seat drives from, by table size (clockwise from the a1 corner).
HOME_COASTERS: Mapping[int, tuple[Quadrant, ...]] = {
    2: (Quadrant.BOTTOM_LEFT, Quadrant.TOP_RIGHT),
    3: (Quadrant.BOTTOM_LEFT, Quadrant.TOP_LEFT, Quadrant.TOP_RIGHT),
    4: QUADRANTS,
}
#: Pointing clockwise around the board from each coaster's outer corner.
START_FACING: Mapping[Quadrant, Direction] = {
    Quadrant.BOTTOM_LEFT: Direction.N,
    Quadrant.TOP_LEFT: Direction.E,
    Quadrant.TOP_RIGHT: Direction.S,
    Quadrant.BOTTOM_RIGHT: Direction.W,
}


def hit_chance(armour: int) -> float:
    """Probability that one laser shot hits a Zamboni with `armour` pieces left."""
    return (7 - HIT_ON[armour]) / 6


def cover_dice_for(num_players: int) -> int:
    """One Treehouse die for every two players (rounded down)."""
    return num_players // 2


class Phase(str, Enum):
    COVER_ROLL_OFF = "cover-roll-off"
    MOVE_ROLL = "move-roll"
    MOVE = "move"
    AIM = "aim"
    LASER_ROLL = "laser-roll"
    OVER = "over"


@dataclass(frozen=True, slots=True)
class Zamboni:
    """A nest of one player's pieces lying flat: where it is, where it points, pieces left."""

    cell: Cell
    facing: Direction
    armour: int = FULL_ARMOUR

    @property
    def sizes(self) -> tuple[Size, ...]:
        """The pieces left, largest (outermost) first: a hit takes the first."""
        return tuple(Size(s) for s in range(self.armour, 0, -1))


# --- actions --------------------------------------------------------------------------------

@dataclass(frozen=True, slots=True)
class CoverRollOff:
    """Chance: whose coasters get the cover dice (the highest rolls of the roll-off)."""

    seats: tuple[int, ...]
    player: None = None

    def __str__(self) -> str:
        return "cover " + " ".join(seat_name(s) for s in self.seats)


@dataclass(frozen=True, slots=True)
class Roll:
    """Chance: the six-sided die, read as movement points or as the laser's hit roll."""

    value: int
    player: None = None

    def __str__(self) -> str:
        return f"roll {self.value}"


@dataclass(frozen=True, slots=True)
class Move:
    """A whole movement, named by where it ends.

    `cover` lists where the cover dice stand afterwards, and is empty when no die was pushed.
    """

    player: int
    cell: Cell
    facing: Direction
    cover: tuple[Cell, ...] = ()  # sorted

    def __str__(self) -> str:
        text = f"{seat_name(self.player)} move {_GRID.name(self.cell)} {self.facing.value}"
        if self.cover:
            text += " cover " + " ".join(_GRID.name(c) for c in self.cover)
        return text


@dataclass(frozen=True, slots=True)
class Fire:
    player: int
    target: int

    def __str__(self) -> str:
        return f"{seat_name(self.player)} fire {seat_name(self.target)}"


@dataclass(frozen=True, slots=True)
class Hold:
    """Not firing although a target is in the sights."""

    player: int

    def __str__(self) -> str:
        return f"{seat_name(self.player)} hold"


ZamboniAction = CoverRollOff | Roll | Move | Fire | Hold
_DIE_OUTCOMES: tuple[tuple[Roll, float], ...] = tuple((Roll(v), 1 / 6) for v in DIE_FACES)

# Legal-move lists are rebuilt every turn; sharing the (immutable) Move values keeps that cheap.
_MOVES: dict[tuple[int, tuple[Cell, ...]], list[Move]] = {}


def _moves_table(player: int, cover: tuple[Cell, ...]) -> list[Move]:
    """Every Move of `player` with the cover written as `cover`, indexed by facing * 36 + cell."""
    key = (player, cover)
    found = _MOVES.get(key)
    if found is None:
        if len(_MOVES) > 2_000:  # one table per cover position pushed to; keep them bounded
            _MOVES.clear()
        found = _MOVES[key] = [Move(player, cell, facing, cover) for facing in ALL_DIRECTIONS for cell in _GRID.cells]
    return found


def _cell(text: str, action: str) -> Cell:
    try:
        return _GRID.parse(text)
    except ValueError as exc:
        raise InvalidActionError(f"{exc} in {action!r}") from None


def _direction(text: str, action: str) -> Direction:
    try:
        return Direction.parse(text)
    except ValueError as exc:
        raise InvalidActionError(f"{exc} in {action!r}") from None


def parse_action(text: str) -> ZamboniAction:
    """Reads any Zamboni Wars action from its text form; InvalidActionError naming the text."""
    words = split_words(text, 2)
    head = words[0].lower()
    if head == "roll":
        if len(words) != 2 or words[1] not in ("1", "2", "3", "4", "5", "6"):
            raise InvalidActionError(f"bad roll {text!r} (expected 'roll N' with N from 1 to 6)")
        return Roll(int(words[1]))
    if head == "cover":
        seats = tuple(parse_seat(w) for w in words[1:])
        if list(seats) != sorted(set(seats)):
            raise InvalidActionError(f"bad cover roll-off {text!r} (name each seat once, in seat order)")
        return CoverRollOff(seats)
    player = parse_seat(words[0])
    verb = words[1].lower()
    if verb == "move":
        if len(words) < 4 or (len(words) > 4 and (words[4].lower() != "cover" or len(words) == 5)):
            raise InvalidActionError(f"bad move {text!r} (expected e.g. 'P1 move c3 E' or 'P1 move a4 N cover a5')")
        cover = tuple(sorted(_cell(w, text) for w in words[5:]))
        if len(set(cover)) != len(cover):
            raise InvalidActionError(f"bad move {text!r}: a square named twice for the cover")
        return Move(player, _cell(words[2], text), _direction(words[3], text), cover)
    if verb == "fire" and len(words) == 3:
        return Fire(player, parse_seat(words[2]))
    if verb == "hold" and len(words) == 2:
        return Hold(player)
    raise InvalidActionError(f"unknown action {text!r} (expected move, fire or hold after the seat)")


# --- movement as bit sets ----------------------------------------------------------------------
#
# A set of cells is an int with bit `cell` set. One movement layer holds, for every way the
# cover dice can stand, eight such sets: the squares reachable facing each direction having
# spent exactly k points. Stepping a whole layer costs a few dozen integer operations, which
# is what makes exact enumeration of a roll of 6 take well under a millisecond. A step is a
# shift (one rank = 6 bits on the 6x6 grid); the exit masks hold only squares whose step stays
# on the board, so a shift never wraps into the next row.

_FACING_INDEX = {d: i for i, d in enumerate(ALL_DIRECTIONS)}
_SHIFT = {Direction.N: 6, Direction.S: -6, Direction.E: 1, Direction.W: -1}
Layer = dict[tuple[Cell, ...], list[int]]


def _bits(cells) -> int:
    mask = 0
    for c in cells:
        mask |= 1 << c
    return mask


def _cells_of(mask: int) -> list[Cell]:
    out = []
    while mask:
        low = mask & -mask
        out.append(low.bit_length() - 1)
        mask ^= low
    return out


@dataclass(frozen=True)
class _BoardTables:
    board: CoasterBoard
    exit_masks: dict[Direction, int]  # cells an arrow lets a piece leave towards each cardinal direction
    centre_mask: int


_TABLES: dict[CoasterBoard, _BoardTables] = {}


def _tables(board: CoasterBoard) -> _BoardTables:
    found = _TABLES.get(board)
    if found is None:
        exit_masks = {d: _bits(c for c in board.grid.cells if board.allows(c, d)) for d in _SHIFT}
        found = _TABLES[board] = _BoardTables(board, exit_masks, _bits(board.centres))
    return found


def _push_target(board: CoasterBoard, die: Cell, direction: Direction, blockers: int,
                 cover: tuple[Cell, ...]) -> Cell | None:
    """Where a cover die goes when pushed, or None when it cannot move that way (it is stuck)."""
    if not board.allows(die, direction):
        return None
    to = board.grid.step(die, direction)
    if to is None or blockers >> to & 1 or to in cover:
        return None
    return to


def _next_layer(tables: _BoardTables, layer: Layer, blockers: int, warp: bool) -> Layer:
    board = tables.board
    out: Layer = {}
    for cover, masks in layer.items():
        cover_mask = _bits(cover)
        new = out.setdefault(cover, [0] * 8)
        # Turning: to any facing other than the current one, on the spot. A square reached
        # facing two or more ways can turn to every facing; otherwise to all but its own.
        seen = several = 0
        for m in masks:
            several |= seen & m
            seen |= m
        for i, m in enumerate(masks):
            new[i] |= (seen & ~m) | several
        for direction, shift_by in _SHIFT.items():
            i = _FACING_INDEX[direction]
            source = masks[i] & tables.exit_masks[direction]
            if not source:
                continue
            entered = (source << shift_by if shift_by > 0 else source >> -shift_by) & ~blockers
            new[i] |= entered & ~cover_mask
            for die in cover:
                if entered >> die & 1:
                    to = _push_target(board, die, direction, blockers, cover)
                    if to is not None:
                        pushed = tuple(sorted(to if c == die else c for c in cover))
                        out.setdefault(pushed, [0] * 8)[i] |= 1 << die
        if warp:
            free_centres = tables.centre_mask & ~blockers & ~cover_mask
            for i in range(8):
                on_centre = masks[i] & tables.centre_mask
                if on_centre:
                    # From a lone centre every other free centre; from two or more, all of them.
                    new[i] |= free_centres & ~on_centre if on_centre & (on_centre - 1) == 0 else free_centres
    return out


# --- planning (pure functions) ---------------------------------------------------------------

@dataclass(frozen=True, slots=True)
class Step:
    """One movement point spent: where the Zamboni is after it, and any cover die it pushed."""

    kind: str  # "forward", "turn" or "warp"
    cell: Cell
    facing: Direction
    pushed: tuple[Cell, Cell] | None = None  # a cover die's (from, to)

    def __str__(self) -> str:
        if self.kind == "turn":
            return f"turn {self.facing.value}"
        if self.kind == "warp":
            return f"warp {_GRID.name(self.cell)}"
        text = _GRID.name(self.cell)
        if self.pushed is not None:
            text += f" (push {_GRID.name(self.pushed[0])}>{_GRID.name(self.pushed[1])})"
        return text


@dataclass(frozen=True, slots=True)
class Target:
    """A Zamboni in the sights: who, where, how far, and the chance of a hit."""

    seat: int
    cell: Cell
    distance: int
    armour: int

    @property
    def needs(self) -> int:
        return HIT_ON[self.armour]

    @property
    def chance(self) -> float:
        return hit_chance(self.armour)

    def to_json(self) -> dict[str, Any]:
        return {"seat": seat_name(self.seat), "square": _GRID.name(self.cell), "distance": self.distance,
                "armour": self.armour, "needs": self.needs, "chance": self.chance}


@dataclass(frozen=True, slots=True)
class MovePlan:
    """One reachable end position for a roll, a path that reaches it, and the shots from there."""

    cell: Cell
    facing: Direction
    cover: tuple[Cell, ...]
    path: tuple[Step, ...]
    targets: tuple[Target, ...]

    def action(self, player: int, cover_before: tuple[Cell, ...]) -> Move:
        return Move(player, self.cell, self.facing, self.cover if self.cover != cover_before else ())

    @property
    def path_text(self) -> str:
        return ", ".join(map(str, self.path))

    def to_json(self) -> dict[str, Any]:
        return {"square": _GRID.name(self.cell), "facing": self.facing.value,
                "cover": [_GRID.name(c) for c in self.cover], "path": [str(s) for s in self.path],
                "targets": [t.to_json() for t in self.targets]}


@dataclass(frozen=True)
class Reach:
    """Every movement layer of one Zamboni's roll: layer k is what exactly k points reach."""

    board: CoasterBoard
    start: Zamboni
    roll: int
    blockers: int
    cover: tuple[Cell, ...]
    warp: bool
    layers: tuple[Layer, ...]

    def ends(self) -> list[tuple[Cell, Direction, tuple[Cell, ...]]]:
        """(square, facing, cover afterwards) for every end position, sorted."""
        out = []
        for cover, masks in self.layers[-1].items():
            for i, mask in enumerate(masks):
                out.extend((c, ALL_DIRECTIONS[i], cover) for c in _cells_of(mask))
        out.sort(key=lambda e: (e[0], _FACING_INDEX[e[1]], e[2]))
        return out

    def reaches(self, cell: Cell, facing: Direction, cover: tuple[Cell, ...]) -> bool:
        masks = self.layers[-1].get(cover)
        return masks is not None and bool(masks[_FACING_INDEX[facing]] >> cell & 1)

    def _had(self, depth: int, cell: Cell, facing: Direction, cover: tuple[Cell, ...]) -> bool:
        masks = self.layers[depth].get(cover)
        return masks is not None and bool(masks[_FACING_INDEX[facing]] >> cell & 1)

    def path_to(self, cell: Cell, facing: Direction, cover: tuple[Cell, ...]) -> tuple[Step, ...]:
        """One path spending exactly the roll; ValueError naming the position when there is none."""
        if not self.reaches(cell, facing, cover):
            raise ValueError(f"{_GRID.name(cell)} facing {facing.value} is not reachable with {self.roll}")
        board, grid = self.board, self.board.grid
        steps: list[Step] = []
        for depth in range(self.roll, 0, -1):
            before = depth - 1
            back = grid.step(cell, facing.opposite) if facing.is_cardinal else None
            step: Step | None = None
            prev: tuple[Cell, Direction, tuple[Cell, ...]] | None = None
            if back is not None and board.allows(back, facing):
                ahead = grid.step(cell, facing)
                if self._had(before, back, facing, cover):
                    step, prev = Step("forward", cell, facing), (back, facing, cover)
                elif ahead is not None and ahead in cover and board.allows(cell, facing):
                    earlier = tuple(sorted(cell if c == ahead else c for c in cover))
                    if self._had(before, back, facing, earlier):
                        step, prev = Step("forward", cell, facing, (cell, ahead)), (back, facing, earlier)
            if step is None:
                for other in ALL_DIRECTIONS:
                    if other is not facing and self._had(before, cell, other, cover):
                        step, prev = Step("turn", cell, facing), (cell, other, cover)
                        break
            if step is None and self.warp and cell in board.centres:
                for centre in board.centres:
                    if centre != cell and self._had(before, centre, facing, cover):
                        step, prev = Step("warp", cell, facing), (centre, facing, cover)
                        break
            if step is None or prev is None:  # the layers guarantee a predecessor
                raise AssertionError(f"no way back from {_GRID.name(cell)} {facing.value} at point {depth}")
            steps.append(step)
            cell, facing, cover = prev
        steps.reverse()
        return tuple(steps)


def reach(board: CoasterBoard, zamboni: Zamboni, roll: int, others: tuple[Cell, ...] = (),
          cover: tuple[Cell, ...] = (), warp: bool = False) -> Reach:
    """Everything a Zamboni can reach spending exactly `roll` points.

    Args:
        board: the coaster layout (its arrows and warp zones).
        zamboni: the moving Zamboni.
        roll: movement points, 1-6 (any positive count works).
        others: squares of the other Zambonis, which block it.
        cover: squares of the cover dice, which it may push.
        warp: whether the Warp Zone rule is in play.
    """
    if roll < 1:
        raise ValueError(f"a roll of {roll} moves nothing (movement points start at 1)")
    tables = _tables(board)
    masks = [0] * 8
    masks[_FACING_INDEX[zamboni.facing]] = 1 << zamboni.cell
    start_cover = tuple(sorted(cover))
    layers: list[Layer] = [{start_cover: masks}]
    blockers = _bits(others)
    for _ in range(roll):
        layers.append(_next_layer(tables, layers[-1], blockers, warp))
    return Reach(board, zamboni, roll, blockers, start_cover, warp, tuple(layers))


def laser_target(board: CoasterBoard, cell: Cell, facing: Direction, zambonis: Mapping[Cell, tuple[int, int]],
                 cover: tuple[Cell, ...] = ()) -> Target | None:
    """The Zamboni a laser at `cell` pointing `facing` would hit, if any.

    Args:
        zambonis: square -> (seat, armour) of every other Zamboni.
        cover: squares of cover dice, which stop the beam.
    """
    square = cell
    for distance in range(1, LASER_RANGE + 1):
        square = board.grid.step(square, facing)
        if square is None or square in cover:
            return None
        hit = zambonis.get(square)
        if hit is not None:
            return Target(hit[0], square, distance, hit[1])
    return None


def plan_moves(state: ZamboniState, roll: int | None = None, seat: int | None = None) -> list[MovePlan]:
    """Every end position for a Zamboni and a roll, with one path each and the shots from there.

    Args:
        state: the position (its board, Zambonis, cover and rules).
        roll: movement points; default the roll now being moved.
        seat: whose Zamboni; default the player whose turn it is.

    Raises:
        ValueError: no roll is known, or the seat has no Zamboni on the board.
    """
    seat = state.turn if seat is None else seat
    roll = roll if roll is not None else state.roll
    if not roll:
        raise ValueError(f"no roll to plan for: {state.turn_text()} ({state.phase.value} phase)")
    result = state.reach_for(seat, roll)
    others = {z.cell: (s, z.armour) for s, z in enumerate(state.zambonis) if z is not None and s != seat}
    plans = []
    for cell, facing, cover in result.ends():
        target = laser_target(state.board, cell, facing, others, cover)
        plans.append(MovePlan(cell, facing, cover, result.path_to(cell, facing, cover),
                              () if target is None else (target,)))
    return plans


# --- the state --------------------------------------------------------------------------------

@dataclass(frozen=True, slots=True)
class ZamboniState(State):
    """A position of Zamboni Wars.

    `zambonis[seat]` is None once that player is eliminated. `cover` holds the cover dice's
    squares, sorted (the dice are alike). `roll` is the movement points being spent in
    the MOVE phase; `target` the seat under fire in the LASER_ROLL phase.
    """

    num_players: int
    cover_rule: bool
    warp_rule: bool
    rotations: tuple[int, int, int, int]
    colours: tuple[Colour, Colour, Colour, Colour]
    homes: tuple[Quadrant, ...]
    zambonis: tuple[Zamboni | None, ...]
    cover: tuple[Cell, ...]
    phase: Phase
    turn: int
    roll: int = 0
    target: int | None = None
    turns_taken: int = 0
    #: Derived facts (reach of a roll, legal moves), kept with this immutable state.
    _memo: dict[Any, Any] = field(default_factory=dict, init=False, compare=False, repr=False)

    # --- the interface ---------------------------------------------------------------
    @property
    def game(self) -> Game:
        return ZAMBONI_WARS

    @property
    def board(self) -> CoasterBoard:
        return coaster_board(self.rotations, self.colours)

    @property
    def variant(self) -> str:
        return {(False, False): "standard", (True, False): COVER, (False, True): WARP,
                (True, True): COVER_AND_WARP}[(self.cover_rule, self.warp_rule)]

    def colour_of(self, seat: int) -> Colour:
        return self.colours[QUADRANTS.index(self.homes[seat])]

    def current_player(self) -> int:
        phase = self.phase
        if phase in (Phase.MOVE, Phase.AIM):
            return self.turn
        if phase == Phase.OVER:
            return TERMINAL
        return CHANCE

    def legal_actions(self, player: int | None = None) -> list[ZamboniAction]:
        phase = self.phase
        if phase == Phase.OVER:
            return []
        if phase in (Phase.COVER_ROLL_OFF, Phase.MOVE_ROLL, Phase.LASER_ROLL):
            return [a for a, _ in self.chance_outcomes()] if player is None else []
        if player is not None and player != self.turn:
            return []
        if phase == Phase.MOVE:
            return list(self._legal_moves())
        target = self.aimed_at()
        return [Fire(self.turn, target.seat), Hold(self.turn)] if target is not None else [Hold(self.turn)]

    def _legal_moves(self) -> list[Move]:
        found = self._memo.get("moves")
        if found is None:
            found = []
            for cover, masks in self.reach_for(self.turn, self.roll).layers[-1].items():
                table = _moves_table(self.turn, () if cover == self.cover else cover)
                for i, mask in enumerate(masks):
                    base = i * 36 - 1
                    while mask:
                        low = mask & -mask
                        found.append(table[base + low.bit_length()])
                        mask ^= low
            self._memo["moves"] = found
        return found

    def illegal_reason(self, action: ZamboniAction) -> str | None:
        phase = self.phase
        if phase == Phase.OVER:
            return "the game is over"
        if isinstance(action, CoverRollOff):
            if phase != Phase.COVER_ROLL_OFF:
                return "no cover roll-off is due" + self._waiting()
            want = cover_dice_for(self.num_players)
            if len(action.seats) != want or len(set(action.seats)) != want:
                return f"the roll-off places {want} cover di{'ce' if want > 1 else 'e'}: name {want} seat(s)"
            if any(not 0 <= s < self.num_players for s in action.seats):
                return f"there are only {self.num_players} seats"
            return None
        if isinstance(action, Roll):
            if phase not in (Phase.MOVE_ROLL, Phase.LASER_ROLL):
                return "no die roll is due" + self._waiting()
            if action.value not in DIE_FACES:
                return f"a six-sided die cannot show {action.value}"
            return None
        if not isinstance(action, (Move, Fire, Hold)):
            return f"{action!r} is not a Zamboni Wars action"
        if phase in (Phase.COVER_ROLL_OFF, Phase.MOVE_ROLL, Phase.LASER_ROLL):
            return "a die roll is due first" + self._waiting()
        if action.player != self.turn:
            return f"it is {seat_name(self.turn)}'s turn, not {seat_name(action.player)}'s"
        if isinstance(action, Move):
            if phase != Phase.MOVE:
                return f"{seat_name(self.turn)} has moved already: fire or hold"
            return self._move_reason(action)
        if phase != Phase.AIM:
            return f"{seat_name(self.turn)} must move (roll of {self.roll}) before the laser"
        target = self.aimed_at()
        if isinstance(action, Hold):
            return None
        if target is None:
            return f"{seat_name(self.turn)} is not aimed at any Zamboni in range with a clear line"
        if action.target != target.seat:
            return (f"{seat_name(self.turn)} is aimed at {seat_name(target.seat)} on {_GRID.name(target.cell)}, "
                    f"not at {seat_name(action.target)}")
        return None

    def _waiting(self) -> str:
        return f" ({self.turn_text()}, {self.phase.value} phase)"

    def _move_reason(self, action: Move) -> str | None:
        board, me = self.board, self.zambonis[self.turn]
        assert me is not None
        if action.cover and not self.cover_rule:
            return "this game has no cover dice"
        if action.cover and tuple(sorted(action.cover)) == self.cover:
            return "the cover dice did not move: write the move without 'cover'"
        cover = tuple(sorted(action.cover)) or self.cover
        if len(cover) != len(self.cover):
            return f"there are {len(self.cover)} cover dice, not {len(cover)}"
        for seat, z in enumerate(self.zambonis):
            if z is not None and seat != self.turn and z.cell == action.cell:
                return f"{_GRID.name(action.cell)} is taken by {seat_name(seat)}'s Zamboni"
        if action.cell in cover:
            return f"{_GRID.name(action.cell)} holds a cover die"
        if self.reach_for(self.turn, self.roll).reaches(action.cell, action.facing, cover):
            return None
        where = f"{_GRID.name(action.cell)} facing {action.facing.value}"
        if action.cover:
            where += " with the cover on " + " ".join(_GRID.name(c) for c in action.cover)
        if not self.warp_rule and board.grid.manhattan(me.cell, action.cell) > self.roll:
            return f"{where} is out of reach of a roll of {self.roll} from {_GRID.name(me.cell)}"
        return (f"no path from {_GRID.name(me.cell)} facing {me.facing.value} ends on {where} spending exactly "
                f"{self.roll} point{'s' if self.roll > 1 else ''} (arrows, turns, Zambonis and cover allow none)")

    def chance_outcomes(self) -> list[tuple[ZamboniAction, float]]:
        if self.phase == Phase.COVER_ROLL_OFF:
            k = cover_dice_for(self.num_players)
            return [(CoverRollOff(seats), 1 / comb(self.num_players, k))
                    for seats in combinations(range(self.num_players), k)]
        if self.phase in (Phase.MOVE_ROLL, Phase.LASER_ROLL):
            return list(_DIE_OUTCOMES)
        return []

    def outcome(self) -> Outcome | None:
        if self.phase != Phase.OVER:
            return None
        survivors = tuple(s for s, z in enumerate(self.zambonis) if z is not None)
        return Outcome("last Zamboni standing", survivors)

    # --- planning helpers ---------------------------------------------------------------
    def reach_for(self, seat: int, roll: int) -> Reach:
        """Everything `seat`'s Zamboni reaches with `roll` here (kept with the state)."""
        key = (seat, roll)
        found = self._memo.get(key)
        if found is None:
            me = self.zambonis[seat]
            if me is None:
                raise ValueError(f"{seat_name(seat)} has no Zamboni on the board")
            others = tuple(z.cell for s, z in enumerate(self.zambonis) if z is not None and s != seat)
            found = self._memo[key] = reach(self.board, me, roll, others, self.cover, self.warp_rule)
        return found

    def aimed_at(self, seat: int | None = None) -> Target | None:
        """The Zamboni `seat` (default: whose turn it is) could fire at from where it stands."""
        seat = self.turn if seat is None else seat
        me = self.zambonis[seat]
        if me is None:
            return None
        others = {z.cell: (s, z.armour) for s, z in enumerate(self.zambonis) if z is not None and s != seat}
        return laser_target(self.board, me.cell, me.facing, others, self.cover)

    # --- applying actions -----------------------------------------------------------------
    def _resolve(self, action: ZamboniAction) -> tuple[ZamboniState, list[str]]:
        effects: list[str] = []
        if isinstance(action, CoverRollOff):
            cells = tuple(sorted(self.board.centre(self.homes[s]) for s in action.seats))
            for s in action.seats:
                effects.append(f"a cover die goes to the centre of {seat_name(s)}'s coaster, "
                               f"{_GRID.name(self.board.centre(self.homes[s]))}")
            return replace(self, cover=cells, phase=Phase.MOVE_ROLL), effects
        if isinstance(action, Roll):
            if self.phase == Phase.MOVE_ROLL:
                effects.append(f"{seat_name(self.turn)} rolls {action.value} movement "
                               f"point{'s' if action.value > 1 else ''}")
                return replace(self, phase=Phase.MOVE, roll=action.value), effects
            return self._laser_roll(action.value, effects)
        if isinstance(action, Move):
            return self._move(action, effects)
        if isinstance(action, Fire):
            target = self.aimed_at()
            assert target is not None
            effects.append(f"{seat_name(self.turn)} fires at {seat_name(action.target)} on "
                           f"{_GRID.name(target.cell)}, {target.distance} away: hits on {target.needs}+")
            return replace(self, phase=Phase.LASER_ROLL, target=action.target), effects
        effects.append(f"{seat_name(self.turn)} holds fire")
        return self._next_turn(effects), effects

    def _move(self, action: Move, effects: list[str]) -> tuple[ZamboniState, list[str]]:
        me = self.zambonis[self.turn]
        assert me is not None
        cover = tuple(sorted(action.cover)) or self.cover
        # The camera sees where the Zamboni ends, not the way it went, so no path is told here.
        effects.append(f"{seat_name(self.turn)} moves from {_GRID.name(me.cell)} facing {me.facing.value} "
                       f"to {_GRID.name(action.cell)} facing {action.facing.value}")
        if cover != self.cover:
            moved_from = sorted(set(self.cover) - set(cover))
            moved_to = sorted(set(cover) - set(self.cover))
            effects.append("the cover is pushed " + ", ".join(
                f"{_GRID.name(a)} to {_GRID.name(b)}" for a, b in zip(moved_from, moved_to)))
        driven = replace(me, cell=action.cell, facing=action.facing)
        moved = replace(self, zambonis=_set(self.zambonis, self.turn, driven), cover=cover, roll=0)
        target = moved.aimed_at()
        if target is None:
            return moved._next_turn(effects), effects
        effects.append(f"{seat_name(self.turn)} has {seat_name(target.seat)} in the sights "
                       f"({target.distance} away, hits on {target.needs}+)")
        return replace(moved, phase=Phase.AIM), effects

    def _laser_roll(self, value: int, effects: list[str]) -> tuple[ZamboniState, list[str]]:
        assert self.target is not None
        victim = self.zambonis[self.target]
        assert victim is not None
        who = seat_name(self.target)
        if value < HIT_ON[victim.armour]:
            effects.append(f"roll {value}: the laser misses {who}")
            return self._next_turn(effects), effects
        if victim.armour == 1:
            effects.append(f"roll {value}: hit! {who}'s last piece is destroyed and {who} is eliminated")
            hit = replace(self, zambonis=_set(self.zambonis, self.target, None))
        else:
            lost = Pyramid(self.colour_of(self.target), Size(victim.armour))
            effects.append(f"roll {value}: hit! {who} loses {lost} ({victim.armour - 1} left)")
            hit = replace(self, zambonis=_set(self.zambonis, self.target, replace(victim, armour=victim.armour - 1)))
        alive = [s for s, z in enumerate(hit.zambonis) if z is not None]
        if len(alive) == 1:
            effects.append(f"{seat_name(alive[0])} has the last Zamboni and wins")
            return replace(hit, phase=Phase.OVER, target=None, roll=0, turns_taken=self.turns_taken + 1), effects
        return hit._next_turn(effects), effects

    def _next_turn(self, effects: list[str]) -> ZamboniState:
        n = self.num_players
        seat = next(s % n for s in range(self.turn + 1, self.turn + n + 1) if self.zambonis[s % n] is not None)
        effects.append(f"{seat_name(seat)} to roll")
        return replace(self, phase=Phase.MOVE_ROLL, turn=seat, roll=0, target=None, turns_taken=self.turns_taken + 1)

    # --- reports ---------------------------------------------------------------------------------
    def invariant_violations(self) -> list[str]:
        problems = []
        n = self.num_players
        grid = _GRID
        if not 2 <= n <= 4:
            problems.append(f"{n} players (Zamboni Wars is for 2-4)")
        for name in ("homes", "zambonis"):
            if len(getattr(self, name)) != n:
                problems.append(f"{name} has {len(getattr(self, name))} entries for {n} players")
        if len(set(self.homes)) != len(self.homes):
            problems.append("two players share a home coaster")
        cells = [z.cell for z in self.zambonis if z is not None]
        if len(set(cells)) != len(cells):
            problems.append("two Zambonis share a square")
        for seat, z in enumerate(self.zambonis):
            if z is None:
                continue
            if not 0 <= z.cell < grid.size:
                problems.append(f"{seat_name(seat)}'s Zamboni is off the board")
            if not 1 <= z.armour <= FULL_ARMOUR:
                problems.append(f"{seat_name(seat)}'s Zamboni has {z.armour} pieces")
        if list(self.cover) != sorted(set(self.cover)):
            problems.append("cover squares are not distinct and sorted")
        if set(self.cover) & set(cells):
            problems.append("a Zamboni shares a square with a cover die")
        want_cover = cover_dice_for(n) if self.cover_rule and self.phase != Phase.COVER_ROLL_OFF else 0
        if len(self.cover) != want_cover:
            problems.append(f"{len(self.cover)} cover dice on the board, expected {want_cover}")
        alive = [s for s, z in enumerate(self.zambonis) if z is not None]
        if self.phase == Phase.OVER:
            if len(alive) != 1:
                problems.append(f"game over with {len(alive)} Zambonis left")
        else:
            if len(alive) < 2:
                problems.append(f"game on with {len(alive)} Zamboni(s) left")
            if not 0 <= self.turn < n or self.zambonis[self.turn] is None:
                problems.append(f"the turn belongs to seat {self.turn}, which has no Zamboni")
        if (self.phase == Phase.MOVE) != (self.roll in DIE_FACES):
            problems.append(f"roll {self.roll} in the {self.phase.value} phase")
        if self.phase == Phase.LASER_ROLL:
            if self.target is None or not 0 <= self.target < n or self.zambonis[self.target] is None:
                problems.append(f"laser roll at seat {self.target}, which has no Zamboni")
        elif self.target is not None:
            problems.append(f"a target outside the laser roll ({self.phase.value} phase)")
        if self.phase == Phase.AIM and not problems and self.aimed_at() is None:
            problems.append("aiming with nobody in the sights")
        if self.phase == Phase.COVER_ROLL_OFF and not self.cover_rule:
            problems.append("a cover roll-off without the cover rule")
        return problems

    def summary(self) -> dict[str, Any]:
        out = self.outcome()
        return {
            "game": ZAMBONI_WARS.name,
            "variant": self.variant,
            "phase": self.phase.value,
            "next": self.turn_text(),
            "turn": seat_name(self.turn),
            "turns_taken": self.turns_taken,
            "roll": self.roll or None,
            "target": None if self.target is None else seat_name(self.target),
            "zambonis": [
                {"seat": seat_name(s), "colour": self.colour_of(s).value, "coaster": self.homes[s].value,
                 "square": None if z is None else _GRID.name(z.cell),
                 "facing": None if z is None else z.facing.value,
                 "pieces": [] if z is None else [str(Pyramid(self.colour_of(s), size)) for size in z.sizes],
                 "eliminated": z is None}
                for s, z in enumerate(self.zambonis)],
            "cover": [_GRID.name(c) for c in self.cover],
            "warp_zones": [_GRID.name(c) for c in self.board.centres] if self.warp_rule else [],
            "aimed_at": None if self.phase != Phase.AIM or (t := self.aimed_at()) is None else t.to_json(),
            "outcome": None if out is None else out.to_json(),
        }

    def __str__(self) -> str:
        marks: dict[Cell, str] = {c: "[#]" for c in self.cover}
        if self.warp_rule:
            for c in self.board.centres:
                marks.setdefault(c, " @ ")
        for s, z in enumerate(self.zambonis):
            if z is not None:
                marks[z.cell] = f"{s + 1}{z.facing.value:<2}"
        lines = [f"Zamboni Wars ({self.variant}), {self.phase.value} phase: {self.turn_text()}"
                 + (f", roll {self.roll}" if self.roll else "")]
        for rank in reversed(range(6)):
            lines.append(f"{rank + 1} " + " ".join(marks.get(_GRID.cell(f, rank), " . ") for f in range(6)))
        lines.append("   " + "   ".join("abcdef"))
        lines.append("  (1N: P1's Zamboni facing N; [#]: cover die; @: warp zone)")
        for s, z in enumerate(self.zambonis):
            state = "eliminated" if z is None else f"on {_GRID.name(z.cell)} facing {z.facing.value}, " + \
                "".join(size.letter for size in z.sizes)
            lines.append(f"{seat_name(s)} ({self.colour_of(s).value}): {state}")
        out = self.outcome()
        if out is not None:
            lines.append(f"Game over ({out.termination}): {', '.join(seat_name(s) for s in out.winners)}")
        return "\n".join(lines)

    def to_json(self) -> dict[str, Any]:
        return {
            "game": ZAMBONI_WARS.name,
            "players": self.num_players,
            "cover_rule": self.cover_rule,
            "warp_rule": self.warp_rule,
            "rotations": list(self.rotations),
            "colours": [c.value for c in self.colours],
            "homes": [q.value for q in self.homes],
            "zambonis": [None if z is None else [_GRID.name(z.cell), z.facing.value, z.armour] for z in self.zambonis],
            "cover": [_GRID.name(c) for c in self.cover],
            "phase": self.phase.value,
            "turn": self.turn,
            "roll": self.roll,
            "target": self.target,
            "turns_taken": self.turns_taken,
        }


def _set(values: tuple, index: int, value: Any) -> tuple:
    return values[:index] + (value,) + values[index + 1:]


# --- the game ---------------------------------------------------------------------------------

class ZamboniWars(Game):
    """Zamboni Wars for 2-4 players.

    Options (all optional): "rotations" and "coaster_colours", mappings from coaster
    position ('bottom-left', 'top-left', 'top-right', 'bottom-right') to quarter-turns
    clockwise (see `companion.boards.coasters`) and to colour; "coasters", the coaster
    position of each seat in seat order.
    """

    name: ClassVar[str] = "zamboni-wars"
    title: ClassVar[str] = "Zamboni Wars"
    min_players: ClassVar[int] = 2
    max_players: ClassVar[int] = 4
    variants: ClassVar[Mapping[str, str]] = {
        "standard": "the rules as written, no optional rules",
        COVER: "Treehouse cover: one die per two players, pushed for free, blocks lasers",
        WARP: "Warp Zones: from a coaster centre, 1 point jumps to another centre, facing kept",
        COVER_AND_WARP: "both optional rules",
    }
    playout_limit: ClassVar[int] = 5000

    def new_initial_state(self, num_players: int, variant: str = "standard",
                          options: Mapping[str, Any] | None = None) -> ZamboniState:
        self.check_player_count(num_players)
        self.check_variant(variant)
        options = dict(options or {})
        unknown = set(options) - {"rotations", "coaster_colours", "coasters"}
        if unknown:
            raise GameError(f"Zamboni Wars has no option(s) {', '.join(sorted(unknown))} "
                            "(known: rotations, coaster_colours, coasters)")
        try:
            board = martian_coasters(options.get("rotations"), options.get("coaster_colours"))
            homes = tuple(Quadrant.parse(q) for q in options.get("coasters", HOME_COASTERS[num_players]))
        except (ValueError, TypeError, AttributeError) as exc:
            raise GameError(f"bad Zamboni Wars set-up: {exc}") from None
        if len(homes) != num_players or len(set(homes)) != num_players:
            raise GameError(f"'coasters' must name {num_players} different coaster positions, got "
                            f"{', '.join(q.value for q in homes)}")
        cover_rule = variant in (COVER, COVER_AND_WARP)
        return ZamboniState(
            num_players=num_players, cover_rule=cover_rule, warp_rule=variant in (WARP, COVER_AND_WARP),
            rotations=board.rotations, colours=board.colours, homes=homes,
            zambonis=tuple(Zamboni(board.outer_corner(q), START_FACING[q]) for q in homes),
            cover=(), phase=Phase.COVER_ROLL_OFF if cover_rule else Phase.MOVE_ROLL, turn=0)

    def parse_action(self, text: str) -> ZamboniAction:
        return parse_action(text)

    def state_from_json(self, data: Mapping[str, Any]) -> ZamboniState:
        try:
            n = int(data["players"])
            rotations = tuple(int(r) for r in data["rotations"])
            colours = tuple(Colour(c) for c in data["colours"])
            if len(rotations) != 4 or len(colours) != 4 or len(set(colours)) != 4:
                raise ValueError("four coasters need four rotations and four different colours")
            coaster_board(rotations, colours)  # type: ignore[arg-type]
            target = data["target"]
            state = ZamboniState(
                num_players=n, cover_rule=bool(data["cover_rule"]), warp_rule=bool(data["warp_rule"]),
                rotations=rotations, colours=colours,  # type: ignore[arg-type]
                homes=tuple(Quadrant(q) for q in data["homes"]),
                zambonis=tuple(None if z is None else Zamboni(_GRID.parse(z[0]), Direction(z[1]), int(z[2]))
                               for z in data["zambonis"]),
                cover=tuple(_GRID.parse(c) for c in data["cover"]),
                phase=Phase(data["phase"]), turn=int(data["turn"]), roll=int(data["roll"]),
                target=None if target is None else int(target), turns_taken=int(data["turns_taken"]))
        except (KeyError, TypeError, ValueError, IndexError) as exc:
            raise GameError(f"bad Zamboni Wars state data: {exc!r}") from None
        problems = state.invariant_violations()
        if problems:
            raise GameError(f"bad Zamboni Wars state data: {'; '.join(problems)}")
        return state


ZAMBONI_WARS = register(ZamboniWars())
