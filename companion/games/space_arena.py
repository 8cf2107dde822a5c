"""ARENA (Christoffer Fogelström): space combat in a cube of tiles and heights, tracked by the companion.

Rules: ../shared/rules/arena-space-combat.txt (a first draft). Rulings that reconcile its
examples and fill its gaps: docs/rulings/space-arena.md.

The game's shape, as nodes of the shared interface:

    DESIGN (simultaneous, secret: Aim, Damage, Hull, Speed) -> START (seat order: corner and height)
    -> rounds of: PLAN (simultaneous, secret speed changes) -> ORDERS (simultaneous, secret
    fire orders naming a step of the revealed movement) -> movement, one step at a time for
    every ship at once, with collisions, pick-ups and the shots of each step; a shot whose
    outcome is not certain waits at a ROLL node (chance, a d8).

Positions are (file, rank, height), 0-based inside; written 'b4h3' (tile b4, height 3).
Velocities are (files, ranks, heights) per round: +1 on files is towards later letters,
on ranks towards higher numbers, on heights upwards.

Action text forms (seat P1.. in seat order):

    P1 ship A5 D5 H5 S5     (design: Aim, Damage, Hull, Speed)
    P1 start a1h3           (a corner tile at a chosen height)
    P1 plan +0 +2 -1        (speed changes on files, ranks and heights)
    P1 fire P2 at 3         (a shot at P2 after movement step 3; step 0 is before anyone moves)
    P1 hold                 (no more shots this round)
    roll 6                  (chance: the d8 of the shot waiting to be rolled)
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from enum import Enum
from fractions import Fraction
from functools import cache, lru_cache
from typing import Any, ClassVar

from companion.boards.square import square_grid
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

Point = tuple[int, int, int]
Vector = tuple[int, int, int]

DESIGN_POINTS = 20
STAT_MIN, STAT_MAX, STAT_LIMIT = 1, 8, 10  # set-up bounds; power-ups may raise a value to 10, never more
START_FUEL = 100
RANGE_PER_AIM = 4  # each started 4 tiles of range costs one Aim; the greatest range is Aim x 4
HIT_TOTAL = 5  # d8 + Aim - range cost - target's total speed must reach this to hit
DIE_FACES = 8
DISABLED_AIM_PENALTY = 4
STATION_STOP_FUEL, STATION_PASS_FUEL = 40, 10
DEFAULT_ROUND_LIMIT = 40
DEFAULT_RESPAWN = 4
SPEED_BOOST, SPEED_BOOST_ROUNDS, HEAVY_BONUS = 2, 3, 3
AXES = ("files", "ranks", "heights")
NO_MOTION: Vector = (0, 0, 0)
POWERUP_KINDS = {
    "speed": f"Speed +{SPEED_BOOST} for the next {SPEED_BOOST_ROUNDS} plans",
    "attack": "one extra shot in a later round, kept until used",
    "heavy": f"the next shot fired has Damage +{HEAVY_BONUS}",
    "hull": "Hull +1 for good (repairs a damaged or disabled ship)",
}
POWERUPS_VARIANT = "powerups"


# --- pure rules arithmetic: what the page shows ------------------------------------------------

def axis_distance(a: Point, b: Point) -> int:
    """Range between two points: the sum of the distances along files, ranks and heights."""
    return abs(a[0] - b[0]) + abs(a[1] - b[1]) + abs(a[2] - b[2])


def range_cost(distance: int) -> int:
    """Aim a shot over `distance` costs: one for each started 4 tiles."""
    return -(-distance // RANGE_PER_AIM)


def total_speed(velocity: Vector) -> int:
    """A ship's total speed: the sum of its speeds on the three axes (what a shot at it subtracts)."""
    return abs(velocity[0]) + abs(velocity[1]) + abs(velocity[2])


def collision_speed(velocity: Vector) -> int:
    """A ship's collision speed: the highest of its three axis speeds."""
    return max(abs(velocity[0]), abs(velocity[1]), abs(velocity[2]))


def effective_aim(aim: int, hull: int) -> int:
    """Aim as it counts now: a disabled ship (hull 0) aims 4 worse, never below 1."""
    return aim if hull > 0 else max(1, aim - DISABLED_AIM_PENALTY)


def roll_needed(aim: int, distance: int, target_speed: int) -> int | None:
    """The lowest d8 face that hits, or None when the target is beyond Aim x 4.

    Below 1 the shot cannot miss; above 8 it cannot hit.
    """
    if distance > aim * RANGE_PER_AIM:
        return None
    return HIT_TOTAL - (aim - range_cost(distance) - target_speed)


def hit_chance(aim: int, distance: int, target_speed: int) -> Fraction:
    """Exact chance that a shot hits: `aim` is the shooter's effective Aim, `distance` the range,
    `target_speed` the target's total speed at the moment of the shot."""
    need = roll_needed(aim, distance, target_speed)
    if need is None:
        return Fraction(0)
    return Fraction(min(DIE_FACES, max(0, DIE_FACES + 1 - need)), DIE_FACES)


def shot_loss(damage: int, target_hull: int) -> int:
    """Hull a hit removes: each point of Damage above the target's Hull."""
    return max(0, damage - target_hull)


def collision_losses(hull_a: int, speed_a: int, hull_b: int, speed_b: int) -> tuple[int, int]:
    """Hull each of two colliding ships loses, given their hulls and collision speeds.

    Each takes both collision speeds plus the other's Hull, less its own Hull (never below 0).
    """
    base = speed_a + speed_b
    return max(0, base + hull_b - hull_a), max(0, base + hull_a - hull_b)


def next_axis(velocity: Vector, done: Vector) -> int | None:
    """The axis of a ship's next one-tile move this round, or None when it has no moves left.

    A ship's moves are spread evenly over its own movement, as a straight flight would cross
    the tiles: the axis whose next move falls earliest in its share goes first (ties: files,
    ranks, heights).
    """
    best, best_key = None, 0.0
    for axis in range(3):
        v = abs(velocity[axis])
        if done[axis] < v:
            key = (2 * done[axis] + 1) / v
            if best is None or key < best_key:
                best, best_key = axis, key
    return best


# --- the arena ------------------------------------------------------------------------------------

@dataclass(frozen=True, slots=True)
class Arena:
    """The cube of tiles (files x ranks) and heights the ships fly in."""

    files: int = 8
    ranks: int = 8
    heights: int = 8

    def __post_init__(self) -> None:
        if not (2 <= self.files <= 26 and 2 <= self.ranks <= 99 and 2 <= self.heights <= 99):
            raise GameError(f"arena {self.files}x{self.ranks}x{self.heights} out of range "
                            "(files 2-26, ranks 2-99, heights 2-99)")

    def contains(self, p: Point) -> bool:
        return 0 <= p[0] < self.files and 0 <= p[1] < self.ranks and 0 <= p[2] < self.heights

    def name(self, p: Point) -> str:
        """'b4h3': the tile, then the height (1-based)."""
        grid = square_grid(self.files, self.ranks)
        return f"{grid.name(grid.cell(p[0], p[1]))}h{p[2] + 1}"

    def parse(self, text: str) -> Point:
        """Reads 'b4h3'; ValueError naming the text when it is malformed or outside the arena."""
        tile, sep, height = text.strip().lower().rpartition("h")
        if not sep or not height.isdigit():
            raise ValueError(f"bad position {text!r} (expected a tile and a height, e.g. b4h3)")
        grid = square_grid(self.files, self.ranks)
        try:
            f, r = grid.coords(grid.parse(tile))
        except ValueError as exc:
            raise ValueError(f"bad position {text!r}: {exc}") from None
        z = int(height) - 1
        if not 0 <= z < self.heights:
            raise ValueError(f"position {text!r} is outside heights 1-{self.heights}")
        return (f, r, z)

    def starts(self) -> tuple[Point, ...]:
        """Starting places: the four corner tiles, at any height."""
        corners = dict.fromkeys([(0, 0), (self.files - 1, 0), (0, self.ranks - 1), (self.files - 1, self.ranks - 1)])
        return tuple((f, r, z) for f, r in corners for z in range(self.heights))

    def is_start(self, p: Point) -> bool:
        return p[0] in (0, self.files - 1) and p[1] in (0, self.ranks - 1) and 0 <= p[2] < self.heights

    @property
    def text(self) -> str:
        return f"{self.files}x{self.ranks}x{self.heights}"


