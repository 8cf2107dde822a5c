"""Ice Arena (Grendel, 2005, initial design v1.0): pyramid bots fighting on a hex board.

Rules: ../shared/rules/ice-arena.txt. Rulings where the text is silent: docs/rulings/ice-arena.md.

A bot is a stack: large and medium pieces (bottom to top) whose colours give attributes
(red Attack, green Defend, blue Move, yellow Ability), then small pieces, the top one the
owner's cap. The lowest large with a medium directly on it gives the primary and secondary
attributes, and so the bot's unique weapon. Small pieces are the bot's life: each point of
damage plays or discards one, and a bot that loses its cap is destroyed.

Each round, as nodes of the shared interface:

    PICK (simultaneous, one bot at a time) -> ABILITY d8s (chance) -> PLACE (lowest Ability
    first; redraws are chance) -> DEFEND d6s, then extra d6s bought -> ATTACK d10s, extra
    d10s -> red turrets fire (a d10 each) -> corrosion hits -> attack dice resolved lowest
    first -> MOVE d4s, extra d4s -> bots move, lowest Move first (ties drawn by chance)
    -> MISC (most damaged first) -> corrosion scrubbed.
Whenever a bot takes a point of damage its owner answers at once (play or discard a small).
The "at any time" actions (large red / green / yellow powers, scrubbing corrosion) are open
to a player whenever that player has the floor (see `IceArenaState.anytime_actions`).

Action text forms (seat P1.., bots named by seat number and letter, hexes as axial 'q,r'):

    P1 1A pick d4 d10        P1 1A pick -
    P1 1A place blue 1,0 NE  P1 1A place red 0,1   P1 1A push green 1,-1   P1 1A orient red 0,1 E
    P1 1A buy 2              P1 1A done
    P1 1A rifle 2,-1         P1 1A acid NE         P1 1A strike 1,1 2,1    P1 1A throw 1,0 -1,2
    P1 1A mines 0,1          P1 1A detonate 0,1    P1 1A hold
    P1 1A play yellow 2,2    P1 1A discard red     (answering a point of damage)
    P1 1A to 2,-3            P1 1A add green       P1 1A rearrange green-L red-M blue-M
    P1 1A scrub red          (discarding a small to remove a corrosion token)
    P1 1A toss               P1 1A land 1,0 3,-2   (large yellow: toss the adjacent yellows, then land each)
    d8=3  (chance: a die)    draw blue (chance: a redrawn small)    first 2B (chance: a Move tie)
"""

from __future__ import annotations

from collections import deque
from collections.abc import Mapping
from dataclasses import dataclass, replace
from itertools import permutations
from typing import Any, ClassVar

from companion.boards.hexgrid import HEX_DIRECTIONS, HexDirection, HexGrid, hex_grid
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
from companion.pieces import PIECES_PER_SIZE_IN_STASH, Colour, Pyramid, Size

PIPS_PER_PLAYER = 20
DEFAULT_RADIUS = 4
DEFAULT_STASHES = 2
PLAYER_COLOURS = (Colour.RED, Colour.YELLOW, Colour.GREEN, Colour.BLUE)
ATTRIBUTES = ("attack", "defend", "move", "ability")
ATTACK, DEFEND, MOVE, ABILITY = range(4)
COLOUR_ATTRIBUTE = {Colour.RED: ATTACK, Colour.GREEN: DEFEND, Colour.BLUE: MOVE, Colour.YELLOW: ABILITY}
# Dice per attribute, and the order the pick text lists them in.
DIE_SIDES = {MOVE: 4, DEFEND: 6, ABILITY: 8, ATTACK: 10}
PICK_ORDER = (MOVE, DEFEND, ABILITY, ATTACK)
SPECIAL_CEILING = 5  # an Ability die scores a special at or under Ability and at or under 5


@dataclass(frozen=True, slots=True)
class Weapon:
    name: str
    ct: int  # critical threshold; 11 means no critical hits
    reach: int | None  # hexes; None: no range limit
    specials: int  # cost to fire
    blocked: bool  # stopped by bots and small greens in the way


WEAPONS = {w.name: w for w in (
    Weapon("rifle", 11, 10, 0, True),
    Weapon("shotgun", 9, 2, 0, True),
    Weapon("mortar", 11, None, 2, False),
    Weapon("laser", 10, None, 1, True),
    Weapon("minigun", 10, 4, 0, True),
    Weapon("flame", 9, 2, 1, True),
    Weapon("smash", 8, 1, 0, True),
    Weapon("mines", 11, 1, 2, False),
    Weapon("corrode", 11, 1, 0, True),
    Weapon("acid", 10, 6, 0, True),
    Weapon("strike", 9, 2, 1, False),
    Weapon("throw", 9, 1, 1, True),
)}
MINE_GROUND_ZERO_CT = 7
TURRET_CT = 11  # a small red fires as Laser(11)
UNIQUE_WEAPON = {
    (ABILITY, ABILITY): "mortar", (MOVE, ABILITY): "laser",
    (DEFEND, ATTACK): "minigun", (DEFEND, MOVE): "minigun",
    (ATTACK, ABILITY): "flame",
    (ATTACK, ATTACK): "smash", (ATTACK, MOVE): "smash", (MOVE, ATTACK): "smash",
    (DEFEND, ABILITY): "mines", (ABILITY, DEFEND): "mines",
    (MOVE, MOVE): "corrode", (MOVE, DEFEND): "corrode",
    (ATTACK, DEFEND): "acid", (DEFEND, DEFEND): "acid",
    (ABILITY, MOVE): "strike", (ABILITY, ATTACK): "throw",
}

# The default teams: 20 pips each, two bots of 10 (3 core pieces, two spare smalls and the cap).
# Seats get different pairs so that a table sees several unique weapons.
DEFAULT_TEAMS = (
    ("red-L blue-M red-M blue-S green-S {cap}-S", "yellow-L red-M green-M red-S yellow-S {cap}-S"),
    ("green-L red-M blue-M blue-S green-S {cap}-S", "yellow-L yellow-M red-M red-S yellow-S {cap}-S"),
    ("blue-L yellow-M red-M blue-S green-S {cap}-S", "green-L green-M red-M red-S yellow-S {cap}-S"),
    ("red-L yellow-M blue-M blue-S green-S {cap}-S", "yellow-L green-M red-M red-S yellow-S {cap}-S"),
)


class BuildError(GameError):
    """A bot or team that breaks the building rules; the message names the bot."""


# --- bots ------------------------------------------------------------------------------------

@dataclass(frozen=True, slots=True)
class Bot:
    """One bot. `core` is its large and medium pieces, bottom to top; `spares` its small pieces
    other than the cap (kept sorted); the cap, of the owner's colour, is implicit while the bot
    lives. The rest is this round's bookkeeping."""

    id: str
    owner: int
    core: tuple[Pyramid, ...]
    spares: tuple[Colour, ...]
    cell: int
    hits: int = 0  # a regular hit waiting for its pair
    corrosion: int = 0
    specials: int = 0
    ability_now: int = 0  # Ability for this round, fixed in the ability phase
    picks: tuple[int, int, int, int] | None = None  # dice picked per attribute index
    defend_roll: int = 0
    move_roll: int = 0
    attack_dice: tuple[int, ...] = ()
    placed: int = 0
    added: bool = False
    rearranged: bool = False
    damage_taken: int = 0  # points of damage paid so far in the game (scrubbing included)

    def base(self, attribute: int) -> int:
        return 1 + sum(1 for p in self.core if COLOUR_ATTRIBUTE[p.colour] == attribute)

    @property
    def pair(self) -> tuple[Pyramid, Pyramid]:
        return core_pair(self.core)

    @property
    def primary(self) -> int:
        return COLOUR_ATTRIBUTE[self.pair[0].colour]

    @property
    def secondary(self) -> int:
        return COLOUR_ATTRIBUTE[self.pair[1].colour]

    @property
    def unique_weapon(self) -> str:
        return UNIQUE_WEAPON[(self.primary, self.secondary)]

    @property
    def weapons(self) -> tuple[str, ...]:
        return ("rifle", "shotgun", self.unique_weapon)

    @property
    def dice_allowed(self) -> int:
        return len(self.core)

    @property
    def life(self) -> int:
        """Small pieces left, the cap included."""
        return len(self.spares) + 1

    def has_large(self, colour: Colour) -> bool:
        return any(p.size is Size.LARGE and p.colour is colour for p in self.core)

    def defend_now(self) -> int:
        return self.base(DEFEND) + self.defend_roll

    def move_now(self) -> int:
        return self.base(MOVE) + self.move_roll

    def stack_text(self, cap: Colour) -> str:
        return " ".join([*(str(p) for p in self.core), *(f"{c.value}-S" for c in self.spares), f"{cap.value}-S"])


def core_pair(core: tuple[Pyramid, ...]) -> tuple[Pyramid, Pyramid]:
    """The lowest large with a medium directly on it: (primary, secondary)."""
    for low, high in zip(core, core[1:]):
        if low.size is Size.LARGE and high.size is Size.MEDIUM:
            return low, high
    raise BuildError(f"stack {' '.join(map(str, core))} has no large with a medium directly on it")


def parse_build(text: str, owner_colour: Colour) -> tuple[tuple[Pyramid, ...], tuple[Colour, ...]]:
    """Reads a bot written bottom to top ('red-L blue-M green-S red-S'): its core and spare smalls.

    Raises BuildError naming the text when the stack breaks the building rules.
    """
    try:
        pieces = [Pyramid.parse(w) for w in text.split()]
    except ValueError as exc:
        raise BuildError(f"bot {text!r}: {exc}") from None
    for p in pieces:
        if p.colour not in COLOUR_ATTRIBUTE:
            raise BuildError(f"bot {text!r}: {p.colour.value} has no role in Ice Arena (red, yellow, green, blue)")
    core = tuple(p for p in pieces if p.size is not Size.SMALL)
    smalls = [p.colour for p in pieces if p.size is Size.SMALL]
    if pieces[:len(core)] != list(core):
        raise BuildError(f"bot {text!r}: small pieces go on top of the large and medium pieces")
    if not smalls or smalls[-1] is not owner_colour:
        raise BuildError(f"bot {text!r}: must be capped by a small {owner_colour.value} (the owner's colour)")
    try:
        core_pair(core)
    except BuildError as exc:
        raise BuildError(f"bot {text!r}: needs a large with a medium directly on it ({exc})") from None
    return core, tuple(sorted(smalls[:-1], key=_colour_key))


def _colour_key(c: Colour) -> int:
    return PLAYER_COLOURS.index(c)


def build_pips(core: tuple[Pyramid, ...], spares: tuple[Colour, ...]) -> int:
    return sum(p.size.pips for p in core) + len(spares) + 1


# --- pieces on the board -----------------------------------------------------------------------

@dataclass(frozen=True, slots=True, order=True)
class Small:
    """A small piece played into the arena: pointing a direction, or upright (None)."""

    cell: int
    colour: Colour
    direction: HexDirection | None = None

    def to_json(self) -> list[Any]:
        return [self.cell, self.colour.value, self.direction.value if self.direction else None]


@dataclass(frozen=True, slots=True, order=True)
class Mine:
    cell: int
    bot: str


# --- actions ------------------------------------------------------------------------------------

def _dir_text(d: HexDirection | None) -> str:
    return d.value if d is not None else "up"


@dataclass(frozen=True, slots=True)
class Pick:
    """Dice a bot takes this round, as counts per attribute index (attack, defend, move, ability)."""

    player: int
    bot: str
    counts: tuple[int, int, int, int]

    def __str__(self) -> str:
        dice = [f"d{DIE_SIDES[a]}" for a in PICK_ORDER for _ in range(self.counts[a])]
        return f"{seat_name(self.player)} {self.bot} pick {' '.join(dice) or '-'}"


