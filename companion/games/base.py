"""One interface for every game (after OpenSpiel), with small exact values (after python-chess).

A game is a `Game` object registered by name; a position is an immutable `State`.
`State.apply(action)` checks legality once, here at the boundary, and returns a
new state; the old one is untouched, which makes undo, replay and threads simple.

Whose move it is comes from `current_player()`:

* a seat number 0..n-1 when one player must act;
* `SIMULTANEOUS` when several players commit secret choices (bids, plans), or when
  anyone may act at any time (IceTowers). `players_to_act()` says who still may;
  each commits with an ordinary action that names its player, one at a time, and
  the state reveals nothing until all have committed;
* `CHANCE` when a die or a random tie-break decides. `chance_outcomes()` lists the
  outcomes as actions with probabilities; a physical roll is entered as that action,
  or `sample_chance` draws one from a seeded `random.Random`;
* `TERMINAL` when the game is over; `outcome()` then says who won.

Every action is a frozen value whose `str()` is a short text form that
`Game.parse_action` reads back (`parse_action(str(a)) == a`). Player actions start
with the seat as `P1`, `P2`, ... (1-based, in seat order, clockwise); chance actions
have `player = None`. States serialise with `to_json()` and `Game.state_from_json`.
"""

from __future__ import annotations

import json
import random
from abc import ABC, abstractmethod
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, ClassVar, Protocol

CHANCE = -1
SIMULTANEOUS = -2
TERMINAL = -3


class GameError(ValueError):
    """Base of all errors about game input."""


class InvalidActionError(GameError):
    """The text of an action cannot be read at all (a syntax error)."""


class IllegalActionError(GameError):
    """A well-formed action that the rules do not allow in this position."""

    def __init__(self, action: object, reason: str):
        super().__init__(f"illegal action {str(action)!r}: {reason}")
        self.action = action
        self.reason = reason


class Action(Protocol):
    """What every game's action values provide."""

    @property
    def player(self) -> int | None: ...

    def __str__(self) -> str: ...


@dataclass(frozen=True, slots=True)
class Outcome:
    """How a finished game ended.

    `winners` lists the winning seats: one seat for an outright win, several for a
    tie or shared win, none when nobody wins. `scores`, where the game keeps score,
    holds each seat's final score.
    """

    termination: str
    winners: tuple[int, ...]
    scores: tuple[float, ...] | None = None

    def to_json(self) -> dict[str, Any]:
        return {"termination": self.termination, "winners": list(self.winners),
                "scores": None if self.scores is None else list(self.scores)}


class Game(ABC):
    """A registered game: its name, player counts, variants and parsers."""

    name: ClassVar[str]
    title: ClassVar[str]
    min_players: ClassVar[int]
    max_players: ClassVar[int]
    #: variant name -> one-line description; "standard" is always present.
    variants: ClassVar[Mapping[str, str]] = {"standard": "the rules as written"}
    #: Upper bound on actions in one random playout, for tests and benchmarks of
    #: games that need not end by themselves (endless manoeuvring, tower wars).
    playout_limit: ClassVar[int] = 5000

    @abstractmethod
    def new_initial_state(self, num_players: int, variant: str = "standard",
                          options: Mapping[str, Any] | None = None) -> State:
        """The position before anything happened. Raises GameError for a bad set-up."""

    @abstractmethod
    def parse_action(self, text: str) -> Action:
        """Reads an action's text form; raises InvalidActionError naming the text."""

    @abstractmethod
    def state_from_json(self, data: Mapping[str, Any]) -> State:
        """Rebuilds a state from `State.to_json()`; raises GameError on bad data."""

    def check_player_count(self, num_players: int) -> None:
        if not self.min_players <= num_players <= self.max_players:
            raise GameError(f"{self.name} is for {self.min_players}-{self.max_players} players, "
                            f"not {num_players}")

    def check_variant(self, variant: str) -> None:
        if variant not in self.variants:
            raise GameError(f"{self.name} has no variant {variant!r} "
                            f"(known: {', '.join(self.variants)})")

    def __repr__(self) -> str:
        return f"<Game {self.name}>"