@dataclass(frozen=True, slots=True)
class PowerUp:
    """A pick-up point: a kind of power-up that waits at one place and returns after being taken."""

    kind: str
    at: Point


@dataclass(frozen=True, slots=True)
class Rules:
    """The table's set-up choices (from the variant and options)."""

    arena: Arena = Arena()
    fuel_capacity: int = START_FUEL
    round_limit: int = DEFAULT_ROUND_LIMIT  # 0: no limit
    powerups: tuple[PowerUp, ...] = ()
    respawn: int = DEFAULT_RESPAWN  # rounds a taken power-up stays away; 0: never returns

    def to_json(self) -> dict[str, Any]:
        a = self.arena
        return {"size": [a.files, a.ranks, a.heights], "fuel": self.fuel_capacity,
                "round_limit": self.round_limit, "respawn": self.respawn,
                "powerups": [f"{p.kind}@{a.name(p.at)}" for p in self.powerups]}


def default_powerups(arena: Arena) -> tuple[PowerUp, ...]:
    """One pick-up point of each kind, around the middle of the arena."""
    cf, cr, ch = arena.files // 2 - 1, arena.ranks // 2 - 1, arena.heights // 2 - 1
    return (PowerUp("speed", (cf, cr, ch)), PowerUp("attack", (cf + 1, cr + 1, ch)),
            PowerUp("heavy", (cf, cr + 1, ch + 1)), PowerUp("hull", (cf + 1, cr, ch + 1)))


def rules_from_options(variant: str, options: Mapping[str, Any] | None) -> Rules:
    """Reads the options: size (n or [files, ranks, heights]), fuel, round_limit, respawn, and
    powerups (a list like ["speed@d4h4", "hull@e4h5"]); GameError naming a bad one."""
    options = dict(options or {})
    unknown = set(options) - {"size", "fuel", "round_limit", "respawn", "powerups"}
    if unknown:
        raise GameError(f"ARENA has no option(s) {', '.join(sorted(unknown))} "
                        "(known: size, fuel, round_limit, respawn, powerups)")
    size = options.get("size", 8)
    if isinstance(size, int) and not isinstance(size, bool):
        arena = Arena(size, size, size)
    elif isinstance(size, (list, tuple)) and len(size) == 3 and all(isinstance(s, int) for s in size):
        arena = Arena(*size)
    else:
        raise GameError(f"option size must be a number or [files, ranks, heights], not {size!r}")

    def count(key: str, default: int, low: int) -> int:
        value = options.get(key, default)
        if not isinstance(value, int) or isinstance(value, bool) or value < low:
            raise GameError(f"option {key} must be a whole number of at least {low}, not {value!r}")
        return value

    if "powerups" in options:
        spots = options["powerups"]
        if not isinstance(spots, list) or not all(isinstance(s, str) for s in spots):
            raise GameError(f"option powerups must be a list like ['speed@d4h4'], not {spots!r}")
        powerups = []
        for spot in spots:
            kind, sep, where = spot.partition("@")
            if not sep or kind not in POWERUP_KINDS:
                raise GameError(f"bad power-up {spot!r} (expected KIND@POSITION with a kind of "
                                f"{', '.join(POWERUP_KINDS)}, e.g. speed@d4h4)")
            try:
                powerups.append(PowerUp(kind, arena.parse(where)))
            except ValueError as exc:
                raise GameError(f"bad power-up {spot!r}: {exc}") from None
        if len({p.at for p in powerups}) != len(powerups):
            raise GameError("two power-ups share a position")
        found = tuple(powerups)
    else:
        found = default_powerups(arena) if variant == POWERUPS_VARIANT else ()
    return Rules(arena, count("fuel", START_FUEL, 1), count("round_limit", DEFAULT_ROUND_LIMIT, 0), found,
                 count("respawn", DEFAULT_RESPAWN, 0))


# --- actions ----------------------------------------------------------------------------------------

@dataclass(frozen=True, slots=True)
class Design:
    """Secret set-up choice: Aim, Damage, Hull and Speed, 20 points in all, each 1-8."""

    player: int
    aim: int
    damage: int
    hull: int
    speed: int

    def __str__(self) -> str:
        return f"{seat_name(self.player)} ship A{self.aim} D{self.damage} H{self.hull} S{self.speed}"


@dataclass(frozen=True, slots=True)
class Start:
    player: int
    at: str

    def __str__(self) -> str:
        return f"{seat_name(self.player)} start {self.at}"


@dataclass(frozen=True, slots=True)
class Plan:
    """Secret speed changes for the round, on files, ranks and heights; costs their sum in fuel."""

    player: int
    change: Vector

    @property
    def cost(self) -> int:
        return total_speed(self.change)

    def __str__(self) -> str:
        return f"{seat_name(self.player)} plan " + " ".join(f"{d:+d}" for d in self.change)


@dataclass(frozen=True, slots=True)
class Fire:
    """A secret fire order: shoot `target` when movement step `step` is done (0: before moving)."""

    player: int
    target: int
    step: int

    def __str__(self) -> str:
        return f"{seat_name(self.player)} fire {seat_name(self.target)} at {self.step}"


@dataclass(frozen=True, slots=True)
class Hold:
    """No (more) shots this round."""

    player: int

    def __str__(self) -> str:
        return f"{seat_name(self.player)} hold"


@dataclass(frozen=True, slots=True)
class Roll:
    """Chance: the d8 rolled for the shot waiting at the front of the queue."""

    value: int
    player: None = None

    def __str__(self) -> str:
        return f"roll {self.value}"


ArenaAction = Design | Start | Plan | Fire | Hold | Roll


def _number(text: str, what: str, whole: str) -> int:
    body = text[1:] if text[:1] in "+-" else text
    if not body.isdigit():
        raise InvalidActionError(f"bad {what} {text!r} in {whole!r}")
    return int(text)


def parse_action(text: str) -> ArenaAction:
    """Reads an ARENA action's text form; InvalidActionError naming the text."""
    words = text.split()
    if len(words) == 2 and words[0] == "roll":
        return Roll(_number(words[1], "die roll", text))
    if len(words) < 2:
        raise InvalidActionError(f"incomplete ARENA action {text!r}")
    player, verb, args = parse_seat(words[0]), words[1], words[2:]
    if verb == "ship" and len(args) == 4:
        values = []
        for letter, arg in zip("ADHS", args):
            if arg[:1].upper() != letter:
                raise InvalidActionError(f"bad ARENA design {text!r}: expected A, D, H and S values in that order, "
                                         "e.g. A5 D5 H5 S5")
            values.append(_number(arg[1:], "attribute", text))
        return Design(player, *values)
    if verb == "start" and len(args) == 1:
        return Start(player, args[0].lower())
    if verb == "plan" and len(args) == 3:
        a, b, c = (_number(arg, "speed change", text) for arg in args)
        return Plan(player, (a, b, c))
    if verb == "fire" and len(args) == 3 and args[1] == "at":
        return Fire(player, parse_seat(args[0]), _number(args[2], "step", text))
    if verb == "hold" and not args:
        return Hold(player)
    raise InvalidActionError(f"unknown ARENA action {text!r}")