@dataclass(frozen=True, slots=True)
class Place:
    """A small from the bot set into the arena: in the ability phase (`free` False: may cost a
    special, then a replacement is drawn) or as damage (`damage` True: no cost, no redraw)."""

    player: int
    bot: str
    colour: Colour
    cell: str
    direction: HexDirection | None = None
    damage: bool = False

    def __str__(self) -> str:
        verb = "play" if self.damage else "place"
        tail = f" {_dir_text(self.direction)}" if self.colour is Colour.BLUE else ""
        return f"{seat_name(self.player)} {self.bot} {verb} {self.colour.value} {self.cell}{tail}"


@dataclass(frozen=True, slots=True)
class Discard:
    """A small thrown away: as damage when none can be played, or to scrub corrosion."""

    player: int
    bot: str
    colour: Colour
    scrub: bool = False

    def __str__(self) -> str:
        return f"{seat_name(self.player)} {self.bot} {'scrub' if self.scrub else 'discard'} {self.colour.value}"


@dataclass(frozen=True, slots=True)
class Push:
    player: int
    bot: str
    colour: Colour
    cell: str

    def __str__(self) -> str:
        return f"{seat_name(self.player)} {self.bot} push {self.colour.value} {self.cell}"


@dataclass(frozen=True, slots=True)
class Orient:
    player: int
    bot: str
    colour: Colour
    cell: str
    direction: HexDirection | None

    def __str__(self) -> str:
        return f"{seat_name(self.player)} {self.bot} orient {self.colour.value} {self.cell} {_dir_text(self.direction)}"


@dataclass(frozen=True, slots=True)
class Toss:
    """The large yellow's power: one special throws every small yellow next to the bot into
    the air; each is then landed with a `Land` before anything else happens."""

    player: int
    bot: str

    def __str__(self) -> str:
        return f"{seat_name(self.player)} {self.bot} toss"


@dataclass(frozen=True, slots=True)
class Land:
    """Where one tossed small yellow comes down: `origin` is the hex it was tossed from."""

    player: int
    bot: str
    origin: str
    cell: str

    def __str__(self) -> str:
        return f"{seat_name(self.player)} {self.bot} land {self.origin} {self.cell}"


@dataclass(frozen=True, slots=True)
class Buy:
    player: int
    bot: str
    dice: int

    def __str__(self) -> str:
        return f"{seat_name(self.player)} {self.bot} buy {self.dice}"


@dataclass(frozen=True, slots=True)
class Done:
    player: int
    bot: str

    def __str__(self) -> str:
        return f"{seat_name(self.player)} {self.bot} done"


@dataclass(frozen=True, slots=True)
class Fire:
    """One attack die used: a weapon and its hexes (target, centre, jump, destination), or
    `weapon` 'hold' to let the die go; 'detonate' sets off one of the bot's mines."""

    player: int
    bot: str
    weapon: str
    args: tuple[str, ...] = ()

    def __str__(self) -> str:
        return " ".join([seat_name(self.player), self.bot, self.weapon, *self.args])


@dataclass(frozen=True, slots=True)
class MoveTo:
    player: int
    bot: str
    cell: str

    def __str__(self) -> str:
        return f"{seat_name(self.player)} {self.bot} to {self.cell}"


@dataclass(frozen=True, slots=True)
class Add:
    player: int
    bot: str
    colour: Colour

    def __str__(self) -> str:
        return f"{seat_name(self.player)} {self.bot} add {self.colour.value}"


@dataclass(frozen=True, slots=True)
class Rearrange:
    player: int
    bot: str
    core: tuple[Pyramid, ...]

    def __str__(self) -> str:
        return f"{seat_name(self.player)} {self.bot} rearrange {' '.join(map(str, self.core))}"


@dataclass(frozen=True, slots=True)
class Roll:
    """Chance: one die, entered from the table or drawn from the seeded source."""

    sides: int
    value: int
    player: None = None

    def __str__(self) -> str:
        return f"d{self.sides}={self.value}"


@dataclass(frozen=True, slots=True)
class Draw:
    """Chance: the small drawn at random to replace one placed in the ability phase."""

    colour: Colour
    player: None = None

    def __str__(self) -> str:
        return f"draw {self.colour.value}"


@dataclass(frozen=True, slots=True)
class First:
    """Chance: which of the bots tied for the lowest Move moves next."""

    bot: str
    player: None = None

    def __str__(self) -> str:
        return f"first {self.bot}"


IceArenaAction = (Pick | Place | Discard | Push | Orient | Toss | Land | Buy | Done | Fire | MoveTo | Add
                  | Rearrange | Roll | Draw | First)
FIRE_WORDS = {"rifle": 1, "shotgun": 1, "mortar": 1, "laser": 1, "minigun": 1, "flame": 1, "smash": 1,
              "mines": 1, "detonate": 1, "corrode": 1, "acid": 1, "strike": 2, "throw": 2, "hold": 0}


def _hex_word(text: str) -> str:
    parts = text.split(",")
    if len(parts) != 2 or not all(p.lstrip("-").isdigit() and p for p in parts):
        raise InvalidActionError(f"bad hex {text!r} (expected axial q,r such as 0,-2)")
    return f"{int(parts[0])},{int(parts[1])}"


def _direction_word(text: str) -> HexDirection | None:
    if text == "up":
        return None
    try:
        return HexDirection(text)
    except ValueError:
        raise InvalidActionError(f"bad direction {text!r} (expected E, NE, NW, W, SW, SE or up)") from None


def _colour_word(text: str) -> Colour:
    try:
        colour = Colour(text)
    except ValueError:
        colour = None
    if colour not in COLOUR_ATTRIBUTE:
        raise InvalidActionError(f"bad colour {text!r} (expected red, yellow, green or blue)")
    return colour


def _bot_word(text: str) -> str:
    if len(text) < 2 or not text[:-1].isdigit() or not text[-1].isalpha() or not text[-1].isupper():
        raise InvalidActionError(f"bad bot name {text!r} (expected seat number and letter, e.g. 1A)")
    return text


def parse_action(text: str) -> IceArenaAction:
    words = text.split()
    if len(words) == 1 and words[0].startswith("d") and "=" in words[0]:
        sides, _, value = words[0][1:].partition("=")
        if sides in ("4", "6", "8", "10") and value.isdigit() and 1 <= int(value) <= int(sides):
            return Roll(int(sides), int(value))
        raise InvalidActionError(f"bad roll {text!r} (expected d4, d6, d8 or d10 = a face, e.g. d8=3)")
    if len(words) == 2 and words[0] == "draw":
        return Draw(_colour_word(words[1]))
    if len(words) == 2 and words[0] == "first":
        return First(_bot_word(words[1]))
    if len(words) < 3:
        raise InvalidActionError(f"incomplete Ice Arena action {text!r}")
    player, bot, verb, args = parse_seat(words[0]), _bot_word(words[1]), words[2], words[3:]
    if verb == "pick" and args:
        counts = [0, 0, 0, 0]
        if args != ["-"]:
            by_die = {f"d{DIE_SIDES[a]}": a for a in PICK_ORDER}
            for w in args:
                if w not in by_die:
                    raise InvalidActionError(f"bad die {w!r} in {text!r} (expected d4, d6, d8 or d10)")
                counts[by_die[w]] += 1
        action = Pick(player, bot, (counts[0], counts[1], counts[2], counts[3]))
        if str(action) != " ".join(words):
            raise InvalidActionError(f"dice in {text!r} not in order d4 d6 d8 d10")
        return action
    if verb in ("place", "play") and len(args) in (2, 3):
        colour = _colour_word(args[0])
        if (len(args) == 3) != (colour is Colour.BLUE):
            raise InvalidActionError(f"{text!r}: a blue piece names a direction (or up); other colours do not")
        direction = _direction_word(args[2]) if len(args) == 3 else None
        return Place(player, bot, colour, _hex_word(args[1]), direction, verb == "play")
    if verb in ("discard", "scrub") and len(args) == 1:
        return Discard(player, bot, _colour_word(args[0]), verb == "scrub")
    if verb == "push" and len(args) == 2:
        return Push(player, bot, _colour_word(args[0]), _hex_word(args[1]))
    if verb == "orient" and len(args) == 3:
        return Orient(player, bot, _colour_word(args[0]), _hex_word(args[1]), _direction_word(args[2]))
    if verb == "toss" and not args:
        return Toss(player, bot)
    if verb == "land" and len(args) == 2:
        return Land(player, bot, _hex_word(args[0]), _hex_word(args[1]))
    if verb == "buy" and len(args) == 1 and args[0].isdigit() and str(int(args[0])) == args[0]:
        return Buy(player, bot, int(args[0]))
    if verb == "done" and not args:
        return Done(player, bot)
    if verb == "to" and len(args) == 1:
        return MoveTo(player, bot, _hex_word(args[0]))
    if verb == "add" and len(args) == 1:
        return Add(player, bot, _colour_word(args[0]))
    if verb == "rearrange" and args:
        try:
            core = tuple(Pyramid.parse(w) for w in args)
        except ValueError as exc:
            raise InvalidActionError(f"bad stack in {text!r}: {exc}") from None
        if any(str(p) != w for p, w in zip(core, args)):
            raise InvalidActionError(f"bad stack in {text!r} (write pieces as colour-L or colour-M)")
        return Rearrange(player, bot, core)
    if verb in FIRE_WORDS and len(args) == FIRE_WORDS[verb]:
        if verb == "acid":
            try:
                return Fire(player, bot, verb, (HexDirection(args[0]).value,))
            except ValueError:
                raise InvalidActionError(f"bad direction {args[0]!r} in {text!r} (expected E, NE, NW, W, SW or SE)") from None
        return Fire(player, bot, verb, tuple(_hex_word(a) for a in args))
    raise InvalidActionError(f"unknown Ice Arena action {text!r}")


# --- the state -----------------------------------------------------------------------------------

STAGES = ("pick", "ability", "place", "defend", "defend-buy", "attack", "attack-buy", "turrets",
          "corrosion", "dice", "move", "move-buy", "moving", "misc", "scrub")
PHASE_OF_STAGE = {"pick": "dice picking", "ability": "ability", "place": "ability", "defend": "defence",
                  "defend-buy": "defence", "attack": "attack", "attack-buy": "attack", "turrets": "attack",
                  "corrosion": "attack", "dice": "attack", "move": "move", "move-buy": "move", "moving": "move",
                  "misc": "misc", "scrub": "misc"}
_ROLL_STAGE_SIDES = {"ability": 8, "defend": 6, "defend-buy": 6, "attack": 10, "attack-buy": 10,
                     "move": 4, "move-buy": 4, "turrets": 10, "dice": 10}