class State(ABC):
    """An immutable position of one game. Subclasses are frozen dataclasses."""

    # --- what every game implements -------------------------------------------------
    @property
    @abstractmethod
    def game(self) -> Game: ...

    #: Seats at the table. A plain attribute (a dataclass field in each game), not an
    #: abstract property: a property here would become the field's default value.
    num_players: int

    @abstractmethod
    def current_player(self) -> int:
        """A seat, or CHANCE, SIMULTANEOUS or TERMINAL."""

    @abstractmethod
    def legal_actions(self, player: int | None = None) -> list[Action]:
        """Legal actions of `player` (default: everyone who may act now).

        At a chance node, with no player given, the chance outcomes' actions.
        Empty for a player who may not act now, and at a terminal state.
        """

    @abstractmethod
    def illegal_reason(self, action: Action) -> str | None:
        """None when `action` is legal here, else why not, in words for the table."""

    @abstractmethod
    def _resolve(self, action: Action) -> tuple[State, list[str]]:
        """Applies a legal action: the new state and what happened, in words."""

    @abstractmethod
    def chance_outcomes(self) -> list[tuple[Action, float]]:
        """At a chance node, each outcome with its probability (they sum to 1)."""

    @abstractmethod
    def outcome(self) -> Outcome | None:
        """None while the game is on."""

    @abstractmethod
    def to_json(self) -> dict[str, Any]:
        """Everything needed to rebuild this state, secrets included, as JSON data."""

    @abstractmethod
    def summary(self) -> dict[str, Any]:
        """The public facts a table wants: life, fuel, scores, board, who acts next."""

    @abstractmethod
    def invariant_violations(self) -> list[str]:
        """Broken invariants (pieces not accounted for, negative fuel...); empty when sound.

        Like python-chess's `status()`: a defective position is reported, not raised.
        """

    # --- shared behaviour ----------------------------------------------------------
    def players_to_act(self) -> tuple[int, ...]:
        """Seats that may act now: one seat, the uncommitted seats at a SIMULTANEOUS
        node, or none at CHANCE and TERMINAL nodes."""
        p = self.current_player()
        return (p,) if p >= 0 else ()

    def is_terminal(self) -> bool:
        return self.current_player() == TERMINAL

    def is_chance_node(self) -> bool:
        return self.current_player() == CHANCE

    def is_legal(self, action: Action) -> bool:
        return self.illegal_reason(action) is None

    def is_secret(self, action: Action) -> bool:
        """Whether the rules keep `action`, made here, hidden until it is revealed.

        Secret choices (bids, plans, orders) are committed at a SIMULTANEOUS node;
        the page shows them only as "committed" until the game leaves that node.
        Games with such choices override this; by default nothing is secret.
        """
        return False

    def apply(self, action: Action | str) -> State:
        """The state after `action` (an action value or its text). Raises
        InvalidActionError for unreadable text and IllegalActionError with the reason."""
        return self.apply_with_effects(action)[0]

    def apply_with_effects(self, action: Action | str) -> tuple[State, list[str]]:
        """Like `apply`, also returning what happened in words (moves, pushes, damage)."""
        if isinstance(action, str):
            action = self.game.parse_action(action)
        reason = self.illegal_reason(action)
        if reason is not None:
            raise IllegalActionError(action, reason)
        return self._resolve(action)

    def preview(self, action: Action | str) -> list[str]:
        """What `action` would do, in words, without doing it (for the page)."""
        return self.apply_with_effects(action)[1]

    def returns(self) -> tuple[float, ...]:
        """Per seat: 1 for a sole winner, 1/k to each of k sharing a win, 0 otherwise."""
        out = self.outcome()
        result = [0.0] * self.num_players
        if out is not None and out.winners:
            for seat in out.winners:
                result[seat] = 1.0 / len(out.winners)
        return tuple(result)

    def turn_text(self) -> str:
        """Who acts now, in words."""
        p = self.current_player()
        if p == TERMINAL:
            return "game over"
        if p == CHANCE:
            return "chance"
        if p == SIMULTANEOUS:
            return "simultaneous: " + ", ".join(seat_name(s) for s in self.players_to_act())
        return seat_name(p)


def seat_name(seat: int) -> str:
    """The text form of a seat in actions: 0 -> 'P1'."""
    return f"P{seat + 1}"


def parse_seat(token: str, num_players: int | None = None) -> int:
    """Reads 'P1'.. into a 0-based seat. InvalidActionError when malformed."""
    t = token.strip()
    if len(t) < 2 or t[0] not in "Pp" or not t[1:].isdigit() or int(t[1:]) < 1:
        raise InvalidActionError(f"bad seat {token!r} (expected P1, P2, ...)")
    seat = int(t[1:]) - 1
    if num_players is not None and seat >= num_players:
        raise InvalidActionError(f"seat {token!r} does not exist with {num_players} players")
    return seat


def state_key(state: State) -> str:
    """A text equal for equal states (states need not be hashable): whether the game moved on."""
    return json.dumps(state.to_json(), sort_keys=True, default=str)


def sample_chance(state: State, rng: random.Random) -> Action:
    """Draws one chance outcome of `state` with the given seeded random source."""
    outcomes = state.chance_outcomes()
    if not outcomes:
        raise GameError("not a chance node")
    actions, weights = zip(*outcomes)
    return rng.choices(actions, weights=weights, k=1)[0]


def random_playout(state: State, rng: random.Random, max_actions: int | None = None,
                   on_action=None) -> State:
    """Plays uniformly random legal actions (and seeded chance) until the end or a limit.

    At SIMULTANEOUS nodes a random seat among those still to act commits first.
    `on_action(state, action, next_state)` is called after each action.
    """
    limit = state.game.playout_limit if max_actions is None else max_actions
    for _ in range(limit):
        p = state.current_player()
        if p == TERMINAL:
            break
        if p == CHANCE:
            action = sample_chance(state, rng)
        else:
            seats = state.players_to_act()
            seat = seats[0] if len(seats) == 1 else rng.choice(seats)
            action = rng.choice(state.legal_actions(seat))
        nxt = state.apply(action)
        if on_action is not None:
            on_action(state, action, nxt)
        state = nxt
    return state


def split_words(text: str, minimum: int) -> list[str]:
    """Splits an action's text into words, requiring at least `minimum` of them."""
    words = text.split()
    if len(words) < minimum:
        raise InvalidActionError(f"incomplete action {text!r}")
    return words


def as_tuple(values: Sequence[Any]) -> tuple[Any, ...]:
    """Deep-converts JSON lists back into tuples, for rebuilding frozen states."""
    return tuple(as_tuple(v) if isinstance(v, list) else v for v in values)