@cache
def _designs(player: int) -> tuple[Design, ...]:
    return tuple(Design(player, a, d, h, DESIGN_POINTS - a - d - h)
                 for a in range(STAT_MIN, STAT_MAX + 1) for d in range(STAT_MIN, STAT_MAX + 1)
                 for h in range(STAT_MIN, STAT_MAX + 1) if STAT_MIN <= DESIGN_POINTS - a - d - h <= STAT_MAX)


@cache
def _plans(player: int, speed: int, budget: int) -> tuple[Plan, ...]:
    """Every plan within `speed` on each axis and costing at most `budget` fuel."""
    span = range(-speed, speed + 1)
    return tuple(Plan(player, (a, b, c)) for a in span for b in span for c in span
                 if abs(a) + abs(b) + abs(c) <= budget)


# --- ships and movement ------------------------------------------------------------------------------

@dataclass(frozen=True, slots=True)
class Ship:
    """One ship. `hull` is the tracked Hull: armour against hits and life at once (0: disabled,
    below 0: destroyed). `done` counts this round's moves made on each axis."""

    aim: int = 0
    damage: int = 0
    hull: int = 0
    speed: int = 0
    at: Point | None = None
    velocity: Vector = NO_MOTION
    fuel: int = START_FUEL
    boost: int = 0  # plans left with the Speed power-up
    extra_shots: int = 0
    heavy_shots: int = 0
    done: Vector = NO_MOTION

    @property
    def destroyed(self) -> bool:
        return self.hull < 0

    @property
    def disabled(self) -> bool:
        return self.hull == 0

    @property
    def flying(self) -> bool:
        """In play (not destroyed) and placed."""
        return self.hull >= 0 and self.at is not None

    @property
    def max_speed_change(self) -> int:
        return min(STAT_LIMIT, self.speed + SPEED_BOOST) if self.boost else self.speed

    @property
    def aim_now(self) -> int:
        return effective_aim(self.aim, self.hull)

    @property
    def damage_next(self) -> int:
        return min(STAT_LIMIT, self.damage + HEAVY_BONUS) if self.heavy_shots else self.damage

    def status(self) -> str:
        return "destroyed" if self.destroyed else "disabled" if self.disabled else "flying"


@dataclass(frozen=True, slots=True)
class StepResult:
    """One movement step for every ship: where each is after it, and who bumped a wall (axis)."""

    positions: tuple[Point | None, ...]
    velocities: tuple[Vector, ...]
    done: tuple[Vector, ...]
    bumps: tuple[tuple[int, int], ...]  # (seat, axis)


def movement_step(arena: Arena, positions: Sequence[Point | None], velocities: Sequence[Vector],
                  done: Sequence[Vector]) -> StepResult:
    """Every ship with a move left makes its next one-tile move, all at once.

    A move that would leave the arena is a crash into the wall: the ship stays, and its speed
    on that axis drops to 0 (the rest of that axis's movement is lost).
    """
    new_pos, new_vel, new_done, bumps = list(positions), list(velocities), list(done), []
    for seat, p in enumerate(positions):
        if p is None:
            continue
        axis = next_axis(velocities[seat], done[seat])
        if axis is None:
            continue
        sign = 1 if velocities[seat][axis] > 0 else -1
        moved = list(p)
        moved[axis] += sign
        if arena.contains((moved[0], moved[1], moved[2])):
            new_pos[seat] = (moved[0], moved[1], moved[2])
            d = list(done[seat])
            d[axis] += 1
            new_done[seat] = (d[0], d[1], d[2])
        else:
            v = list(velocities[seat])
            v[axis] = 0
            new_vel[seat] = (v[0], v[1], v[2])
            bumps.append((seat, axis))
    return StepResult(tuple(new_pos), tuple(new_vel), tuple(new_done), tuple(bumps))


def meetings(before: Sequence[Point | None], after: Sequence[Point | None]) -> list[tuple[int, int]]:
    """Pairs of ships that collide in a step: they come to share a place, or swap places.

    Ships that already shared a place before the step and still do are not a new collision.
    """
    pairs = []
    n = len(after)
    for a in range(n):
        if after[a] is None:
            continue
        for b in range(a + 1, n):
            if after[b] is None:
                continue
            together = after[a] == after[b] and before[a] != before[b]
            swapped = after[a] == before[b] and after[b] == before[a] and after[a] != after[b]
            if together or swapped:
                pairs.append((a, b))
    return pairs


@lru_cache(maxsize=4096)
def _predicted(arena: Arena, positions: tuple[Point | None, ...], velocities: tuple[Vector, ...],
               done: tuple[Vector, ...]) -> tuple[StepResult, ...]:
    """The round's remaining movement as planned, damage aside: one StepResult per step to come."""
    steps = []
    result = StepResult(positions, velocities, done, ())
    while any(p is not None and next_axis(result.velocities[s], result.done[s]) is not None
              for s, p in enumerate(result.positions)):
        result = movement_step(arena, result.positions, result.velocities, result.done)
        steps.append(result)
    return tuple(steps)


@dataclass(frozen=True, slots=True)
class QueuedShot:
    """A shot taken at the current step, waiting for its d8: the face that hits, and the hull it removes."""

    shooter: int
    target: int
    need: int
    loss: int


@dataclass(frozen=True, slots=True)
class ScheduledMove:
    """In a round's resolution order: movement step `step`, with each ship's move (seat, from, to)
    and any wall crashes (seat, axis)."""

    step: int
    moves: tuple[tuple[int, Point, Point], ...]
    bumps: tuple[tuple[int, int], ...]


@dataclass(frozen=True, slots=True)
class ScheduledCollision:
    step: int
    seats: tuple[int, int]
    at: Point


@dataclass(frozen=True, slots=True)
class ScheduledShot:
    """A fire order at its place in the round, with its range and exact chance as things stand."""

    step: int
    shooter: int
    target: int
    distance: int | None  # None: the shooter or target will not be there to shoot or be shot
    need: int | None  # lowest d8 face that hits; None: out of range
    chance: Fraction


class Phase(str, Enum):
    DESIGN = "design"
    START = "start"
    PLAN = "plan"
    ORDERS = "orders"
    ROLL = "roll"
    OVER = "over"


# --- the state -----------------------------------------------------------------------------------------