@dataclass(frozen=True, slots=True)
class IceArenaState(State):
    """A position of Ice Arena.

    `order` holds the bots still to act in this stage, the head acting now (for "moving" it
    is the bots not yet moved, and `mover` the one moving). `rolls` are dice still to be
    thrown, each for a bot. `damage` lists bots owed a point of damage, answered first.
    `turrets` are the cells of the small reds that fire this attack phase (one entry per piece).
    `tossing` holds the origins of small yellows tossed by `tosser` and not yet landed.
    """

    num_players: int
    radius: int
    colours: tuple[Colour, ...]
    bots: tuple[Bot, ...]
    smalls: tuple[Small, ...]
    mines: tuple[Mine, ...]
    pool: tuple[int, int, int, int]  # smalls left in the box, per colour in PLAYER_COLOURS order
    round: int
    stage: str
    order: tuple[str, ...] = ()
    rolls: tuple[str, ...] = ()
    damage: tuple[str, ...] = ()
    turrets: tuple[int, ...] = ()
    mover: str | None = None
    draw_for: str | None = None
    tossing: tuple[int, ...] = ()  # hexes the yellows in the air were tossed from, one per piece
    tosser: str | None = None
    ended: Outcome | None = None

    # --- basics -------------------------------------------------------------------------------
    @property
    def game(self) -> Game:
        return GAME

    @property
    def grid(self) -> HexGrid:
        return hex_grid(self.radius)

    def bot(self, bot_id: str) -> Bot | None:
        for b in self.bots:
            if b.id == bot_id:
                return b
        return None

    def bot_at(self, cell: int) -> Bot | None:
        for b in self.bots:
            if b.cell == cell:
                return b
        return None

    def smalls_at(self, cell: int) -> list[Small]:
        return [s for s in self.smalls if s.cell == cell]

    def _with_bot(self, bot: Bot) -> IceArenaState:
        return replace(self, bots=tuple(bot if b.id == bot.id else b for b in self.bots))

    def ability_at_hex(self, bot: Bot) -> int:
        """Base Ability plus one per small yellow in the bot's hex."""
        return bot.base(ABILITY) + sum(1 for s in self.smalls if s.cell == bot.cell and s.colour is Colour.YELLOW)

    # --- who acts ----------------------------------------------------------------------------
    def current_player(self) -> int:
        if self.ended is not None:
            return TERMINAL
        if self.damage:
            return self.bot(self.damage[0]).owner
        if self.tosser is not None:
            return self.bot(self.tosser).owner
        if self.draw_for is not None or self.rolls:
            return CHANCE
        if self.stage == "pick":
            return SIMULTANEOUS
        if self.stage == "turrets":
            return CHANCE
        if self.stage == "moving" and self.mover is None:
            return CHANCE
        if self.stage == "moving":
            return self.bot(self.mover).owner
        if self.stage == "dice":
            return self.bot(self._next_die()[1]).owner
        return self.bot(self.order[0]).owner

    def players_to_act(self) -> tuple[int, ...]:
        p = self.current_player()
        if p == SIMULTANEOUS:
            return tuple(sorted({b.owner for b in self.bots if b.picks is None}))
        return (p,) if p >= 0 else ()

    def acting_bot(self) -> Bot | None:
        """The bot whose owner must answer now (None at chance, simultaneous and terminal nodes)."""
        p = self.current_player()
        if p < 0:
            return None
        if self.damage:
            return self.bot(self.damage[0])
        if self.tosser is not None:
            return self.bot(self.tosser)
        if self.stage == "moving":
            return self.bot(self.mover)
        if self.stage == "dice":
            return self.bot(self._next_die()[1])
        return self.bot(self.order[0])

    def _next_die(self) -> tuple[int, str]:
        return min((v, b.id) for b in self.bots for v in b.attack_dice)

    # --- chance ------------------------------------------------------------------------------
    def _roll_sides(self) -> int | None:
        if self.draw_for is not None or self.damage or self.tosser is not None or self.ended is not None:
            return None
        if self.rolls or self.stage == "turrets":
            return _ROLL_STAGE_SIDES[self.stage]
        return None

    def chance_outcomes(self) -> list[tuple[IceArenaAction, float]]:
        if self.current_player() != CHANCE:
            return []
        if self.draw_for is not None:
            total = sum(self.pool)
            return [(Draw(c), self.pool[i] / total) for i, c in enumerate(PLAYER_COLOURS) if self.pool[i]]
        sides = self._roll_sides()
        if sides is not None:
            return [(Roll(sides, v), 1 / sides) for v in range(1, sides + 1)]
        tied = self._move_ties()
        return [(First(b), 1 / len(tied)) for b in tied]

    def _move_ties(self) -> list[str]:
        left = [self.bot(i) for i in self.order]
        low = min(b.move_now() for b in left)
        return [b.id for b in left if b.move_now() == low]

    # --- legality ----------------------------------------------------------------------------
    def legal_actions(self, player: int | None = None) -> list[IceArenaAction]:
        p = self.current_player()
        if p == TERMINAL:
            return []
        if p == CHANCE:
            return [a for a, _ in self.chance_outcomes()] if player is None else []
        if p == SIMULTANEOUS:
            seats = self.players_to_act() if player is None else (player,)
            return [a for b in self.bots if b.owner in seats and b.picks is None for a in self._picks(b)]
        if player is not None and player != p:
            return []
        bot = self.acting_bot()
        if self.damage:
            return self._damage_answers(bot)
        if self.tosser is not None:
            return self._landings(bot)
        return list(dict.fromkeys([*self._stage_options(bot), *self.anytime_actions(p)]))

    def _stage_options(self, bot: Bot) -> list[IceArenaAction]:
        """What the acting bot may do in this stage, the "at any time" actions aside."""
        stage = self.stage
        if stage == "place":
            return [*self._placements(bot, damage=False), Done(bot.owner, bot.id)]
        if stage.endswith("-buy"):
            return [Buy(bot.owner, bot.id, n) for n in range(bot.specials + 1)]
        if stage == "dice":
            return [*self._fire_options(bot), Fire(bot.owner, bot.id, "hold")]
        if stage == "moving":
            return [MoveTo(bot.owner, bot.id, self.grid.name(c)) for c in sorted(self.reachable(bot, bot.move_now()))]
        if stage == "misc":
            return [*self._misc_options(bot), Done(bot.owner, bot.id)]
        if stage == "scrub":
            return [*self._scrubs(bot), Done(bot.owner, bot.id)]
        raise AssertionError(f"no player acts in stage {stage}")

    def has_floor(self, player: int) -> bool:
        """Whether `player` is the one to decide now, outside a damage answer or a toss: the
        moments at which the rules' "at any time" actions are taken (ruling 10)."""
        return (self.current_player() == player and not self.damage and self.tosser is None)

    def anytime_actions(self, player: int) -> list[IceArenaAction]:
        """The "at any time" actions open to `player` now, for any of their bots: the large
        red and green powers (turn or push adjacent smalls of that colour), the large yellow's
        toss, and discarding a small to scrub a corrosion token. Empty unless they have the floor."""
        if not self.has_floor(player):
            return []
        out: list[IceArenaAction] = []
        for bot in self.bots:
            if bot.owner == player:
                out.extend(self._powers(bot))
                out.extend(self._scrubs(bot))
        return out

    def _scrubs(self, bot: Bot) -> list[Discard]:
        if not bot.corrosion:
            return []
        return [Discard(bot.owner, bot.id, c, scrub=True) for c in sorted(set(bot.spares), key=_colour_key)]

    def is_secret(self, action: IceArenaAction) -> bool:
        # Dice are picked secretly, bot by bot, and shown when every bot has picked.
        return isinstance(action, Pick)

    def illegal_reason(self, action: IceArenaAction) -> str | None:
        p = self.current_player()
        if p == TERMINAL:
            return "the game is over"
        if action.player is None:
            if p != CHANCE:
                return "no die or draw is awaited now"
            if isinstance(action, Roll):
                sides = self._roll_sides()
                if sides is None:
                    return "no die is being rolled now"
                if action.sides != sides:
                    return f"the die being rolled is a d{sides}, not a d{action.sides}"
                return None
            if isinstance(action, Draw):
                if self.draw_for is None:
                    return "no small is being drawn now"
                if not self.pool[_colour_key(action.colour)]:
                    return f"no small {action.colour.value} is left to draw"
                return None
            if self.draw_for is not None or self._roll_sides() is not None:
                return "a die or a draw is awaited, not a Move tie"
            return None if action.bot in self._move_ties() else f"{action.bot} is not tied for the lowest Move"
        if p == CHANCE:
            return "waiting for chance (a die, draw or tie-break)"
        bot = self.bot(action.bot)
        if bot is None:
            return f"there is no bot {action.bot} in the arena"
        if bot.owner != action.player:
            return f"{action.bot} belongs to {seat_name(bot.owner)}, not {seat_name(action.player)}"
        if p == SIMULTANEOUS:
            if not isinstance(action, Pick):
                return "every bot is picking its dice"
            if bot.picks is not None:
                return f"{bot.id} has already picked its dice"
            return self._pick_problem(bot, action.counts)
        if isinstance(action, (Push, Orient, Toss)) or (isinstance(action, Discard) and action.scrub):
            if not self.has_floor(p):
                return (f"{bot.id} must first answer a point of damage" if self.damage
                        else "the tossed yellows must land first")
            if bot.owner != p:
                return f"{seat_name(p)} has the floor, not {seat_name(bot.owner)}"
            if action in self._powers(bot) or action in self._scrubs(bot):
                return None
            return self._why_not_anytime(bot, action)
        acting = self.acting_bot()
        if bot.id != acting.id:
            return f"{acting.id} ({seat_name(acting.owner)}) acts now, not {bot.id}"
        if isinstance(action, Pick):
            return "dice are picked at the start of a round"
        if self.tosser is not None and not isinstance(action, Land):
            return "the tossed yellows must land first"
        if isinstance(action, Land):
            if self.tosser is None:
                return "no small yellow is in the air"
            return None if action in self._landings(bot) else (
                f"no yellow tossed from {action.origin} can land on {action.cell} "
                "(at most 3 hexes from where it started, no bot, no other colour)")
        # The rest depend on the stage; the bot's own options are few, so they are listed.
        if action in (self._damage_answers(bot) if self.damage else self._stage_options(bot)):
            return None
        return self._why_not(bot, action)

    def _why_not_anytime(self, bot: Bot, action: IceArenaAction) -> str:
        if isinstance(action, Discard):
            if not bot.corrosion:
                return f"{bot.id} has no corrosion token to scrub"
            return f"{bot.id} has no spare small {action.colour.value} (the cap is never discarded to scrub)"
        if bot.specials < 1:
            return f"{bot.id} has no special to spend on a large power"
        colour = Colour.YELLOW if isinstance(action, Toss) else action.colour
        if colour not in (Colour.RED, Colour.GREEN, Colour.YELLOW) or not bot.has_large(colour) or (
                isinstance(action, (Push, Orient)) and colour is Colour.YELLOW):
            what = "toss yellows" if isinstance(action, Toss) else f"move small {colour.value}s"
            return f"{bot.id} has no large piece that lets it {what}"
        if isinstance(action, Toss):
            return f"no small yellow is next to {bot.id}"
        where = f"the small {colour.value} at {action.cell}"
        if isinstance(action, Push):
            return f"{bot.id} cannot push {where} (not adjacent, or the way is blocked)"
        return f"{bot.id} cannot turn {where} that way (not adjacent, or it already points so)"

    def _why_not(self, bot: Bot, action: IceArenaAction) -> str:
        stage = "damage" if self.damage else self.stage
        if isinstance(action, Fire) and stage == "dice":
            usable = (*bot.weapons, "hold", *(("detonate",) if bot.unique_weapon == "mines" else ()))
            if action.weapon not in usable:
                return f"{bot.id} has no {action.weapon} (its weapons: {', '.join(bot.weapons)})"
            cost = WEAPONS[action.weapon].specials if action.weapon in WEAPONS else 0
            if cost > bot.specials:
                return f"{action.weapon} costs {cost} special(s); {bot.id} has {bot.specials}"
            return (f"{bot.id} cannot use {action.weapon} {' '.join(action.args)} from {self.grid.name(bot.cell)}"
                    " (range, line of sight, aim or target)")
        if isinstance(action, MoveTo) and stage == "moving":
            return f"{action.cell} is not a hex {bot.id} can stop on with Move {bot.move_now()}"
        if isinstance(action, Buy) and stage.endswith("-buy"):
            return f"{bot.id} has {bot.specials} special(s) to spend"
        if isinstance(action, Place) and action.damage == (stage == "damage") and stage in ("damage", "place"):
            if action.colour not in bot.spares:
                return f"{bot.id} has no spare small {action.colour.value} (the cap is never played)"
            if not action.damage and bot.placed and not bot.specials:
                return f"{bot.id} has placed its free piece and has no special left"
            return f"{bot.id} cannot put a small {action.colour.value} on {action.cell}"
        if isinstance(action, Discard) and stage == "damage" and not action.scrub:
            if action.colour not in bot.spares:
                return f"{bot.id} has no spare small {action.colour.value}"
            return f"{bot.id} must play a small piece when one can be played"
        if stage == "damage":
            return f"{bot.id} must first answer a point of damage (play or discard a small)"
        return f"{str(action)!r} is not allowed in the {stage} stage"

    def _pick_problem(self, bot: Bot, counts: tuple[int, int, int, int]) -> str | None:
        if sum(counts) > bot.dice_allowed:
            return f"{bot.id} may pick at most {bot.dice_allowed} dice (one per medium or large)"
        for a in PICK_ORDER:
            limit = self.ability_at_hex(bot) if a == ABILITY else bot.base(a)
            if counts[a] > limit:
                return f"{bot.id} may pick at most {limit} d{DIE_SIDES[a]} ({ATTRIBUTES[a]} {limit})"
        return None

    def _picks(self, bot: Bot) -> list[Pick]:
        limits = [self.ability_at_hex(bot) if a == ABILITY else bot.base(a) for a in range(4)]
        out = []
        n = bot.dice_allowed
        for at in range(min(n, limits[0]) + 1):
            for de in range(min(n - at, limits[1]) + 1):
                for mv in range(min(n - at - de, limits[2]) + 1):
                    for ab in range(min(n - at - de - mv, limits[3]) + 1):
                        out.append(Pick(bot.owner, bot.id, (at, de, mv, ab)))
        return out

    # --- placing small pieces --------------------------------------------------------------------
    def _blocked_for_placing(self, cell: int, colour: Colour) -> bool:
        if self.bot_at(cell) is not None:
            return True
        here = self.smalls_at(cell)
        if colour is Colour.RED:
            return any(s.colour is not Colour.RED for s in here)
        if colour is Colour.YELLOW:
            return any(s.colour is not Colour.YELLOW for s in here)
        return bool(here)

    def placement_cells(self, bot: Bot, colour: Colour) -> list[int]:
        """Where `bot` may put a small of `colour`: blues where it could stop this turn, greens and
        reds adjacent, yellows within 3 hexes; never on a bot, never sharing with other colours."""
        grid = self.grid
        if colour is Colour.BLUE:
            cells = self.reachable(bot, bot.move_now()) - {bot.cell}
        elif colour is Colour.YELLOW:
            cells = set(grid.within(bot.cell, 3))
        else:
            cells = set(grid.neighbours(bot.cell))
        return sorted(c for c in cells if not self._blocked_for_placing(c, colour))

    def _placements(self, bot: Bot, damage: bool) -> list[Place]:
        if not damage and bot.placed and not bot.specials:
            return []
        out = []
        for colour in sorted(set(bot.spares), key=_colour_key):
            for cell in self.placement_cells(bot, colour):
                name = self.grid.name(cell)
                if colour is Colour.BLUE:
                    out.extend(Place(bot.owner, bot.id, colour, name, d, damage) for d in (*HEX_DIRECTIONS, None))
                else:
                    out.append(Place(bot.owner, bot.id, colour, name, None, damage))
        return out

    def _damage_answers(self, bot: Bot) -> list[IceArenaAction]:
        plays = self._placements(bot, damage=True)
        if plays:
            return plays
        return [Discard(bot.owner, bot.id, c) for c in sorted(set(bot.spares), key=_colour_key)]

    def _powers(self, bot: Bot) -> list[IceArenaAction]:
        """Pushes and turns of adjacent small reds and greens, for a bot with a large of that
        colour, and the large yellow's toss when a small yellow is adjacent."""
        if bot.specials < 1:
            return []
        out: list[IceArenaAction] = []
        grid = self.grid
        if bot.has_large(Colour.YELLOW) and self.tossable(bot):
            out.append(Toss(bot.owner, bot.id))
        for colour in (Colour.RED, Colour.GREEN):
            if not bot.has_large(colour):
                continue
            for cell in grid.neighbours(bot.cell):
                here = [s for s in self.smalls_at(cell) if s.colour is colour]
                if not here:
                    continue
                name = grid.name(cell)
                if self._push_line(bot, cell, colour) is not None:
                    out.append(Push(bot.owner, bot.id, colour, name))
                now = here[0].direction
                out.extend(Orient(bot.owner, bot.id, colour, name, d) for d in (*HEX_DIRECTIONS, None) if d != now)
        return out

    def tossable(self, bot: Bot) -> list[Small]:
        """The small yellows a large yellow on `bot` would toss: those in the six hexes next to it."""
        near = set(self.grid.neighbours(bot.cell))
        return [s for s in self.smalls if s.colour is Colour.YELLOW and s.cell in near]

    def toss_landings(self, origin: int) -> list[int]:
        """Hexes a yellow tossed from `origin` may come down on: at most 3 hexes away, with the
        placement rule of small yellows (no bot; only other yellows may share the hex)."""
        return [c for c in self.grid.within(origin, 3) if not self._blocked_for_placing(c, Colour.YELLOW)]

    def _landings(self, bot: Bot) -> list[Land]:
        name = self.grid.name
        return [Land(bot.owner, bot.id, name(origin), name(c))
                for origin in sorted(set(self.tossing)) for c in self.toss_landings(origin)]

    def _push_line(self, bot: Bot, cell: int, colour: Colour) -> list[int] | None:
        """The cells whose pieces of `colour` move one hex directly away from `bot` when it
        pushes the piece at `cell` (a line of that colour moves together), or None if blocked."""
        grid = self.grid
        direction = grid.direction_between(bot.cell, cell)
        line = [cell]
        nxt = grid.step(cell, direction)
        while nxt is not None and any(s.colour is colour for s in self.smalls_at(nxt)):
            line.append(nxt)
            nxt = grid.step(nxt, direction)
        if nxt is None or self.bot_at(nxt) is not None or self.smalls_at(nxt):
            return None
        return line

    # --- movement ---------------------------------------------------------------------------------
    def reachable(self, bot: Bot, steps: int) -> set[int]:
        """Hexes `bot` could stop on with `steps` of movement (its own hex included).

        A small blue pointing the way the bot moves is passed as if the hex were not there;
        any other blue blocks, except that a bot with a large blue may cross it, paying a step,
        without stopping on it. Bots block.
        """
        grid = self.grid
        blues = {s.cell: s.direction for s in self.smalls if s.colour is Colour.BLUE}
        occupied = {b.cell for b in self.bots if b.id != bot.id}
        crosses = bot.has_large(Colour.BLUE)
        best = {bot.cell: 0}
        todo = deque([bot.cell])
        stops = {bot.cell}
        while todo:
            cell = todo.popleft()
            cost = best[cell]
            if cost >= steps:
                continue
            for d in HEX_DIRECTIONS:
                nxt = grid.step(cell, d)
                # Conveyor: a blue pointing our way is skipped, possibly several in a row.
                while nxt is not None and nxt in blues and blues[nxt] is d:
                    nxt = grid.step(nxt, d)
                if nxt is None or nxt in occupied:
                    continue
                if nxt in blues and not crosses:
                    continue
                if nxt not in best:
                    best[nxt] = cost + 1
                    todo.append(nxt)
                    if nxt not in blues:
                        stops.add(nxt)
        return stops

    # --- attacking ----------------------------------------------------------------------------------
    def blockers(self, *ends: int) -> set[int]:
        """Hexes that stop a blocked weapon: bots and small greens (the ends excepted)."""
        out = {b.cell for b in self.bots} | {s.cell for s in self.smalls if s.colour is Colour.GREEN}
        return out.difference(ends)

    def _aim_ok(self, bot: Bot, cell: int) -> bool:
        """A bot on a small green pointing somewhere may only attack straight that way."""
        for s in self.smalls:
            if s.cell == bot.cell and s.colour is Colour.GREEN and s.direction is not None:
                return self.grid.straight_direction(bot.cell, cell) is s.direction
        return True

    def _sees(self, bot: Bot, cell: int) -> bool:
        return self._aim_ok(bot, cell) and self.grid.line_of_sight(bot.cell, cell, self.blockers(bot.cell, cell))

    def green_at(self, cell: int) -> Small | None:
        for p in self.smalls:
            if p.cell == cell and p.colour is Colour.GREEN:
                return p
        return None

    def trace(self, start: int, direction: HexDirection, reach: int | None) -> int | None:
        """The hex of the first bot a shot leaving `start` in `direction` meets within `reach`
        hexes of travel (None: no limit), or None when nothing is hit.

        A small green pointing upward stops the shot; one pointing a direction turns it that
        way (ruling 20); a bot on a green's hex is hit before the green acts. The shot may come
        back to its own start hex, which then counts as any other.
        """
        grid = self.grid
        cell, seen, travelled = start, set(), 0
        while reach is None or travelled < reach:
            cell = grid.step(cell, direction)
            if cell is None or (cell, direction) in seen:
                return None
            seen.add((cell, direction))
            travelled += 1
            if self.bot_at(cell) is not None:
                return cell
            green = self.green_at(cell)
            if green is not None:
                if green.direction is None:
                    return None
                direction = green.direction
        return None

    def shot_targets(self, bot: Bot, reach: int | None) -> set[int]:
        """Hexes of the bots a single shot from `bot` can hit with `reach` hexes of travel
        (None: no limit): straight at a bot in line of sight (bots and greens partly in the way
        block), or at a pointed green in line of sight that turns the shot onto a bot. A bot on a
        pointed green shoots only that way. Friendly bots are included; callers filter."""
        grid = self.grid
        aim = self.green_at(bot.cell)
        if aim is not None and aim.direction is not None:
            hit = self.trace(bot.cell, aim.direction, reach)
            return set() if hit is None or hit == bot.cell else {hit}
        out = set()
        blocking = self.blockers()
        for other in self.bots:
            if other.id != bot.id and (reach is None or grid.distance(bot.cell, other.cell) <= reach) \
                    and grid.line_of_sight(bot.cell, other.cell, blocking - {bot.cell, other.cell}):
                out.add(other.cell)
        for green in self.smalls:
            if green.colour is not Colour.GREEN or green.direction is None or self.bot_at(green.cell) is not None:
                continue
            gap = grid.distance(bot.cell, green.cell)
            if (reach is None or gap < reach) and grid.line_of_sight(bot.cell, green.cell,
                                                                    blocking - {bot.cell, green.cell}):
                hit = self.trace(green.cell, green.direction, None if reach is None else reach - gap)
                if hit is not None and hit != bot.cell:
                    out.add(hit)
        return out

    def flame_area(self, centre: int) -> list[Bot]:
        near = set(self.grid.within(centre, 1))
        return [b for b in self.bots if b.cell in near]

    def acid_line(self, bot: Bot, direction: HexDirection) -> list[Bot]:
        """Bots along 6 hexes of stream: it passes through bots, hitting each; a small green
        pointing upward stops it, one pointing a direction turns it that way (a bot on the
        green's hex is hit first either way). The shooter is never its own target."""
        grid = self.grid
        out: list[Bot] = []
        cell = bot.cell
        for _ in range(WEAPONS["acid"].reach):
            cell = grid.step(cell, direction)
            if cell is None:
                break
            target = self.bot_at(cell)
            if target is not None and target.id != bot.id and target not in out:
                out.append(target)
            green = self.green_at(cell)
            if green is not None:
                if green.direction is None:
                    break
                direction = green.direction
        return out

    def _fire_options(self, bot: Bot) -> list[Fire]:
        grid = self.grid
        name = grid.name
        enemies = [b for b in self.bots if b.owner != bot.owner]
        out: list[Fire] = []
        for weapon_name in bot.weapons:
            w = WEAPONS[weapon_name]
            if w.specials > bot.specials:
                continue
            if weapon_name in ("rifle", "shotgun", "laser", "minigun"):
                reached = self.shot_targets(bot, w.reach)
                out.extend(Fire(bot.owner, bot.id, weapon_name, (name(e.cell),)) for e in enemies if e.cell in reached)
            elif weapon_name == "smash":
                out.extend(Fire(bot.owner, bot.id, "smash", (name(e.cell),)) for e in enemies
                           if grid.distance(bot.cell, e.cell) == 1 and self._aim_ok(bot, e.cell))
            elif weapon_name == "mortar":
                # No range or blocking limit, but a bot on a pointed green still aims only that way.
                out.extend(Fire(bot.owner, bot.id, "mortar", (name(e.cell),)) for e in enemies
                           if self._aim_ok(bot, e.cell))
            elif weapon_name == "corrode":
                out.extend(Fire(bot.owner, bot.id, "corrode", (name(e.cell),)) for e in enemies
                           if grid.distance(bot.cell, e.cell) == 1 and self._aim_ok(bot, e.cell))
            elif weapon_name == "flame":
                for c in grid.within(bot.cell, 2):
                    if grid.distance(bot.cell, c) == 2 and self._sees(bot, c) and any(
                            b.owner != bot.owner for b in self.flame_area(c)):
                        out.append(Fire(bot.owner, bot.id, "flame", (name(c),)))
            elif weapon_name == "acid":
                for d in HEX_DIRECTIONS:
                    if self._aim_dir_ok(bot, d) and any(b.owner != bot.owner for b in self.acid_line(bot, d)):
                        out.append(Fire(bot.owner, bot.id, "acid", (d.value,)))
            elif weapon_name == "mines":
                if len([m for m in self.mines if m.bot == bot.id]) < bot.base(DEFEND) + bot.base(ABILITY):
                    taken = {m.cell for m in self.mines}
                    out.extend(Fire(bot.owner, bot.id, "mines", (name(c),)) for c in grid.within(bot.cell, 1)
                               if c not in taken)
            elif weapon_name == "strike":
                for land in self._strike_landings(bot):
                    for e in enemies:
                        if grid.distance(land, e.cell) == 1:
                            out.append(Fire(bot.owner, bot.id, "strike", (name(land), name(e.cell))))
            elif weapon_name == "throw":
                for e in enemies:
                    if grid.distance(bot.cell, e.cell) == 1 and self._aim_ok(bot, e.cell):
                        for dest in self._throw_destinations(bot, e):
                            out.append(Fire(bot.owner, bot.id, "throw", (name(e.cell), name(dest))))
        if bot.unique_weapon == "mines":
            out.extend(Fire(bot.owner, bot.id, "detonate", (name(m.cell),)) for m in self.mines if m.bot == bot.id)
        return out

    def _aim_dir_ok(self, bot: Bot, direction: HexDirection) -> bool:
        for s in self.smalls:
            if s.cell == bot.cell and s.colour is Colour.GREEN and s.direction is not None:
                return s.direction is direction
        return True

    def _free_for_bot(self, cell: int, moving: Bot) -> bool:
        """A hex a bot may be put on: no other bot and no small blue (never, by any means)."""
        other = self.bot_at(cell)
        return (other is None or other.id == moving.id) and not any(
            s.colour is Colour.BLUE for s in self.smalls_at(cell))

    def _strike_landings(self, bot: Bot) -> list[int]:
        grid = self.grid
        return [c for c in grid.within(bot.cell, 2) if c != bot.cell and self._free_for_bot(c, bot)]

    def _throw_destinations(self, bot: Bot, target: Bot) -> list[int]:
        grid = self.grid
        return [c for c in grid.within(bot.cell, 2) if c != bot.cell and self._free_for_bot(c, target)]

    def turret_targets(self, cell: int) -> list[Bot]:
        """Bots a small red at `cell` hits: the first bot its shot meets along its direction (see
        `trace`: greens stop or turn it), or, pointing up, every bot within 2 hexes in line of sight.
        A bot sharing the red's hex is never its target."""
        pieces = [s for s in self.smalls_at(cell) if s.colour is Colour.RED]
        if not pieces:
            return []
        direction = pieces[0].direction
        grid = self.grid
        if direction is None:
            return [b for b in self.bots if b.cell != cell and grid.distance(cell, b.cell) <= 2
                    and grid.line_of_sight(cell, b.cell, self.blockers(cell, b.cell))]
        hit = self.trace(cell, direction, None)
        return [] if hit is None or hit == cell else [self.bot_at(hit)]

    def _misc_options(self, bot: Bot) -> list[IceArenaAction]:
        out: list[IceArenaAction] = []
        cost = bot.base(ABILITY) + 1
        if bot.specials < cost:
            return out
        if not bot.added:
            out.extend(Add(bot.owner, bot.id, c) for i, c in enumerate(PLAYER_COLOURS) if self.pool[i])
        if not bot.rearranged:
            seen = {bot.core}
            for core in permutations(bot.core):
                if core in seen:
                    continue
                seen.add(core)
                try:
                    core_pair(core)
                except BuildError:
                    continue
                out.append(Rearrange(bot.owner, bot.id, core))
        return out

    # --- resolving ----------------------------------------------------------------------------------
    def _resolve(self, action: IceArenaAction) -> tuple[IceArenaState, list[str]]:
        effects: list[str] = []
        s = self
        if isinstance(action, Roll):
            s = s._resolve_roll(action.value, effects)
        elif isinstance(action, Draw):
            bot = s.bot(s.draw_for)
            i = _colour_key(action.colour)
            pool = list(s.pool)
            pool[i] -= 1
            s = replace(s._with_bot(replace(bot, spares=_sorted_colours((*bot.spares, action.colour)))),
                        pool=tuple(pool), draw_for=None)
            effects.append(f"{bot.id} draws a small {action.colour.value}")
        elif isinstance(action, First):
            s = replace(s, mover=action.bot)
            effects.append(f"{action.bot} moves next (tie broken)")
        elif isinstance(action, Pick):
            s = s._with_bot(replace(s.bot(action.bot), picks=action.counts))
            effects.append(f"{action.bot} has picked its dice")
        else:
            s = s._resolve_bot_action(action, effects)
        return s._settle(effects), effects

    def _resolve_roll(self, value: int, effects: list[str]) -> IceArenaState:
        stage = self.stage
        if stage == "turrets":
            cell = self.turrets[0]
            s = replace(self, turrets=self.turrets[1:])
            effects.append(f"small red at {self.grid.name(cell)} fires: d10={value}")
            return s._strike_all(self.turret_targets(cell), value, lambda b: TURRET_CT, effects)
        bot = self.bot(self.rolls[0])
        s = replace(self, rolls=self.rolls[1:])
        if stage == "ability":
            scored = value <= min(bot.ability_now, SPECIAL_CEILING)
            bot = replace(bot, specials=bot.specials + scored)
            effects.append(f"{bot.id} d8={value}" + (" scores a special" if scored else ""))
        elif stage in ("defend", "defend-buy"):
            bot = replace(bot, defend_roll=max(bot.defend_roll, value))
            effects.append(f"{bot.id} d6={value}: Defend {bot.defend_now()}")
        elif stage in ("attack", "attack-buy"):
            bot = replace(bot, attack_dice=tuple(sorted((*bot.attack_dice, value))))
            effects.append(f"{bot.id} d10={value}")
        else:
            bot = replace(bot, move_roll=bot.move_roll + value)
            effects.append(f"{bot.id} d4={value}: Move {bot.move_now()}")
        return s._with_bot(bot)

    def _resolve_bot_action(self, action: IceArenaAction, effects: list[str]) -> IceArenaState:
        s = self
        bot = s.bot(action.bot)
        grid = s.grid
        if isinstance(action, Done):
            if s.stage in ("place", "misc", "scrub"):
                return replace(s, order=s.order[1:])
            raise AssertionError("done outside a stage that takes it")
        if isinstance(action, Buy):
            bot = replace(bot, specials=bot.specials - action.dice)
            effects.append(f"{bot.id} buys {action.dice} extra d{_ROLL_STAGE_SIDES[s.stage]}")
            return replace(s._with_bot(bot), order=s.order[1:], rolls=(bot.id,) * action.dice + s.rolls)
        if isinstance(action, Place):
            cell = grid.parse(action.cell)
            spares = list(bot.spares)
            spares.remove(action.colour)
            direction = action.direction
            if action.colour is Colour.RED:
                existing = [p for p in s.smalls_at(cell) if p.colour is Colour.RED]
                direction = existing[0].direction if existing else None
            smalls = tuple(sorted((*s.smalls, Small(cell, action.colour, direction))))
            if action.damage:
                bot = replace(bot, spares=tuple(spares), damage_taken=bot.damage_taken + 1)
                effects.append(f"{bot.id} plays a small {action.colour.value} on {action.cell} as damage")
                return replace(s._with_bot(bot), smalls=smalls, damage=s.damage[1:])
            paid = 1 if bot.placed else 0
            bot = replace(bot, spares=tuple(spares), placed=bot.placed + 1, specials=bot.specials - paid)
            effects.append(f"{bot.id} places a small {action.colour.value} on {action.cell}"
                           + (" for a special" if paid else " (free)"))
            return replace(s._with_bot(bot), smalls=smalls, draw_for=bot.id if sum(s.pool) else None)
        if isinstance(action, Discard):
            spares = list(bot.spares)
            spares.remove(action.colour)
            bot = replace(bot, spares=tuple(spares), damage_taken=bot.damage_taken + 1)
            if action.scrub:
                # Scrubbing is taking a critical hit; the scrub stage's order drops the bot in
                # `_settle` once it has nothing left to scrub.
                bot = replace(bot, corrosion=bot.corrosion - 1)
                effects.append(f"{bot.id} discards a small {action.colour.value} to scrub a corrosion token")
                return s._with_bot(bot)
            effects.append(f"{bot.id} discards a small {action.colour.value} as damage")
            return replace(s._with_bot(bot), damage=s.damage[1:])
        if isinstance(action, Push):
            cell = grid.parse(action.cell)
            direction = grid.direction_between(bot.cell, cell)
            line = set(s._push_line(bot, cell, action.colour))
            moved = tuple(sorted(Small(grid.step(p.cell, direction), p.colour, p.direction)
                                 if p.cell in line and p.colour is action.colour else p for p in s.smalls))
            effects.append(f"{bot.id} pushes {len(line)} hex(es) of small {action.colour.value} {direction.value}")
            return replace(s._with_bot(replace(bot, specials=bot.specials - 1)), smalls=moved)
        if isinstance(action, Orient):
            cell = grid.parse(action.cell)
            turned = tuple(sorted(Small(p.cell, p.colour, action.direction)
                                  if p.cell == cell and p.colour is action.colour else p for p in s.smalls))
            effects.append(f"{bot.id} turns the small {action.colour.value} on {action.cell} {_dir_text(action.direction)}")
            return replace(s._with_bot(replace(bot, specials=bot.specials - 1)), smalls=turned)
        if isinstance(action, Toss):
            tossed = s.tossable(bot)
            effects.append(f"{bot.id} tosses {len(tossed)} small yellow(s) from "
                           + ", ".join(grid.name(p.cell) for p in tossed))
            return replace(s._with_bot(replace(bot, specials=bot.specials - 1)),
                           smalls=tuple(p for p in s.smalls if p not in tossed),
                           tossing=tuple(sorted(p.cell for p in tossed)), tosser=bot.id)
        if isinstance(action, Land):
            origin, cell = grid.parse(action.origin), grid.parse(action.cell)
            left = list(s.tossing)
            left.remove(origin)
            effects.append(f"the small yellow tossed from {action.origin} lands on {action.cell}")
            return replace(s, smalls=tuple(sorted((*s.smalls, Small(cell, Colour.YELLOW)))),
                           tossing=tuple(left), tosser=bot.id if left else None)
        if isinstance(action, MoveTo):
            effects.append(f"{bot.id} moves to {action.cell}" if grid.parse(action.cell) != bot.cell
                           else f"{bot.id} stays on {action.cell}")
            bot = replace(bot, cell=grid.parse(action.cell))
            return replace(s._with_bot(bot), order=tuple(i for i in s.order if i != bot.id), mover=None)
        if isinstance(action, Add):
            pool = list(s.pool)
            pool[_colour_key(action.colour)] -= 1
            bot = replace(bot, spares=_sorted_colours((*bot.spares, action.colour)), added=True,
                          specials=bot.specials - bot.base(ABILITY) - 1)
            effects.append(f"{bot.id} adds a small {action.colour.value}")
            return replace(s._with_bot(bot), pool=tuple(pool))
        if isinstance(action, Rearrange):
            bot = replace(bot, core=action.core, rearranged=True, specials=bot.specials - bot.base(ABILITY) - 1)
            effects.append(f"{bot.id} rearranges: unique weapon now {bot.unique_weapon}")
            return s._with_bot(bot)
        if isinstance(action, Fire):
            return s._fire(bot, action, effects)
        raise AssertionError(f"unhandled action {action}")

    def _fire(self, bot: Bot, action: Fire, effects: list[str]) -> IceArenaState:
        grid = self.grid
        value = bot.attack_dice[0]
        bot = replace(bot, attack_dice=bot.attack_dice[1:])
        weapon = action.weapon
        if weapon == "hold":
            effects.append(f"{bot.id} lets its d10={value} go")
            return self._with_bot(bot)
        cost = WEAPONS[weapon].specials if weapon in WEAPONS else 0
        bot = replace(bot, specials=bot.specials - cost)
        s = self._with_bot(bot)
        cells = [] if weapon == "acid" else [grid.parse(a) for a in action.args]
        effects.append(f"{bot.id} uses d10={value}: {weapon} {' '.join(action.args)}".rstrip())
        if weapon == "mines":
            return replace(s, mines=tuple(sorted((*s.mines, Mine(cells[0], bot.id)))))
        if weapon == "detonate":
            centre = cells[0]
            s = replace(s, mines=tuple(m for m in s.mines if not (m.cell == centre and m.bot == bot.id)))
            hit = [b for b in s.bots if grid.distance(centre, b.cell) <= 1]
            return s._strike_all(hit, value, lambda b: MINE_GROUND_ZERO_CT if b.cell == centre else 11, effects)
        if weapon == "corrode":
            target = s.bot_at(cells[0])
            effects.append(f"corrosion token under {target.id}")
            return s._with_bot(replace(target, corrosion=target.corrosion + 1))
        ct = WEAPONS[weapon].ct
        if weapon == "flame":
            return s._strike_all(s.flame_area(cells[0]), value, lambda b: ct, effects)
        if weapon == "acid":
            return s._strike_all(s.acid_line(bot, HexDirection(action.args[0])), value, lambda b: ct, effects)
        if weapon == "strike":
            s = s._with_bot(replace(bot, cell=cells[0]))
            return s._strike_all([s.bot_at(cells[1])], value, lambda b: ct, effects)
        if weapon == "throw":
            target = s.bot_at(cells[0])
            target = replace(target, cell=cells[1])
            s = s._with_bot(target)
            effects.append(f"{target.id} thrown to {action.args[1]}")
            return s._strike_all([target], value, lambda b: ct, effects)
        return s._strike_all([s.bot_at(cells[0])], value, lambda b: ct, effects)

    def _strike_all(self, targets: list[Bot], value: int, ct_for, effects: list[str]) -> IceArenaState:
        """One roll against each target: a critical at or over the CT (a regular hit instead when
        the target's Defend is over the CT), else a regular hit when the roll beats Defend."""
        s = self
        owed = list(s.damage)
        for target in targets:
            target = s.bot(target.id)
            ct, defend = ct_for(target), target.defend_now()
            if value >= ct and defend <= ct:
                owed.append(target.id)
                effects.append(f"critical hit on {target.id}")
            elif value >= ct or value > defend:
                hits = target.hits + 1
                if hits == 2:
                    owed.append(target.id)
                    hits = 0
                    effects.append(f"hit on {target.id}: two hits make a point of damage")
                else:
                    effects.append(f"hit on {target.id}")
                s = s._with_bot(replace(target, hits=hits))
            else:
                effects.append(f"{target.id} is missed (Defend {defend})")
        return replace(s, damage=tuple(owed))

    # --- moving the game along ---------------------------------------------------------------------
    def _settle(self, effects: list[str]) -> IceArenaState:
        """Runs everything that needs no decision, up to the next player or chance node."""
        s = self
        while True:
            if s.ended is not None:
                return s
            if s.damage:
                bot = s.bot(s.damage[0])
                if bot is None:
                    s = replace(s, damage=s.damage[1:])
                    continue
                if not bot.spares:
                    s = s._destroy(bot, effects)
                    continue
                if len(set(bot.spares)) == 1 and not s._placements(bot, damage=True):
                    s = replace(s._with_bot(replace(bot, spares=bot.spares[1:])), damage=s.damage[1:])
                    effects.append(f"{bot.id} discards a small {bot.spares[0].value} as damage (none can be played)")
                    continue
                return s
            if s.tosser is not None:
                if s._landings(s.bot(s.tosser)):
                    return s
                # Nowhere to come down: the pieces fall back where they were.
                back = tuple(Small(c, Colour.YELLOW) for c in s.tossing)
                effects.append("the tossed yellows find no room and fall back where they were")
                s = replace(s, smalls=tuple(sorted((*s.smalls, *back))), tossing=(), tosser=None)
                continue
            if s.draw_for is not None:
                if s.bot(s.draw_for) is None or not sum(s.pool):
                    s = replace(s, draw_for=None)
                    continue
                return s
            if s.rolls:
                if s.bot(s.rolls[0]) is None:
                    s = replace(s, rolls=s.rolls[1:])
                    continue
                return s
            stage = s.stage
            if stage == "pick":
                if any(b.picks is None for b in s.bots):
                    return s
                s = s._enter("ability")
            elif stage == "turrets":
                if not s.turrets:
                    s = s._enter("corrosion")
                elif not s.turret_targets(s.turrets[0]):
                    s = replace(s, turrets=s.turrets[1:])
                else:
                    return s
            elif stage == "corrosion":
                owed = list(s.damage)
                for bot in s.bots:
                    for _ in range(bot.corrosion):
                        effects.append(f"corrosion scores a hit on {bot.id}")
                    if bot.corrosion:
                        hits = bot.hits + bot.corrosion
                        owed.extend([bot.id] * (hits // 2))
                        s = s._with_bot(replace(bot, hits=hits % 2))
                s = replace(s, damage=tuple(owed))._enter("dice")
            elif stage == "dice":
                if not any(b.attack_dice for b in s.bots):
                    s = s._enter("move")
                    continue
                bot = s.bot(s._next_die()[1])
                if not s._fire_options(bot) and not s.anytime_actions(bot.owner):
                    effects.append(f"{bot.id} has no use for its d10={bot.attack_dice[0]}")
                    s = s._with_bot(replace(bot, attack_dice=bot.attack_dice[1:]))
                    continue
                return s
            elif stage == "moving":
                order = tuple(i for i in s.order if s.bot(i) is not None)
                if order != s.order:
                    s = replace(s, order=order)
                if not order:
                    s = s._enter("misc")
                    continue
                if s.mover is None:
                    tied = s._move_ties()
                    if len(tied) > 1:
                        return s
                    s = replace(s, mover=tied[0])
                return s
            else:
                order = tuple(i for i in s.order if s.bot(i) is not None and s._wants_turn(s.bot(i)))
                if order != s.order:
                    s = replace(s, order=order)
                if order:
                    return s
                s = s._enter(_next_stage(stage))

    def _wants_turn(self, bot: Bot) -> bool:
        """Whether a bot in an ordered stage has anything to decide (else it is passed over)."""
        stage = self.stage
        if stage == "place":
            return bool(self._placements(bot, damage=False) or self._powers(bot) or self._scrubs(bot))
        if stage.endswith("-buy"):
            return bot.specials > 0
        if stage == "misc":
            return bool(self._misc_options(bot) or self._powers(bot) or self._scrubs(bot))
        if stage == "scrub":
            return bot.corrosion > 0 and bool(bot.spares)
        return True

    def _enter(self, stage: str) -> IceArenaState:
        s = replace(self, stage=stage, order=(), rolls=(), turrets=(), mover=None)
        ids = tuple(b.id for b in s.bots)
        if stage == "pick":
            bots = tuple(replace(b, specials=0, ability_now=0, picks=None, defend_roll=0, move_roll=0,
                                 attack_dice=(), placed=0, added=False, rearranged=False) for b in s.bots)
            return replace(s, bots=bots, round=s.round + 1)
        if stage == "ability":
            bots = tuple(replace(b, ability_now=s.ability_at_hex(b)) for b in s.bots)
            s = replace(s, bots=bots)
            return replace(s, rolls=tuple(b.id for b in bots for _ in range(b.picks[ABILITY] + b.ability_now)))
        if stage == "place":
            return replace(s, order=tuple(b.id for b in sorted(s.bots, key=lambda b: (b.ability_now, _bot_key(b.id)))))
        if stage in ("defend", "attack", "move"):
            attribute = {"defend": DEFEND, "attack": ATTACK, "move": MOVE}[stage]
            return replace(s, rolls=tuple(b.id for b in s.bots for _ in range(b.picks[attribute])))
        if stage.endswith("-buy"):
            return replace(s, order=ids)
        if stage == "turrets":
            return replace(s, turrets=tuple(p.cell for p in s.smalls if p.colour is Colour.RED))
        if stage in ("corrosion", "dice"):
            return s
        if stage == "moving":
            return replace(s, order=ids)
        if stage == "misc":
            return replace(s, order=tuple(b.id for b in sorted(s.bots, key=lambda b: (b.life, _bot_key(b.id)))))
        if stage == "scrub":
            return replace(s, order=ids)
        raise AssertionError(stage)

    def _destroy(self, bot: Bot, effects: list[str]) -> IceArenaState:
        effects.append(f"{bot.id} loses its cap and is destroyed")
        s = replace(self, bots=tuple(b for b in self.bots if b.id != bot.id),
                    mines=tuple(m for m in self.mines if m.bot != bot.id),
                    damage=tuple(i for i in self.damage if i != bot.id),
                    rolls=tuple(i for i in self.rolls if i != bot.id),
                    draw_for=None if self.draw_for == bot.id else self.draw_for,
                    tosser=None if self.tosser == bot.id else self.tosser,
                    tossing=() if self.tosser == bot.id else self.tossing,
                    mover=None if self.mover == bot.id else self.mover)
        owners = sorted({b.owner for b in s.bots})
        if len(owners) <= 1:
            ended = Outcome("last player standing", tuple(owners)) if owners else Outcome("all bots destroyed", ())
            s = replace(s, ended=ended)
        return s

    # --- reporting ---------------------------------------------------------------------------------
    def outcome(self) -> Outcome | None:
        return self.ended

    def resolution_order(self) -> list[str]:
        """Who or what resolves next in this stage, in order, for the table."""
        if self.stage == "dice":
            return [f"{i} d10={v}" for v, i in sorted((v, b.id) for b in self.bots for v in b.attack_dice)]
        if self.stage == "turrets":
            return [f"red at {self.grid.name(c)}" for c in self.turrets]
        if self.stage == "moving":
            left = sorted((self.bot(i).move_now(), i) for i in self.order)
            return [f"{i} (Move {m})" for m, i in left]
        return list(self.order)

    def phase_orders(self) -> list[dict[str, Any]]:
        """The round's six phases in order, each with its resolution rule and the order it
        resolves in as far as it is known now (`now` marks the phase under way)."""
        current = PHASE_OF_STAGE[self.stage]
        bots = self.bots
        grid = self.grid
        if self.stage == "pick":
            ability = {b.id: self.ability_at_hex(b) for b in bots}
            picking = [f"{b.id} {'picking' if b.picks is None else 'picked'}" for b in bots]
        else:
            ability = {b.id: b.ability_now for b in bots}
            picking = [f"{b.id} picked" for b in bots]
        placing = sorted(bots, key=lambda b: (ability[b.id], _bot_key(b.id)))
        if self.stage == "turrets":
            reds = list(self.turrets)
        elif STAGES.index(self.stage) < STAGES.index("turrets"):
            reds = [p.cell for p in self.smalls if p.colour is Colour.RED]
        else:
            reds = []
        attack = [f"red at {grid.name(c)}" for c in reds]
        if STAGES.index(self.stage) <= STAGES.index("corrosion"):
            attack += [f"corrosion on {b.id} x{b.corrosion}" for b in bots if b.corrosion]
        attack += [f"{i} d10={v}" for v, i in sorted((v, b.id) for b in bots for v in b.attack_dice)]
        moves = sorted(bots, key=lambda b: (b.move_now(), _bot_key(b.id)))
        tied = {m for m in (b.move_now() for b in bots) if sum(1 for b in bots if b.move_now() == m) > 1}
        rows = [
            ("dice picking", "every bot at once, in secret: d4 move, d6 defend, d8 ability, d10 attack", picking),
            ("ability", "d8s rolled; then small pieces placed, lower Ability first (ties in seat order)",
             [f"{b.id} (Ability {ability[b.id]})" for b in placing]),
            ("defence", "d6s rolled; extra d6s bought for specials; Defend = base + highest d6",
             [f"{b.id} (Defend {b.defend_now()})" for b in bots]),
            ("attack", "small reds fire first, then corrosion hits, then attack dice lowest first", attack),
            ("move", "lower Move moves first; ties drawn by chance",
             [f"{b.id} (Move {b.move_now()}{', tied' if b.move_now() in tied else ''})" for b in moves]),
            ("misc", "most damaged bot first: add a small, rearrange; then corrosion may be scrubbed",
             [f"{b.id} (life {b.life})" for b in sorted(bots, key=lambda b: (b.life, _bot_key(b.id)))]),
        ]
        return [{"phase": name, "rule": rule, "order": order, "now": name == current} for name, rule, order in rows]

    def bot_summary(self, bot: Bot) -> dict[str, Any]:
        return {
            "id": bot.id, "player": seat_name(bot.owner), "hex": self.grid.name(bot.cell),
            "stack": bot.stack_text(self.colours[bot.owner]),
            "attack": bot.base(ATTACK), "defend": bot.base(DEFEND), "move": bot.base(MOVE),
            "ability": bot.base(ABILITY), "ability_on_hex": self.ability_at_hex(bot),
            "primary": ATTRIBUTES[bot.primary], "secondary": ATTRIBUTES[bot.secondary],
            "weapons": list(bot.weapons), "dice_allowed": bot.dice_allowed,
            "dice_limits": {f"d{DIE_SIDES[a]}": (self.ability_at_hex(bot) if a == ABILITY else bot.base(a))
                            for a in PICK_ORDER},
            "picked": None if bot.picks is None or self.stage == "pick" else str(Pick(bot.owner, bot.id, bot.picks)).split(" pick ")[1],
            "specials": bot.specials, "life": bot.life, "pending_hits": bot.hits, "corrosion": bot.corrosion,
            "defend_now": bot.defend_now(), "move_now": bot.move_now(), "attack_dice": list(bot.attack_dice),
            "ability_now": bot.ability_now,
            "damage": {"taken": bot.damage_taken, "pending_hits": bot.hits, "owed": self.damage.count(bot.id),
                       "corrosion": bot.corrosion},
            "weapon_table": [_weapon_summary(WEAPONS[w]) for w in bot.weapons],
            **({"mines": {"placed": sum(1 for m in self.mines if m.bot == bot.id),
                          "limit": bot.base(DEFEND) + bot.base(ABILITY)}} if bot.unique_weapon == "mines" else {}),
        }

    def summary(self) -> dict[str, Any]:
        return {
            "game": GAME.name, "round": self.round, "stage": self.stage, "to_act": self.turn_text(),
            "resolution_order": self.resolution_order(), "phases": self.phase_orders(),
            "in_the_air": [f"yellow from {self.grid.name(c)}" for c in self.tossing],
            "bots": [self.bot_summary(b) for b in self.bots],
            "smalls": [f"{s.colour.value} {self.grid.name(s.cell)} {_dir_text(s.direction)}" for s in self.smalls],
            "mines": [f"{m.bot} {self.grid.name(m.cell)}" for m in self.mines],
            "pool": {c.value: self.pool[i] for i, c in enumerate(PLAYER_COLOURS)},
            "outcome": None if self.ended is None else self.ended.to_json(),
        }

    def __str__(self) -> str:
        lines = [f"Ice Arena, round {self.round}, {self.stage}: {self.turn_text()}"]
        for b in self.bots:
            lines.append(f"  {b.id} {seat_name(b.owner)} at {self.grid.name(b.cell)}: "
                         f"A{b.base(ATTACK)} D{b.base(DEFEND)} M{b.base(MOVE)} Ab{b.base(ABILITY)} "
                         f"{b.unique_weapon}, life {b.life}, specials {b.specials}")
        if self.smalls:
            lines.append("  smalls: " + ", ".join(f"{s.colour.value}@{self.grid.name(s.cell)}" for s in self.smalls))
        if self.ended is not None:
            lines.append(f"  over: {self.ended.termination}, winners {[seat_name(w) for w in self.ended.winners]}")
        return "\n".join(lines)

    def invariant_violations(self) -> list[str]:
        out = []
        grid = self.grid
        cells = [b.cell for b in self.bots]
        if len(set(cells)) != len(cells):
            out.append("two bots share a hex")
        blues = {s.cell for s in self.smalls if s.colour is Colour.BLUE}
        for b in self.bots:
            if b.cell in blues:
                out.append(f"{b.id} stands on a small blue")
            if b.specials < 0 or b.hits not in (0, 1) or b.corrosion < 0:
                out.append(f"{b.id} has bad counters")
        for cell in {s.cell for s in self.smalls}:
            here = self.smalls_at(cell)
            colours = {p.colour for p in here}
            if len(colours) > 1:
                out.append(f"small pieces of several colours share {grid.name(cell)}")
            reds = {p.direction for p in here if p.colour is Colour.RED}
            if len(reds) > 1:
                out.append(f"small reds on {grid.name(cell)} point different ways")
            if len(here) > 1 and colours - {Colour.RED, Colour.YELLOW}:
                out.append(f"several small {next(iter(colours)).value}s share {grid.name(cell)}")
        if any(c < 0 for c in self.pool):
            out.append("negative pool")
        for m in self.mines:
            if self.bot(m.bot) is None:
                out.append(f"mine at {grid.name(m.cell)} belongs to no bot")
        if self.ended is None and len({b.owner for b in self.bots}) <= 1:
            out.append("one player left but the game is not over")
        return out

    def to_json(self) -> dict[str, Any]:
        return {
            "game": GAME.name, "num_players": self.num_players, "radius": self.radius,
            "colours": [c.value for c in self.colours],
            "bots": [_bot_to_json(b) for b in self.bots],
            "smalls": [s.to_json() for s in self.smalls],
            "mines": [[m.cell, m.bot] for m in self.mines],
            "pool": list(self.pool), "round": self.round, "stage": self.stage, "order": list(self.order),
            "rolls": list(self.rolls), "damage": list(self.damage), "turrets": list(self.turrets),
            "mover": self.mover, "draw_for": self.draw_for,
            "tossing": list(self.tossing), "tosser": self.tosser,
            "ended": None if self.ended is None else self.ended.to_json(),
        }


def _weapon_summary(w: Weapon) -> dict[str, Any]:
    return {"name": w.name, "ct": w.ct, "range": w.reach, "specials": w.specials, "blocked": w.blocked,
            **({"ct_ground_zero": MINE_GROUND_ZERO_CT} if w.name == "mines" else {})}


def _sorted_colours(colours) -> tuple[Colour, ...]:
    return tuple(sorted(colours, key=_colour_key))


def _bot_key(bot_id: str) -> tuple[int, str]:
    return int(bot_id[:-1]), bot_id[-1]


def _next_stage(stage: str) -> str:
    i = STAGES.index(stage)
    return STAGES[(i + 1) % len(STAGES)]


def _bot_to_json(b: Bot) -> dict[str, Any]:
    return {"id": b.id, "owner": b.owner, "core": [str(p) for p in b.core], "spares": [c.value for c in b.spares],
            "cell": b.cell, "hits": b.hits, "corrosion": b.corrosion, "specials": b.specials,
            "ability_now": b.ability_now, "picks": None if b.picks is None else list(b.picks),
            "defend_roll": b.defend_roll, "move_roll": b.move_roll, "attack_dice": list(b.attack_dice),
            "placed": b.placed, "added": b.added, "rearranged": b.rearranged, "damage_taken": b.damage_taken}


def _bot_from_json(d: Mapping[str, Any]) -> Bot:
    return Bot(id=d["id"], owner=d["owner"], core=tuple(Pyramid.parse(p) for p in d["core"]),
               spares=tuple(Colour(c) for c in d["spares"]), cell=d["cell"], hits=d["hits"],
               corrosion=d["corrosion"], specials=d["specials"], ability_now=d["ability_now"],
               picks=None if d["picks"] is None else tuple(d["picks"]), defend_roll=d["defend_roll"],
               move_roll=d["move_roll"], attack_dice=tuple(d["attack_dice"]), placed=d["placed"],
               added=d["added"], rearranged=d["rearranged"], damage_taken=d.get("damage_taken", 0))


# --- set-up ----------------------------------------------------------------------------------------

def start_cells(grid: HexGrid, radius: int, num_players: int, bots_each: list[int]) -> list[list[int]]:
    """Start hexes: each player's bots side by side on the outer ring, players spaced evenly round it."""
    corners = [(radius, -radius), (-radius, radius), (0, -radius), (0, radius), (-radius, 0), (radius, 0)]
    order = {2: (0, 1), 3: (0, 3, 4), 4: (2, 3, 4, 5)}[num_players]
    out = []
    for seat, n in enumerate(bots_each):
        q, r = corners[order[seat]]
        centre = grid.cell(q, r)
        # Fill outward from the corner, nearest hexes first.
        near = sorted(grid.cells, key=lambda c: (grid.distance(c, centre), c))
        out.append(near[:n])
    return out


def _box_pool(stashes: int, stacks: list[tuple[tuple[Pyramid, ...], tuple[Colour, ...]]],
              arena: tuple[Colour, ...]) -> tuple[int, int, int, int]:
    """The small pieces left in the box (per colour) once the bots (core, smalls with cap) and
    the smalls in the arena are taken from `stashes` stashes of each colour; BuildError when
    the box cannot hold that many of one kind."""
    limit = stashes * PIECES_PER_SIZE_IN_STASH
    used: dict[Pyramid, int] = {}
    small_used = [0, 0, 0, 0]
    for core, smalls in stacks:
        for p in core:
            used[p] = used.get(p, 0) + 1
        for c in smalls:
            small_used[_colour_key(c)] += 1
    for c in arena:
        small_used[_colour_key(c)] += 1
    for p, n in used.items():
        if n > limit:
            raise BuildError(f"the bots use {n} {p} pieces; the box holds {limit}")
    for i, n in enumerate(small_used):
        if n > limit:
            raise BuildError(f"bots and arena use {n} small {PLAYER_COLOURS[i].value}s; the box holds {limit}")
    return (limit - small_used[0], limit - small_used[1], limit - small_used[2], limit - small_used[3])


# Bot fields a position may set (`IceArena.position`'s `status`): this round's numbers so far.
STATUS_FIELDS = ("specials", "hits", "corrosion", "ability_now", "picks", "defend_roll", "move_roll",
                 "attack_dice", "placed", "added", "rearranged", "damage_taken")


class IceArena(Game):
    name: ClassVar[str] = "ice-arena"
    title: ClassVar[str] = "Ice Arena"
    min_players: ClassVar[int] = 2
    max_players: ClassVar[int] = 4
    playout_limit: ClassVar[int] = 6000

    def new_initial_state(self, num_players: int, variant: str = "standard",
                          options: Mapping[str, Any] | None = None) -> IceArenaState:
        """Options: "radius" of the hex board (default 4); "stashes" of each colour (default 2);
        "bots": {"P1": ["red-L blue-M red-S", ...], ...} overriding a seat's default team;
        "positions": {"1A": "q,r", ...} overriding start hexes."""
        self.check_player_count(num_players)
        self.check_variant(variant)
        options = dict(options or {})
        unknown = set(options) - {"radius", "stashes", "bots", "positions"}
        if unknown:
            raise GameError(f"unknown Ice Arena option(s): {', '.join(sorted(unknown))}")
        radius = options.get("radius", DEFAULT_RADIUS)
        if not isinstance(radius, int) or not 2 <= radius <= 10:
            raise GameError(f"radius {radius!r} out of range (2-10)")
        stashes = options.get("stashes", DEFAULT_STASHES)
        if not isinstance(stashes, int) or stashes < 1:
            raise GameError(f"stashes {stashes!r} must be a positive whole number")
        grid = hex_grid(radius)
        colours = PLAYER_COLOURS[:num_players]
        teams_text = dict(options.get("bots", {}))
        for key in teams_text:
            parse_seat(key, num_players)
        teams = []
        for seat in range(num_players):
            texts = teams_text.get(seat_name(seat))
            if texts is None:
                texts = [t.format(cap=colours[seat].value) for t in DEFAULT_TEAMS[seat]]
            if not texts:
                raise BuildError(f"{seat_name(seat)} has no bots")
            built = [parse_build(t, colours[seat]) for t in texts]
            pips = sum(build_pips(c, sp) for c, sp in built)
            if pips > PIPS_PER_PLAYER:
                raise BuildError(f"{seat_name(seat)}'s bots cost {pips} pips; the limit is {PIPS_PER_PLAYER}")
            if len(built) > 26:
                raise BuildError(f"{seat_name(seat)} has more than 26 bots")
            teams.append(built)
        pool = _box_pool(stashes, [(core, (*spares, colours[seat])) for seat, team in enumerate(teams)
                                   for core, spares in team], ())
        cells = start_cells(grid, radius, num_players, [len(t) for t in teams])
        positions = dict(options.get("positions", {}))
        bots = []
        for seat, team in enumerate(teams):
            for k, (core, spares) in enumerate(team):
                bot_id = f"{seat + 1}{chr(ord('A') + k)}"
                cell = cells[seat][k]
                if bot_id in positions:
                    try:
                        cell = grid.parse(positions.pop(bot_id))
                    except ValueError as exc:
                        raise GameError(f"position of {bot_id}: {exc}") from None
                bots.append(Bot(bot_id, seat, core, spares, cell))
        if positions:
            raise GameError(f"positions for unknown bots: {', '.join(sorted(positions))}")
        if len({b.cell for b in bots}) != len(bots):
            raise GameError("two bots start on the same hex")
        state = IceArenaState(num_players, radius, colours, tuple(bots), (), (), pool, 0, "misc")
        return state._enter("pick")._settle([])

    def position(self, bots: Mapping[str, str], *, num_players: int | None = None, stage: str = "pick",
                 round: int = 1, radius: int = DEFAULT_RADIUS, stashes: int = DEFAULT_STASHES,
                 smalls: tuple[str, ...] | list[str] = (), mines: tuple[str, ...] | list[str] = (),
                 status: Mapping[str, Mapping[str, Any]] | None = None) -> IceArenaState:
        """A position as a table shows it, at the start of `stage` of round `round`.

        This is how a position read off the table (or a test) enters the engine.

        Args:
            bots: bot id (seat number and letter, '2B') -> its stack bottom to top and its hex,
                'red-L blue-M green-S red-S at 0,0'. Stack rules are checked, the pip budget is
                not (bots grow in the misc phase).
            num_players: seats at the table (default: the highest seat named).
            stage: one of STAGES; the state is entered there, as the engine enters it, and
                moved on to the first decision.
            round: the round number.
            radius, stashes: as the game's options.
            smalls: small pieces in the arena, 'colour q,r' with a direction (E NE NW W SW SE
                or up) for blues and optionally for reds and greens: 'blue 2,-1 NE', 'green 1,0 up'.
            mines: mine tokens, 'bot q,r' ('1A 0,1').
            status: bot id -> Bot fields for this round so far (STATUS_FIELDS), for example
                {"1A": {"specials": 2, "attack_dice": (3, 9)}}. Mid-round stages default to
                picks of no dice and the Ability of the bot's hex.

        Raises:
            GameError (BuildError for a bad stack) naming the bad input, or "impossible
            position" with the broken invariants.
        """
        if stage not in STAGES:
            raise GameError(f"unknown stage {stage!r} (one of {', '.join(STAGES)})")
        seats = []
        for bot_id in bots:
            _bot_word(bot_id)
            seats.append(int(bot_id[:-1]) - 1)
        if num_players is None:
            num_players = max(seats, default=0) + 1
        self.check_player_count(num_players)
        if any(seat < 0 or seat >= num_players for seat in seats):
            raise GameError(f"bot ids {', '.join(bots)} name seats beyond {num_players} players")
        if not isinstance(radius, int) or not 2 <= radius <= 10:
            raise GameError(f"radius {radius!r} out of range (2-10)")
        grid = hex_grid(radius)
        colours = PLAYER_COLOURS[:num_players]
        built = []
        for bot_id, text in bots.items():
            stack, sep, where = text.rpartition(" at ")
            if not sep:
                raise GameError(f"bot {bot_id}: {text!r} should read 'stack at q,r'")
            seat = int(bot_id[:-1]) - 1
            core, spares = parse_build(stack, colours[seat])
            try:
                cell = grid.parse(where)
            except ValueError as exc:
                raise GameError(f"bot {bot_id}: {exc}") from None
            built.append(Bot(bot_id, seat, core, spares, cell))
        pieces = []
        for text in smalls:
            words = text.split()
            if len(words) not in (2, 3):
                raise GameError(f"small piece {text!r} should read 'colour q,r [direction]'")
            try:
                colour = _colour_word(words[0])
                cell = grid.parse(words[1])
                direction = _direction_word(words[2]) if len(words) == 3 else None
            except ValueError as exc:
                raise GameError(f"small piece {text!r}: {exc}") from None
            if colour is Colour.BLUE and len(words) != 3:
                raise GameError(f"small blue {text!r} needs a direction (or up)")
            if colour is Colour.YELLOW and direction is not None:
                raise GameError(f"small yellow {text!r} faces upward")
            pieces.append(Small(cell, colour, direction))
        tokens = []
        for text in mines:
            words = text.split()
            if len(words) != 2:
                raise GameError(f"mine {text!r} should read 'bot q,r'")
            try:
                tokens.append(Mine(grid.parse(words[1]), words[0]))
            except ValueError as exc:
                raise GameError(f"mine {text!r}: {exc}") from None
        pool = _box_pool(stashes, [(b.core, (*b.spares, colours[b.owner])) for b in built],
                         tuple(p.colour for p in pieces))
        mid_round = stage != "pick"
        changed = []
        for b in built:
            fields = dict((status or {}).get(b.id, {}))
            unknown = set(fields) - set(STATUS_FIELDS)
            if unknown:
                raise GameError(f"status of {b.id}: unknown field(s) {', '.join(sorted(unknown))} "
                                f"(known: {', '.join(STATUS_FIELDS)})")
            if "attack_dice" in fields:
                fields["attack_dice"] = tuple(sorted(fields["attack_dice"]))
            if "picks" in fields and fields["picks"] is not None:
                fields["picks"] = tuple(fields["picks"])
            if mid_round:
                fields.setdefault("picks", (0, 0, 0, 0))
            changed.append(replace(b, **fields))
        unknown = set((status or {})) - set(bots)
        if unknown:
            raise GameError(f"status for unknown bots: {', '.join(sorted(unknown))}")
        state = IceArenaState(num_players, radius, colours, tuple(changed), tuple(sorted(pieces)),
                              tuple(sorted(tokens)), pool, round - 1 if stage == "pick" else round, "misc")
        if mid_round:
            state = replace(state, bots=tuple(
                b if "ability_now" in (status or {}).get(b.id, {}) else replace(b, ability_now=state.ability_at_hex(b))
                for b in state.bots))
        problems = state.invariant_violations()
        problems += [f"{b.id} has {len(b.attack_dice)} attack dice out of range" for b in state.bots
                     if any(not 1 <= v <= 10 for v in b.attack_dice)]
        if problems:
            raise GameError("impossible position: " + "; ".join(problems))
        return state._enter(stage)._settle([])

    def parse_action(self, text: str) -> IceArenaAction:
        return parse_action(text)

    def state_from_json(self, data: Mapping[str, Any]) -> IceArenaState:
        try:
            if data.get("game") != self.name:
                raise GameError(f"not an Ice Arena state (game {data.get('game')!r})")
            ended = data["ended"]
            return IceArenaState(
                num_players=data["num_players"], radius=data["radius"],
                colours=tuple(Colour(c) for c in data["colours"]),
                bots=tuple(_bot_from_json(b) for b in data["bots"]),
                smalls=tuple(Small(c, Colour(col), None if d is None else HexDirection(d)) for c, col, d in data["smalls"]),
                mines=tuple(Mine(c, b) for c, b in data["mines"]),
                pool=tuple(data["pool"]), round=data["round"], stage=data["stage"],
                order=tuple(data["order"]), rolls=tuple(data["rolls"]), damage=tuple(data["damage"]),
                turrets=tuple(data["turrets"]), mover=data["mover"], draw_for=data["draw_for"],
                tossing=tuple(data.get("tossing", ())), tosser=data.get("tosser"),
                ended=None if ended is None else Outcome(ended["termination"], tuple(ended["winners"]),
                                                         None if ended["scores"] is None else tuple(ended["scores"])))
        except (KeyError, TypeError, ValueError) as exc:
            if isinstance(exc, GameError):
                raise
            raise GameError(f"bad Ice Arena state data: {exc}") from None


GAME = register(IceArena())