@dataclass(frozen=True, slots=True)
class ArenaState(State):
    """A position of ARENA.

    `designs`, `plans` and `orders` hold secret choices until everyone has committed.
    During movement, `step` is the last movement step done; `queue` the shots of that step
    still to be rolled and `hits` the ones already landed, applied together once the step's
    last die is rolled (shots at one step are simultaneous). `powerups[i]` is 0 while the
    i-th pick-up point holds its power-up, else the round at whose start it returns.
    """

    num_players: int
    variant: str
    rules: Rules
    phase: Phase
    round: int
    ships: tuple[Ship, ...]
    stations: tuple[Point | None, ...]
    designs: tuple[Design | None, ...]
    plans: tuple[Vector | None, ...]
    orders: tuple[tuple[tuple[int, int], ...], ...]
    ready: tuple[bool, ...]
    step: int
    queue: tuple[QueuedShot, ...]
    hits: tuple[tuple[int, int, int], ...]  # (target, loss, shooter)
    powerups: tuple[int, ...]
    ended: Outcome | None

    # --- the interface ---------------------------------------------------------------------
    @property
    def game(self) -> Game:
        return SPACE_ARENA

    @property
    def arena(self) -> Arena:
        return self.rules.arena

    def current_player(self) -> int:
        phase = self.phase
        if phase == Phase.OVER:
            return TERMINAL
        if phase == Phase.ROLL:
            return CHANCE
        if phase == Phase.START:
            return self.stations.index(None)
        return SIMULTANEOUS

    def players_to_act(self) -> tuple[int, ...]:
        phase, n = self.phase, self.num_players
        if phase == Phase.DESIGN:
            return tuple(p for p in range(n) if self.designs[p] is None)
        if phase == Phase.PLAN:
            return tuple(p for p in range(n) if self.plans[p] is None and self._can_plan(p))
        if phase == Phase.ORDERS:
            return tuple(p for p in range(n) if not self.ready[p])
        return State.players_to_act(self)

    def _can_plan(self, p: int) -> bool:
        ship = self.ships[p]
        return ship.flying and not ship.disabled

    def shots_allowed(self, p: int) -> int:
        """Shots `p` may order this round: one, plus any extra-attack power-ups held."""
        return 1 + self.ships[p].extra_shots

    def legal_actions(self, player: int | None = None) -> list[ArenaAction]:
        if self.phase == Phase.OVER:
            return []
        if self.phase == Phase.ROLL:
            return [Roll(v) for v in range(1, DIE_FACES + 1)] if player is None else []
        to_act = self.players_to_act()
        seats = to_act if player is None else (player,) if player in to_act else ()
        actions: list[ArenaAction] = []
        for p in seats:
            actions.extend(self._legal_for(p))
        return actions

    def _legal_for(self, p: int) -> list[ArenaAction]:
        phase = self.phase
        if phase == Phase.DESIGN:
            return list(_designs(p))
        if phase == Phase.START:
            taken = set(self.stations)
            return [Start(p, self.arena.name(s)) for s in self.arena.starts() if s not in taken]
        if phase == Phase.PLAN:
            ship = self.ships[p]
            speed = ship.max_speed_change
            return list(_plans(p, speed, min(ship.fuel, 3 * speed)))
        # Orders
        out: list[ArenaAction] = [Hold(p)]
        out.extend(Fire(p, target, step) for target, step in self._targets(p))
        return out

    def _frames(self) -> tuple[tuple[Point | None, ...], ...]:
        """Where every ship in play will be at each step of the round still to come (index 0: now)."""
        positions = tuple(s.at if s.flying else None for s in self.ships)
        steps = _predicted(self.arena, positions, tuple(s.velocity for s in self.ships),
                           tuple(s.done for s in self.ships))
        return (positions,) + tuple(r.positions for r in steps)

    def _targets(self, p: int) -> list[tuple[int, int]]:
        """(target, step) pairs `p` can order a shot at: in range at that step as movement is planned."""
        ship = self.ships[p]
        if not ship.flying or len(self.orders[p]) >= self.shots_allowed(p):
            return []
        reach = ship.aim_now * RANGE_PER_AIM
        out = []
        for step, frame in enumerate(self._frames()):
            me = frame[p]
            for target, there in enumerate(frame):
                if target != p and there is not None and axis_distance(me, there) <= reach:
                    out.append((target, self.step + step))
        return out

    def is_secret(self, action: ArenaAction) -> bool:
        # Designs, speed plans and fire orders are chosen in secret; a hold closes a
        # player's orders, so showing it would tell the table how many shots were ordered.
        return isinstance(action, (Design, Plan, Fire, Hold))

    def illegal_reason(self, action: ArenaAction) -> str | None:
        phase, kind = self.phase, type(action)
        if phase == Phase.OVER:
            return "the game is over"
        if kind is Roll:
            if phase != Phase.ROLL:
                return "no shot is waiting for its die"
            return None if 1 <= action.value <= DIE_FACES else f"a d8 shows 1-{DIE_FACES}, not {action.value}"
        p = action.player
        if not isinstance(p, int) or not 0 <= p < self.num_players:
            return f"there is no seat {seat_name(p) if isinstance(p, int) else p!r} with {self.num_players} ships"
        if self.ships[p].destroyed:
            return f"{seat_name(p)}'s ship is destroyed"
        expected = {Phase.DESIGN: (Design,), Phase.START: (Start,), Phase.PLAN: (Plan,),
                    Phase.ORDERS: (Fire, Hold), Phase.ROLL: ()}[phase]
        if kind not in expected:
            wanted = " or ".join(k.__name__.lower() for k in expected) or "die roll"
            return f"the {phase.value} phase needs a {wanted}, not {action}"
        if p not in self.players_to_act():
            if phase == Phase.PLAN and self.ships[p].disabled:
                return f"{seat_name(p)}'s ship is disabled (hull 0) and cannot move"
            return f"it is not {seat_name(p)}'s turn ({self.turn_text()} to act in the {phase.value} phase)"
        if kind is Design:
            values = (action.aim, action.damage, action.hull, action.speed)
            if any(not STAT_MIN <= v <= STAT_MAX for v in values):
                return f"each attribute must be {STAT_MIN}-{STAT_MAX} at set-up ({action})"
            if sum(values) != DESIGN_POINTS:
                return f"the attributes must add up to {DESIGN_POINTS}, not {sum(values)}"
            return None
        if kind is Start:
            try:
                at = self.arena.parse(action.at)
            except ValueError as exc:
                return str(exc)
            if not self.arena.is_start(at):
                return f"{action.at} is not a corner tile of the {self.arena.text} arena"
            return None if at not in self.stations else f"another ship already starts at {action.at}"
        if kind is Plan:
            ship = self.ships[p]
            limit = ship.max_speed_change
            if any(abs(d) > limit for d in action.change):
                return f"{seat_name(p)} may change each speed by at most {limit} (Speed), not {action.change}"
            if action.cost > ship.fuel:
                return f"the plan costs {action.cost} fuel and {seat_name(p)} has {ship.fuel}"
            return None
        if kind is Hold:
            return None
        # Fire
        if action.target == p or not 0 <= action.target < self.num_players:
            return f"{seat_name(p)} cannot fire at {seat_name(action.target)}"
        if not self.ships[action.target].flying:
            return f"{seat_name(action.target)}'s ship is destroyed"
        if len(self.orders[p]) >= self.shots_allowed(p):
            return f"{seat_name(p)} has no shot left this round"
        frames = self._frames()
        index = action.step - self.step
        if not 0 <= index < len(frames):
            return f"movement this round has steps 0-{self.step + len(frames) - 1}, not {action.step}"
        distance = axis_distance(frames[index][p], frames[index][action.target])
        reach = self.ships[p].aim_now * RANGE_PER_AIM
        if distance > reach:
            return (f"at step {action.step} {seat_name(action.target)} will be {distance} away, "
                    f"beyond {seat_name(p)}'s range of {reach} (Aim {self.ships[p].aim_now} x {RANGE_PER_AIM})")
        return None

    def chance_outcomes(self) -> list[tuple[Roll, float]]:
        if self.phase != Phase.ROLL:
            return []
        return [(Roll(v), 1.0 / DIE_FACES) for v in range(1, DIE_FACES + 1)]

    def outcome(self) -> Outcome | None:
        return self.ended

    # --- what the page needs ----------------------------------------------------------------
    def planned_shot_chance(self, shooter: int, target: int, step: int) -> Fraction:
        """Exact hit chance of a shot at `step` of this round's revealed movement, as things stand
        (a ship disabled or destroyed before then would change it)."""
        for entry in self.resolution_order(((shooter, target, step),)):
            if isinstance(entry, ScheduledShot):
                return entry.chance
        return Fraction(0)

    def resolution_order(self, orders: Sequence[tuple[int, int, int]] | None = None
                         ) -> list[ScheduledMove | ScheduledCollision | ScheduledShot]:
        """The rest of this round in the order it resolves: each movement step, then its
        collisions, then the shots ordered at it.

        `orders` are (shooter, target, step); by default the fire orders already given.
        Damage is left out: it is what the dice will decide.
        """
        if orders is None:
            orders = [(p, t, s) for p in range(self.num_players) for t, s in self.orders[p]]
        by_step: dict[int, list[tuple[int, int]]] = {}
        for shooter, target, step in orders:
            by_step.setdefault(step, []).append((shooter, target))
        positions = tuple(s.at if s.flying else None for s in self.ships)
        velocities = tuple(s.velocity for s in self.ships)
        frames = [StepResult(positions, velocities, tuple(s.done for s in self.ships), ())]
        frames.extend(_predicted(self.arena, positions, velocities, frames[0].done))
        out: list[ScheduledMove | ScheduledCollision | ScheduledShot] = []
        last = max([self.step + len(frames) - 1, *by_step])
        for index in range(last - self.step + 1):
            step = self.step + index
            frame = frames[min(index, len(frames) - 1)]
            if 0 < index < len(frames):
                before = frames[index - 1].positions
                moves = tuple((s, before[s], p) for s, p in enumerate(frame.positions)
                              if p is not None and p != before[s])
                out.append(ScheduledMove(step, moves, frame.bumps))
                out.extend(ScheduledCollision(step, pair, frame.positions[pair[0]])
                           for pair in meetings(before, frame.positions))
            for shooter, target in by_step.get(step, ()):
                me, there = frame.positions[shooter], frame.positions[target]
                if me is None or there is None:
                    out.append(ScheduledShot(step, shooter, target, None, None, Fraction(0)))
                    continue
                distance = axis_distance(me, there)
                aim = self.ships[shooter].aim_now
                speed = total_speed(frame.velocities[target])
                out.append(ScheduledShot(step, shooter, target, distance, roll_needed(aim, distance, speed),
                                         hit_chance(aim, distance, speed)))
        return out

    # --- applying actions -------------------------------------------------------------------
    def _resolve(self, action: ArenaAction) -> tuple[ArenaState, list[str]]:
        effects: list[str] = []
        kind = type(action)
        if kind is Design:
            state = replace(self, designs=_set(self.designs, action.player, action))
            if all(d is not None for d in state.designs):
                state = state._reveal_designs(effects)
        elif kind is Start:
            state = self._start(action, effects)
        elif kind is Plan:
            state = replace(self, plans=_set(self.plans, action.player, action.change))
            if not state.players_to_act():
                state = state._reveal_plans(effects)
        elif kind is Fire:
            p = action.player
            orders = _set(self.orders, p, self.orders[p] + ((action.target, action.step),))
            state = replace(self, orders=orders)
            if len(orders[p]) >= self.shots_allowed(p):
                state = replace(state, ready=_set(state.ready, p, True))
            if all(state.ready):
                state = state._reveal_orders(effects)
        elif kind is Hold:
            state = replace(self, ready=_set(self.ready, action.player, True))
            if all(state.ready):
                state = state._reveal_orders(effects)
        else:
            state = self._roll(action, effects)
        return state, effects

    def _reveal_designs(self, effects: list[str]) -> ArenaState:
        ships = tuple(replace(ship, aim=d.aim, damage=d.damage, hull=d.hull, speed=d.speed,
                              fuel=self.rules.fuel_capacity)
                      for ship, d in zip(self.ships, self.designs))
        effects.append("ships revealed: " + ", ".join(f"{seat_name(p)} A{s.aim} D{s.damage} H{s.hull} S{s.speed}"
                                                      for p, s in enumerate(ships)))
        return replace(self, ships=ships, phase=Phase.START)

    def _start(self, action: Start, effects: list[str]) -> ArenaState:
        p, at = action.player, self.arena.parse(action.at)
        effects.append(f"{seat_name(p)} starts at {self.arena.name(at)}, which becomes a refuelling station")
        state = replace(self, stations=_set(self.stations, p, at),
                        ships=_set(self.ships, p, replace(self.ships[p], at=at)))
        if None in state.stations:
            return state
        return state._begin_round(effects)

    def _begin_round(self, effects: list[str]) -> ArenaState:
        number = self.round + 1
        back = tuple(0 if due and number >= due else due for due in self.powerups)
        for spot, (was, now) in zip(self.rules.powerups, zip(self.powerups, back)):
            if was and not now:
                effects.append(f"a {spot.kind} power-up returns at {self.arena.name(spot.at)}")
        ships = tuple(replace(s, done=NO_MOTION) for s in self.ships)
        n = self.num_players
        state = replace(self, phase=Phase.PLAN, round=number, ships=ships, powerups=back,
                        plans=(None,) * n, orders=((),) * n, ready=(True,) * n, step=0, queue=(), hits=())
        if not state.players_to_act():
            return state._reveal_plans(effects)
        return state

    def _reveal_plans(self, effects: list[str]) -> ArenaState:
        ships = list(self.ships)
        said = []
        for p, change in enumerate(self.plans):
            if change is None:
                continue
            s = ships[p]
            v = (s.velocity[0] + change[0], s.velocity[1] + change[1], s.velocity[2] + change[2])
            cost = total_speed(change)
            ships[p] = replace(s, velocity=v, fuel=s.fuel - cost, boost=max(0, s.boost - 1))
            said.append(f"{seat_name(p)} {' '.join(f'{d:+d}' for d in change)} ({cost} fuel): "
                        f"speed {' '.join(f'{d:+d}' for d in v)}")
        if said:
            effects.append(f"round {self.round} plans revealed: " + "; ".join(said))
        state = replace(self, ships=tuple(ships), phase=Phase.ORDERS, plans=(None,) * self.num_players)
        ready = tuple(not state._targets(p) for p in range(self.num_players))
        state = replace(state, ready=ready)
        if all(ready):
            return state._reveal_orders(effects)
        return state

    def _reveal_orders(self, effects: list[str]) -> ArenaState:
        ships = list(self.ships)
        said = []
        for p, orders in enumerate(self.orders):
            if len(orders) > 1:
                ships[p] = replace(ships[p], extra_shots=ships[p].extra_shots - (len(orders) - 1))
            said.extend(f"{seat_name(p)} at {seat_name(t)} after step {s}" for t, s in orders)
        effects.append("fire orders: " + ("; ".join(said) if said else "none"))
        state = replace(self, ships=tuple(ships), phase=Phase.ORDERS)
        return state._take_shots(effects)._run(effects)

    def _take_shots(self, effects: list[str]) -> ArenaState:
        """Queues the shots ordered at the current step; certain ones land (or miss) at once."""
        queue, hits, ships = [], list(self.hits), list(self.ships)
        arena = self.arena
        for p in range(self.num_players):
            for target, step in self.orders[p]:
                if step != self.step:
                    continue
                me, them = self.ships[p], self.ships[target]
                if not me.flying or not them.flying:
                    gone = p if not me.flying else target
                    effects.append(f"{seat_name(p)}'s shot at {seat_name(target)} is void: "
                                   f"{seat_name(gone)}'s ship is destroyed")
                    continue
                distance = axis_distance(me.at, them.at)
                need = roll_needed(me.aim_now, distance, total_speed(them.velocity))
                where = f"{seat_name(p)} at {arena.name(me.at)} fires at {seat_name(target)} at {arena.name(them.at)}"
                if need is None:
                    effects.append(f"{where}: out of range ({distance} > {me.aim_now * RANGE_PER_AIM}), no shot")
                    continue
                heavy = ships[p].heavy_shots > 0
                damage = ships[p].damage_next
                if heavy:
                    ships[p] = replace(ships[p], heavy_shots=ships[p].heavy_shots - 1)
                loss = shot_loss(damage, them.hull)
                shot = QueuedShot(p, target, need, loss)
                kind = f"heavy shot (Damage {damage})" if heavy else "shot"
                if need > DIE_FACES:
                    effects.append(f"{where}, range {distance}: the {kind} cannot hit (would need {need})")
                elif need <= 1:
                    effects.append(f"{where}, range {distance}: the {kind} cannot miss")
                    hits.append((target, loss, p))
                else:
                    effects.append(f"{where}, range {distance}: the {kind} needs {need}+ on the d8")
                    queue.append(shot)
        return replace(self, ships=tuple(ships), queue=tuple(queue), hits=tuple(hits))

    def _roll(self, action: Roll, effects: list[str]) -> ArenaState:
        shot = self.queue[0]
        hits = self.hits
        if action.value >= shot.need:
            effects.append(f"{seat_name(shot.shooter)} rolls {action.value} (needs {shot.need}+): hit")
            hits = hits + ((shot.target, shot.loss, shot.shooter),)
        else:
            effects.append(f"{seat_name(shot.shooter)} rolls {action.value} (needs {shot.need}+): miss")
        state = replace(self, queue=self.queue[1:], hits=hits)
        if state.queue:
            return state
        return replace(state, phase=Phase.ORDERS)._run(effects)

    def _run(self, effects: list[str]) -> ArenaState:
        """From a step whose shots are queued: waits for a die if one is needed; else lands the
        step's hits and moves on, step by step, until a die is needed or the round or game ends."""
        state = self
        while True:
            if state.queue:
                return replace(state, phase=Phase.ROLL)
            state = state._land_hits(effects)
            if state.phase == Phase.OVER:
                return state
            if not state._more_this_round():
                return state._end_round(effects)
            state = state._move(effects)
            if state.phase == Phase.OVER:
                return state
            state = state._take_shots(effects)

    def _more_this_round(self) -> bool:
        moving = any(s.flying and next_axis(s.velocity, s.done) is not None for s in self.ships)
        return moving or any(step > self.step for p, orders in enumerate(self.orders)
                             if self.ships[p].flying for _, step in orders)

    def _land_hits(self, effects: list[str]) -> ArenaState:
        if not self.hits:
            return self
        losses = [0] * self.num_players
        for target, loss, shooter in self.hits:
            losses[target] += loss
            effects.append(f"{seat_name(shooter)}'s hit on {seat_name(target)} removes {loss} hull")
        state = replace(self, hits=())._damage(losses, effects)
        return state._check_end(effects, self.ships)

    def _damage(self, losses: Sequence[int], effects: list[str]) -> ArenaState:
        ships = list(self.ships)
        for p, loss in enumerate(losses):
            if not loss:
                continue
            s = ships[p]
            hull = s.hull - loss
            if hull < 0:
                effects.append(f"{seat_name(p)}'s ship is destroyed (hull {hull})")
                ships[p] = replace(s, hull=hull, velocity=NO_MOTION)
            elif hull == 0:
                effects.append(f"{seat_name(p)}'s ship is disabled at hull 0: it stops dead, "
                               f"aims at {effective_aim(s.aim, 0)}")
                ships[p] = replace(s, hull=0, velocity=NO_MOTION)
            else:
                effects.append(f"{seat_name(p)} is at hull {hull}")
                ships[p] = replace(s, hull=hull)
        return replace(self, ships=tuple(ships))

    def _move(self, effects: list[str]) -> ArenaState:
        """One movement step for everyone, then its collisions and pick-ups."""
        arena, ships = self.arena, self.ships
        before = tuple(s.at if s.flying else None for s in ships)
        result = movement_step(arena, before, tuple(s.velocity for s in ships), tuple(s.done for s in ships))
        step = self.step + 1
        new_ships = list(ships)
        moved, refuelled = [], []
        for p, s in enumerate(ships):
            if before[p] is None:
                continue
            at = result.positions[p]
            fuel = s.fuel
            if at != before[p]:
                moved.append(f"{seat_name(p)} {arena.name(before[p])}-{arena.name(at)}")
                if at in self.stations and fuel < self.rules.fuel_capacity:
                    fuel = min(self.rules.fuel_capacity, fuel + STATION_PASS_FUEL)
                    refuelled.append(f"{seat_name(p)} passes the station at {arena.name(at)}: fuel {fuel}")
            new_ships[p] = replace(s, at=at, velocity=result.velocities[p], done=result.done[p], fuel=fuel)
        if moved:
            effects.append(f"step {step}: " + ", ".join(moved))
        effects.extend(refuelled)
        for p, axis in result.bumps:
            effects.append(f"{seat_name(p)} crashes into the arena wall: its {AXES[axis]} speed drops to 0")
        state = replace(self, step=step, ships=tuple(new_ships))
        pairs = meetings(before, result.positions)
        if pairs:
            state = state._collide(pairs, ships, effects)
        return state._pick_up(effects)

    def _collide(self, pairs: list[tuple[int, int]], before: tuple[Ship, ...], effects: list[str]) -> ArenaState:
        """Collisions of one step, all at once: hulls and speeds as they were coming in."""
        losses = [0] * self.num_players
        for a, b in pairs:
            sa, sb = collision_speed(before[a].velocity), collision_speed(before[b].velocity)
            la, lb = collision_losses(before[a].hull, sa, before[b].hull, sb)
            losses[a] += la
            losses[b] += lb
            effects.append(f"{seat_name(a)} and {seat_name(b)} collide at {self.arena.name(self.ships[a].at)} "
                           f"(collision speeds {sa} and {sb}): {seat_name(a)} takes {sa + sb + before[b].hull} "
                           f"against hull {before[a].hull}, {seat_name(b)} takes {sa + sb + before[a].hull} "
                           f"against hull {before[b].hull}")
        state = self._damage(losses, effects)
        return state._check_end(effects, before)

    def _pick_up(self, effects: list[str]) -> ArenaState:
        if self.phase == Phase.OVER or not self.rules.powerups:
            return self
        ships, due = list(self.ships), list(self.powerups)
        for i, spot in enumerate(self.rules.powerups):
            if due[i]:
                continue
            here = [p for p, s in enumerate(ships) if s.flying and s.at == spot.at]
            if len(here) != 1:
                continue  # nobody there, or a crowd: nobody can claim it this step
            p = here[0]
            ships[p] = _power_up(ships[p], spot.kind)
            due[i] = self.round + self.rules.respawn if self.rules.respawn else -1
            effects.append(f"{seat_name(p)} picks up the {spot.kind} power-up at {self.arena.name(spot.at)}: "
                           f"{POWERUP_KINDS[spot.kind]}")
        return replace(self, ships=tuple(ships), powerups=tuple(due))

    def _check_end(self, effects: list[str], before: tuple[Ship, ...]) -> ArenaState:
        left = [p for p, s in enumerate(self.ships) if s.flying]
        if len(left) > 1:
            return self
        if left:
            effects.append(f"{seat_name(left[0])} is the last ship flying and wins")
            ended = Outcome("last ship flying", (left[0],))
        else:
            last = tuple(p for p, s in enumerate(before) if s.flying)
            effects.append("the last ships are destroyed together: a draw between them")
            ended = Outcome("destroyed together", last)
        return replace(self, phase=Phase.OVER, queue=(), hits=(), ended=ended)

    def _end_round(self, effects: list[str]) -> ArenaState:
        state = self._pick_up(effects)
        ships = list(state.ships)
        cap = self.rules.fuel_capacity
        for p, s in enumerate(ships):
            if s.flying and s.done == NO_MOTION and s.at in self.stations and s.fuel < cap:
                fuel = min(cap, s.fuel + STATION_STOP_FUEL)
                effects.append(f"{seat_name(p)} stands still at the station at {self.arena.name(s.at)}: fuel {fuel}")
                ships[p] = replace(s, fuel=fuel)
        state = replace(state, ships=tuple(ships), orders=((),) * self.num_players)
        flying = tuple(p for p, s in enumerate(ships) if s.flying)
        limit = self.rules.round_limit
        if limit and self.round >= limit:
            effects.append(f"round {limit} was the last: the ships still flying share the result")
            return replace(state, phase=Phase.OVER, ended=Outcome("round limit", flying))
        if state._deadlocked():
            effects.append("no ship can move or shoot any more: the ships still flying share the result")
            return replace(state, phase=Phase.OVER, ended=Outcome("stalemate", flying))
        return state._begin_round(effects)

    def _deadlocked(self) -> bool:
        """Nothing can ever change: every ship left is disabled, none can reach another with a
        shot, and no power-up waits (or will return) under one of them."""
        flying = [s for s in self.ships if s.flying]
        if any(not s.disabled for s in flying):
            return False
        spots = {spot.at for spot, due in zip(self.rules.powerups, self.powerups) if due >= 0}
        if any(s.at in spots for s in flying):
            return False
        return not any(a is not b and axis_distance(a.at, b.at) <= a.aim_now * RANGE_PER_AIM
                       for a in flying for b in flying)

    # --- facts and checks -------------------------------------------------------------------
    def invariant_violations(self) -> list[str]:
        problems = []
        arena, cap = self.arena, self.rules.fuel_capacity
        placed = self.phase not in (Phase.DESIGN, Phase.START)
        for p, s in enumerate(self.ships):
            who = seat_name(p)
            if not 0 <= s.fuel <= cap:
                problems.append(f"{who} has fuel {s.fuel} (0-{cap})")
            if self.phase != Phase.DESIGN:
                for name in ("aim", "damage", "speed"):
                    if not STAT_MIN <= getattr(s, name) <= STAT_LIMIT:
                        problems.append(f"{who} has {name} {getattr(s, name)}")
                if s.hull > STAT_LIMIT:
                    problems.append(f"{who} has hull {s.hull}")
            if placed and s.at is None:
                problems.append(f"{who} is not in the arena")
            if s.at is not None and not arena.contains(s.at):
                problems.append(f"{who} is outside the arena at {s.at}")
            if s.hull <= 0 and s.velocity != NO_MOTION and self.phase != Phase.DESIGN:
                problems.append(f"{who} cannot move (hull {s.hull}) but has speed {s.velocity}")
            if any(not 0 <= d < size for d, size in zip(s.done, (arena.files, arena.ranks, arena.heights))):
                problems.append(f"{who} made impossible moves this round ({s.done})")
            if s.extra_shots < 0 or s.heavy_shots < 0 or s.boost < 0:
                problems.append(f"{who} has a negative power-up count")
        stations = [st for st in self.stations if st is not None]
        if len(stations) != len(set(stations)) or any(not arena.is_start(st) for st in stations):
            problems.append("stations are not distinct corner places")
        if self.phase == Phase.OVER and self.ended is None:
            problems.append("game over without an outcome")
        if self.phase == Phase.ROLL and not self.queue:
            problems.append("waiting for a die with no shot queued")
        if len(self.powerups) != len(self.rules.powerups):
            problems.append("power-up table does not match the rules")
        return problems

    def summary(self) -> dict[str, Any]:
        arena = self.arena
        ships = []
        for p, s in enumerate(self.ships):
            secret = {Phase.DESIGN: self.designs[p] is not None, Phase.PLAN: self.plans[p] is not None,
                      Phase.ORDERS: self.ready[p]}.get(self.phase)
            ships.append({
                "seat": seat_name(p),
                "status": s.status() if self.phase != Phase.DESIGN else "designing",
                "at": None if s.at is None else arena.name(s.at),
                "speed": list(s.velocity),
                "total_speed": total_speed(s.velocity),
                "hull": s.hull, "fuel": s.fuel,
                "aim": s.aim, "aim_now": s.aim_now if s.aim else 0, "damage": s.damage,
                "max_speed_change": s.max_speed_change,
                "extra_shots": s.extra_shots, "heavy_shots": s.heavy_shots, "speed_boost_plans": s.boost,
                "committed": secret,
                "station": None if self.stations[p] is None else arena.name(self.stations[p]),
            })
        order = []
        if self.phase in (Phase.ORDERS, Phase.ROLL) and all(self.ready):
            order = [_schedule_text(arena, e) for e in self.resolution_order()]
        return {
            "game": SPACE_ARENA.name,
            "variant": self.variant,
            "arena": arena.text,
            "round": self.round,
            "phase": self.phase.value,
            "step": self.step,
            "to_act": self.turn_text(),
            "ships": ships,
            "powerups": [{"kind": spot.kind, "at": arena.name(spot.at),
                          "present": due == 0, "returns": due if due > 0 else None}
                         for spot, due in zip(self.rules.powerups, self.powerups)],
            "waiting_shot": None if not self.queue else {
                "shooter": seat_name(self.queue[0].shooter), "target": seat_name(self.queue[0].target),
                "needs": self.queue[0].need},
            "resolution_order": order,
            "outcome": None if self.ended is None else self.ended.to_json(),
        }

    def __str__(self) -> str:
        arena = self.arena
        lines = [f"ARENA ({self.variant}, {arena.text}), round {self.round}, {self.phase.value} phase"
                 + (f", after step {self.step}" if self.phase in (Phase.ORDERS, Phase.ROLL) else "")
                 + f": {self.turn_text()}"]
        for p, s in enumerate(self.ships):
            where = "-" if s.at is None else arena.name(s.at)
            if not s.aim:
                lines.append(f"{seat_name(p)}: designing")
                continue
            lines.append(f"{seat_name(p)}: {s.status():9} at {where:7} speed {' '.join(f'{d:+d}' for d in s.velocity)}"
                         f"  hull {s.hull:>2}  fuel {s.fuel:>3}  A{s.aim_now} D{s.damage} S{s.max_speed_change}")
        for spot, due in zip(self.rules.powerups, self.powerups):
            state = "here" if due == 0 else "gone" if due < 0 else f"back in round {due}"
            lines.append(f"power-up {spot.kind} at {arena.name(spot.at)}: {state}")
        if self.ended is not None:
            winners = ", ".join(seat_name(p) for p in self.ended.winners) or "nobody"
            lines.append(f"Game over ({self.ended.termination}): {winners}")
        return "\n".join(lines)

    def to_json(self) -> dict[str, Any]:
        arena = self.arena

        def place(p: Point | None) -> str | None:
            return None if p is None else arena.name(p)

        return {
            "game": SPACE_ARENA.name,
            "players": self.num_players,
            "variant": self.variant,
            "rules": self.rules.to_json(),
            "phase": self.phase.value,
            "round": self.round,
            "ships": [{"aim": s.aim, "damage": s.damage, "hull": s.hull, "speed": s.speed, "at": place(s.at),
                       "velocity": list(s.velocity), "fuel": s.fuel, "boost": s.boost,
                       "extra_shots": s.extra_shots, "heavy_shots": s.heavy_shots, "done": list(s.done)}
                      for s in self.ships],
            "stations": [place(p) for p in self.stations],
            "designs": [None if d is None else str(d) for d in self.designs],
            "plans": [None if v is None else list(v) for v in self.plans],
            "orders": [[list(o) for o in orders] for orders in self.orders],
            "ready": list(self.ready),
            "step": self.step,
            "queue": [[q.shooter, q.target, q.need, q.loss] for q in self.queue],
            "hits": [list(h) for h in self.hits],
            "powerups": list(self.powerups),
            "ended": None if self.ended is None else self.ended.to_json(),
        }


def _power_up(ship: Ship, kind: str) -> Ship:
    if kind == "speed":
        return replace(ship, boost=SPEED_BOOST_ROUNDS)
    if kind == "attack":
        return replace(ship, extra_shots=ship.extra_shots + 1)
    if kind == "heavy":
        return replace(ship, heavy_shots=ship.heavy_shots + 1)
    return replace(ship, hull=min(STAT_LIMIT, ship.hull + 1))


def _schedule_text(arena: Arena, entry: ScheduledMove | ScheduledCollision | ScheduledShot) -> str:
    if isinstance(entry, ScheduledMove):
        moves = ", ".join(f"{seat_name(p)} {arena.name(a)}-{arena.name(b)}" for p, a, b in entry.moves)
        bumps = "".join(f", {seat_name(p)} hits the wall ({AXES[axis]})" for p, axis in entry.bumps)
        return f"step {entry.step}: {moves or 'nobody moves'}{bumps}"
    if isinstance(entry, ScheduledCollision):
        a, b = entry.seats
        return f"step {entry.step}: {seat_name(a)} and {seat_name(b)} collide at {arena.name(entry.at)}"
    shot = f"step {entry.step}: {seat_name(entry.shooter)} fires at {seat_name(entry.target)}"
    if entry.distance is None:
        return f"{shot} (void)"
    if entry.need is None:
        return f"{shot}, range {entry.distance}: out of range"
    return f"{shot}, range {entry.distance}, needs {entry.need}+: chance {entry.chance}"


def _set(values: tuple, index: int, value: Any) -> tuple:
    return values[:index] + (value,) + values[index + 1:]


# --- the game -------------------------------------------------------------------------------

class SpaceArena(Game):
    name: ClassVar[str] = "space-arena"
    title: ClassVar[str] = "ARENA space combat"
    min_players: ClassVar[int] = 2
    max_players: ClassVar[int] = 6
    variants: ClassVar[Mapping[str, str]] = {
        "standard": "8x8x8 arena, 100 fuel, no power-ups, 40 rounds at most",
        POWERUPS_VARIANT: "as standard, with one pick-up point of each power-up kind around the middle",
    }
    playout_limit: ClassVar[int] = 5000

    def new_initial_state(self, num_players: int, variant: str = "standard",
                          options: Mapping[str, Any] | None = None) -> ArenaState:
        self.check_player_count(num_players)
        self.check_variant(variant)
        rules = rules_from_options(variant, options)
        if len(rules.arena.starts()) < num_players:
            raise GameError(f"a {rules.arena.text} arena has too few starting places for {num_players} ships")
        n = num_players
        return ArenaState(
            num_players=n, variant=variant, rules=rules, phase=Phase.DESIGN, round=0,
            ships=(Ship(fuel=rules.fuel_capacity),) * n, stations=(None,) * n, designs=(None,) * n,
            plans=(None,) * n, orders=((),) * n, ready=(True,) * n, step=0, queue=(), hits=(),
            powerups=(0,) * len(rules.powerups), ended=None)

    def parse_action(self, text: str) -> ArenaAction:
        return parse_action(text)

    def state_from_json(self, data: Mapping[str, Any]) -> ArenaState:
        try:
            n = int(data["players"])
            variant = str(data["variant"])
            r = data["rules"]
            rules = rules_from_options(variant, {"size": list(r["size"]), "fuel": r["fuel"],
                                                 "round_limit": r["round_limit"], "respawn": r["respawn"],
                                                 "powerups": list(r["powerups"])})
            arena = rules.arena

            def place(text: str | None) -> Point | None:
                return None if text is None else arena.parse(text)

            def vector(v: list[int]) -> Vector:
                if len(v) != 3:
                    raise GameError(f"a speed needs three numbers, got {v!r}")
                return (int(v[0]), int(v[1]), int(v[2]))

            def design(text: str | None) -> Design | None:
                if text is None:
                    return None
                parsed = parse_action(text)
                if type(parsed) is not Design:
                    raise GameError(f"expected a design in state data, got {text!r}")
                return parsed

            ships = tuple(Ship(aim=int(s["aim"]), damage=int(s["damage"]), hull=int(s["hull"]), speed=int(s["speed"]),
                               at=place(s["at"]), velocity=vector(s["velocity"]), fuel=int(s["fuel"]),
                               boost=int(s["boost"]), extra_shots=int(s["extra_shots"]),
                               heavy_shots=int(s["heavy_shots"]), done=vector(s["done"]))
                          for s in data["ships"])
            ended = data["ended"]
            state = ArenaState(
                num_players=n, variant=variant, rules=rules, phase=Phase(data["phase"]), round=int(data["round"]),
                ships=ships, stations=tuple(place(p) for p in data["stations"]),
                designs=tuple(design(d) for d in data["designs"]),
                plans=tuple(None if v is None else vector(v) for v in data["plans"]),
                orders=tuple(tuple((int(t), int(s)) for t, s in orders) for orders in data["orders"]),
                ready=tuple(bool(x) for x in data["ready"]), step=int(data["step"]),
                queue=tuple(QueuedShot(int(a), int(b), int(c), int(d)) for a, b, c, d in data["queue"]),
                hits=tuple((int(a), int(b), int(c)) for a, b, c in data["hits"]),
                powerups=tuple(int(x) for x in data["powerups"]),
                ended=None if ended is None else Outcome(str(ended["termination"]),
                                                         tuple(int(x) for x in ended["winners"]), None),
            )
        except (KeyError, TypeError, ValueError) as exc:
            raise GameError(f"bad ARENA state data: {exc!r}") from None
        self.check_variant(state.variant)
        for name in ("ships", "stations", "designs", "plans", "orders", "ready"):
            if len(getattr(state, name)) != n:
                raise GameError(f"bad ARENA state data: {name} has {len(getattr(state, name))} entries for {n} players")
        return state


SPACE_ARENA = register(SpaceArena())
