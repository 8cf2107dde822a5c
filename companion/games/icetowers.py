"""IceTowers (Andrew Looney, 1999-2003): pyramid stacking without turns.

Rules: ../shared/rules/icetowers.txt. Rulings where the text is silent: docs/rulings/icetowers.md.

There are no turns: the state is always SIMULTANEOUS and every player who has a legal
action may act, one play at a time. The table has no geometry that the rules care
about, so a position is a multiset of towers (each bottom to top; a free-standing
piece is a one-piece tower) plus the mined pieces players hold in hand. Towers are
named in actions by what they contain, which is also what a camera sees; identical
towers are interchangeable for the rules.

Action text forms (seat P1.. in seat order; a tower is written bottom to top):

    P1 cap red-S on blue-L/green-M      a free-standing piece (or the held one) caps a tower
    P1 mine blue-L/[red-M]/green-S      take out the bracketed piece: it goes into P1's hand
    P1 split blue-L/red-M|red-S         separate the tower between a pair of one colour
    P1 set down red-M                   the held piece, when it can cap nothing
    P1 done                             P1 agrees that no more plays will be made
    P1 showdown                         end a Final Piece Showdown: held pieces are set down
    P1 tower war                        claim a Tower War: the position came round three times

Variants: "standard" (one colour each), "two-colour" (two colours each, scored together;
the rules' two-player option, offered at any table size) and "gus" (a ghost colour
that either player may move for and that can win).
"""

from __future__ import annotations

import hashlib
from collections import Counter
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, replace
from typing import Any, ClassVar

from companion.games import register
from companion.games.base import (
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

Tower = tuple[Pyramid, ...]  # bottom to top
#: A tower on the table and the number of the play that last changed it (0: set-up).
#: The number only tells which towers took part in a Tower War; it never affects legality.
Placed = tuple[Tower, int]

TWO_COLOUR = "two-colour"
GUS = "gus"
SEAT_COLOURS = (Colour.RED, Colour.YELLOW, Colour.GREEN, Colour.BLUE)
TWO_COLOUR_SEATS = ((Colour.RED, Colour.BLUE), (Colour.YELLOW, Colour.GREEN),
                    (Colour.BLACK, Colour.PURPLE), (Colour.ORANGE, Colour.CYAN))
GUS_COLOURS = (Colour.WHITE, Colour.CLEAR)  # his first and second choice
#: Towers must come round this many times before a Tower War may be claimed: the rules
#: ask players to keep playing "for a while longer" once a loop appears.
TOWER_WAR_REPEATS = 3


class TowerError(ValueError):
    """Text that is not a tower (bottom-to-top pieces joined by '/')."""


def tower_text(tower: Iterable[Pyramid]) -> str:
    """'red-L/blue-M': the pieces from bottom to top."""
    return "/".join(map(str, tower))


def parse_tower(text: str) -> Tower:
    """Reads 'red-L/blue-M' into a tower; TowerError naming the text when malformed."""
    if not text.strip():
        raise TowerError("empty tower text")
    try:
        return tuple(Pyramid.parse(part) for part in text.strip().split("/"))
    except ValueError as exc:
        raise TowerError(f"bad tower {text!r}: {exc}") from None


def tower_points(tower: Iterable[Pyramid]) -> int:
    """3, 2 and 1 points for each large, medium and small piece."""
    return sum(p.size.pips for p in tower)


def size_violations(tower: Tower) -> list[str]:
    """Where a piece rests on a smaller one, which no legal play can produce."""
    return [f"{tower[i + 1]} rests on the smaller {tower[i]} (level {i + 2} of {tower_text(tower)})"
            for i in range(len(tower) - 1) if tower[i + 1].size > tower[i].size]


def split_points(tower: Tower) -> list[int]:
    """Heights at which the tower can be split: k where levels k and k+1 share a colour."""
    return [k for k in range(1, len(tower)) if tower[k - 1].colour == tower[k].colour]


# --- actions ------------------------------------------------------------------------------

@dataclass(frozen=True, slots=True)
class Cap:
    """Put a piece on top of a tower: a free-standing piece, or the mined piece in hand."""

    player: int
    piece: Pyramid
    target: Tower

    def __str__(self) -> str:
        return f"{seat_name(self.player)} cap {self.piece} on {tower_text(self.target)}"


@dataclass(frozen=True, slots=True)
class Mine:
    """Take the piece at `level` (1 = bottom) out of a tower into the hand."""

    player: int
    tower: Tower
    level: int

    @property
    def piece(self) -> Pyramid:
        return self.tower[self.level - 1]

    def __str__(self) -> str:
        parts = [str(p) for p in self.tower]
        parts[self.level - 1] = f"[{parts[self.level - 1]}]"
        return f"{seat_name(self.player)} mine {'/'.join(parts)}"


@dataclass(frozen=True, slots=True)
class Split:
    """Separate a tower between levels `height` and `height + 1`."""

    player: int
    tower: Tower
    height: int

    def __str__(self) -> str:
        low, high = self.tower[:self.height], self.tower[self.height:]
        return f"{seat_name(self.player)} split {tower_text(low)}|{tower_text(high)}"


@dataclass(frozen=True, slots=True)
class SetDown:
    """Stand the held piece free on the table (only when it can cap nothing)."""

    player: int
    piece: Pyramid

    def __str__(self) -> str:
        return f"{seat_name(self.player)} set down {self.piece}"


@dataclass(frozen=True, slots=True)
class Done:
    """The player agrees that no more plays will be made; a later play withdraws every agreement."""

    player: int

    def __str__(self) -> str:
        return f"{seat_name(self.player)} done"


@dataclass(frozen=True, slots=True)
class Showdown:
    """Ends a Final Piece Showdown: every held piece is set down and the game ends."""

    player: int

    def __str__(self) -> str:
        return f"{seat_name(self.player)} showdown"


@dataclass(frozen=True, slots=True)
class TowerWar:
    """Claims a Tower War: the towers of the loop are removed and the game ends."""

    player: int

    def __str__(self) -> str:
        return f"{seat_name(self.player)} tower war"


IceTowersAction = Cap | Mine | Split | SetDown | Done | Showdown | TowerWar
Play = Cap | Mine | Split | SetDown


def _tower_arg(text: str, whole: str) -> Tower:
    try:
        return parse_tower(text)
    except TowerError as exc:
        raise InvalidActionError(f"{exc} in action {whole!r}") from None


def parse_action(text: str) -> IceTowersAction:
    """Reads an action's text form (see the module docstring)."""
    words = text.split()
    if len(words) < 2:
        raise InvalidActionError(f"incomplete action {text!r}")
    player = parse_seat(words[0])
    verb, rest = words[1], words[2:]
    try:
        if verb == "done" and not rest:
            return Done(player)
        if verb == "showdown" and not rest:
            return Showdown(player)
        if verb == "tower" and rest == ["war"]:
            return TowerWar(player)
        if verb == "set" and len(rest) == 2 and rest[0] == "down":
            return SetDown(player, Pyramid.parse(rest[1]))
        if verb == "cap" and len(rest) == 3 and rest[1] == "on":
            return Cap(player, Pyramid.parse(rest[0]), _tower_arg(rest[2], text))
        if verb == "split" and len(rest) == 1 and rest[0].count("|") == 1:
            low, high = rest[0].split("|")
            lower, upper = _tower_arg(low, text), _tower_arg(high, text)
            return Split(player, lower + upper, len(lower))
        if verb == "mine" and len(rest) == 1:
            parts = rest[0].split("/")
            marked = [i for i, part in enumerate(parts) if part.startswith("[") and part.endswith("]")]
            if len(marked) != 1:
                raise InvalidActionError(f"mine needs exactly one [bracketed] piece, in {text!r}")
            parts[marked[0]] = parts[marked[0]][1:-1]
            return Mine(player, _tower_arg("/".join(parts), text), marked[0] + 1)
    except InvalidActionError:
        raise
    except ValueError as exc:
        raise InvalidActionError(f"{exc} in action {text!r}") from None
    raise InvalidActionError(
        f"unknown action {text!r} (expected P1 cap PIECE on TOWER, P1 mine TOWER with one [piece], "
        f"P1 split LOW|HIGH, P1 set down PIECE, P1 done, P1 showdown or P1 tower war)")


# --- the position -------------------------------------------------------------------------

@dataclass(frozen=True, slots=True)
class Held:
    """A mined piece in a player's hand, and the tower it came from (as reassembled).

    Until the piece is played that tower is being handled by the miner: nobody may play
    on it, and the piece may not go back onto it (No Minebacks).
    """

    seat: int
    piece: Pyramid
    origin: Placed


@dataclass(frozen=True, slots=True)
class IceTowersState(State):
    """A position of IceTowers.

    `colours` are the colours in play and `owners` their seats (None for Gus, the ghost).
    `inventory` counts the pieces put on the table at set-up; they must all stay accounted for.
    `towers` is every tower on the table, sorted, with the play that last changed it.
    `history` holds a digest of the position after each play (index = play number), for
    spotting a Tower War. `done` are the seats that have agreed the game is over since
    the last play. `removed` are towers taken out by a Tower War (they score nothing).
    """

    num_players: int
    variant: str
    colours: tuple[Colour, ...]
    owners: tuple[int | None, ...]
    inventory: tuple[tuple[Pyramid, int], ...]
    towers: tuple[Placed, ...]
    held: tuple[Held, ...]
    done: frozenset[int]
    history: tuple[str, ...]
    removed: tuple[Tower, ...]
    ended: Outcome | None

    # --- the interface ---------------------------------------------------------------
    @property
    def game(self) -> Game:
        return ICETOWERS

    @property
    def plays(self) -> int:
        """How many plays (caps, mines, splits, set-downs) have been made."""
        return len(self.history) - 1

    def current_player(self) -> int:
        return TERMINAL if self.ended is not None else SIMULTANEOUS

    def players_to_act(self) -> tuple[int, ...]:
        if self.ended is not None:
            return ()
        return tuple(s for s in range(self.num_players) if self._may_act(s))

    def legal_actions(self, player: int | None = None) -> list[IceTowersAction]:
        if self.ended is not None:
            return []
        seats = range(self.num_players) if player is None else (player,)
        out: list[IceTowersAction] = []
        for seat in seats:
            if 0 <= seat < self.num_players:
                out.extend(self._actions_of(seat))
        return out

    def illegal_reason(self, action: IceTowersAction) -> str | None:
        if self.ended is not None:
            return "the game is over"
        seat = action.player
        if seat is None or not 0 <= seat < self.num_players:
            return f"there is no seat {seat_name(seat) if seat is not None else 'None'} with {self.num_players} players"
        hand = self.hand_of(seat)
        if isinstance(action, Cap):
            return self._cap_reason(seat, action.piece, action.target, hand)
        if isinstance(action, Mine):
            return self._mine_reason(seat, action.tower, action.level, hand)
        if isinstance(action, Split):
            return self._split_reason(seat, action.tower, action.height, hand)
        if isinstance(action, SetDown):
            if hand is None:
                return f"{seat_name(seat)} holds no mined piece"
            if action.piece != hand.piece:
                return f"{seat_name(seat)} holds {hand.piece}, not {action.piece}"
            target = next(self._cap_targets(seat, hand.piece, hand), None)
            if target is not None:
                return f"{hand.piece} can still cap {tower_text(target)} (No Minebacks: a mined piece must cap if it can)"
            return None
        if isinstance(action, Done):
            if hand is not None:
                return f"{seat_name(seat)} must first play the mined {hand.piece}"
            if seat in self.done:
                return f"{seat_name(seat)} has already agreed that the game is over"
            return None
        if isinstance(action, Showdown):
            if hand is None:
                return "only a player holding a mined piece can end a Final Piece Showdown"
            return None if self._showdown_stands() else "there is no Final Piece Showdown: " + self._why_no_showdown()
        if isinstance(action, TowerWar):
            if self.held:
                return "a Tower War can only be claimed when no mined piece is in hand"
            seen = self.history.count(self.history[-1])
            if seen < TOWER_WAR_REPEATS:
                return (f"this position has come round {seen} time(s); a Tower War needs "
                        f"{TOWER_WAR_REPEATS} (keep playing a while: an ending may still be possible)")
            return None
        return f"not an IceTowers action: {action!r}"

    def _resolve(self, action: IceTowersAction) -> tuple[IceTowersState, list[str]]:
        seat = action.player
        assert seat is not None
        hand = self.hand_of(seat)
        who = seat_name(seat)
        if isinstance(action, Done):
            done = self.done | {seat}
            if len(done) == self.num_players:
                return self._finish(self.towers, (), "agreed", ["all players agree that the game is over"])
            return replace(self, done=done), [f"{who} agrees that the game is over"]
        if isinstance(action, Showdown):
            step = self.plays
            towers = list(self.towers) + [((h.piece,), step) for h in self.held]
            down = ", ".join(f"{seat_name(h.seat)} sets down {h.piece}" for h in self.held)
            return self._finish(_sorted(towers), (), "final piece showdown", [f"Final Piece Showdown: {down}"])
        if isinstance(action, TowerWar):
            start = [i for i, d in enumerate(self.history) if d == self.history[-1]][-TOWER_WAR_REPEATS]
            involved = [t for t in self.towers if t[1] > start]
            kept = tuple(t for t in self.towers if t[1] <= start)
            removed = tuple(t for t, _ in involved)
            text = ", ".join(tower_text(t) for t in removed)
            return self._finish(kept, removed, "tower war", [f"Tower War: removed {text or 'nothing'}"])
        step = self.plays + 1
        towers = list(self.towers)
        held = list(self.held)
        if isinstance(action, Cap):
            if hand is not None:
                held.remove(hand)
                effects = [f"{who} caps {tower_text(action.target)} with the mined {action.piece}"]
            else:
                towers.remove(self._pick((action.piece,), ()))
                effects = [f"{who} caps {tower_text(action.target)} with {action.piece}"]
            target = self._pick(action.target, self._reserved())
            towers.remove(target)
            new = action.target + (action.piece,)
            towers.append((new, step))
            effects.append(f"{_controller_text(self, action.piece.colour)} controls {tower_text(new)}")
        elif isinstance(action, Mine):
            source = self._pick(action.tower, self._reserved())
            towers.remove(source)
            rest = action.tower[:action.level - 1] + action.tower[action.level:]
            origin = (rest, step)
            towers.append(origin)
            held.append(Held(seat, action.piece, origin))
            effects = [f"{who} mines {action.piece} out of {tower_text(action.tower)}, leaving {tower_text(rest)}"]
        elif isinstance(action, Split):
            source = self._pick(action.tower, self._reserved())
            towers.remove(source)
            low, high = action.tower[:action.height], action.tower[action.height:]
            towers += [(low, step), (high, step)]
            effects = [f"{who} splits {tower_text(action.tower)} into {tower_text(low)} and {tower_text(high)}"]
        else:
            assert isinstance(action, SetDown) and hand is not None
            held.remove(hand)
            towers.append(((action.piece,), step))
            effects = [f"{who} sets {action.piece} down free-standing"]
        held.sort(key=lambda h: h.seat)
        placed = _sorted(towers)
        nxt = replace(self, towers=placed, held=tuple(held), done=frozenset(),
                      history=self.history + (_digest(placed, held),))
        if not any(nxt._has_play(s) for s in range(self.num_players)):
            return nxt._finish(nxt.towers, (), "no plays left", effects + ["no more plays are possible"])
        return nxt, effects

    def chance_outcomes(self) -> list[tuple[IceTowersAction, float]]:
        return []

    def outcome(self) -> Outcome | None:
        return self.ended

    # --- who may do what --------------------------------------------------------------
    def hand_of(self, seat: int) -> Held | None:
        """The mined piece `seat` holds, if any."""
        for h in self.held:
            if h.seat == seat:
                return h
        return None

    def colours_of(self, seat: int) -> tuple[Colour, ...]:
        """The colours `seat` plays (Gus's colour not included)."""
        return tuple(c for c, o in zip(self.colours, self.owners) if o == seat)

    def gus_colour(self) -> Colour | None:
        for c, o in zip(self.colours, self.owners):
            if o is None:
                return c
        return None

    def _movable(self, seat: int) -> tuple[Colour, ...]:
        """Colours whose pieces `seat` may move: its own, and Gus's (anyone may move for him)."""
        return tuple(c for c, o in zip(self.colours, self.owners) if o == seat or o is None)

    def _owner(self, colour: Colour) -> int | None:
        """The seat playing `colour`; None for Gus. Every piece on the table is of a colour in play."""
        return self.owners[self.colours.index(colour)]

    def _reserved(self) -> tuple[Placed, ...]:
        return tuple(h.origin for h in self.held)

    def _available(self, tower: Tower, reserved: tuple[Placed, ...]) -> list[Placed]:
        """Towers on the table with these pieces that nobody is handling."""
        same = [t for t in self.towers if t[0] == tower]
        for r in reserved:
            if r in same:
                same.remove(r)
        return same

    def _pick(self, tower: Tower, reserved: tuple[Placed, ...]) -> Placed:
        # Identical towers are interchangeable; taking the most recently changed one keeps
        # untouched towers untouched, so a Tower War removes no more than its loop.
        return max(self._available(tower, reserved), key=lambda t: t[1])

    def _free_pieces(self, colours: tuple[Colour, ...]) -> list[Pyramid]:
        return list(dict.fromkeys(t[0][0] for t in self.towers if len(t[0]) == 1 and t[0][0].colour in colours))

    def _distinct_towers(self, reserved: tuple[Placed, ...]) -> list[Tower]:
        counts = Counter(t for t, _ in self.towers)
        for r in reserved:
            counts[r[0]] -= 1
        return [t for t, n in counts.items() if n > 0]

    def _cap_reason(self, seat: int, piece: Pyramid, target: Tower, hand: Held | None) -> str | None:
        who = seat_name(seat)
        if hand is not None and piece != hand.piece:
            return f"{who} holds the mined {hand.piece} and must play it first (one play at a time)"
        if piece.colour not in self._movable(seat):
            return f"{who} may not move {piece.colour.value} pieces"
        if hand is None and not self._available((piece,), ()):
            return f"there is no free-standing {piece} to move"
        if not self._available(target, self._reserved()):
            if any(t[0] == target for t in self.towers):
                if hand is not None and hand.origin[0] == target:
                    return f"No Minebacks: {piece} was mined out of {tower_text(target)} and must cap a different tower"
                return f"{tower_text(target)} is being handled by a player who mined it"
            return f"there is no tower {tower_text(target)} on the table"
        top = target[-1]
        if top.colour == piece.colour:
            return f"{piece} cannot cap its own colour ({top} is on top of {tower_text(target)})"
        if piece.size > top.size:
            return f"{piece} is larger than {top}, the top of {tower_text(target)}"
        if self._owner(piece.colour) is None and len(target) == 1:
            return f"Gus never caps a single-piece tower ({tower_text(target)})"
        return None

    def _mine_reason(self, seat: int, tower: Tower, level: int, hand: Held | None) -> str | None:
        who = seat_name(seat)
        if hand is not None:
            return f"{who} holds the mined {hand.piece} and must play it first (one play at a time)"
        if not 1 <= level <= len(tower):
            return f"{tower_text(tower)} has no level {level}"
        if not self._available(tower, self._reserved()):
            if any(t[0] == tower for t in self.towers):
                return f"{tower_text(tower)} is being handled by a player who mined it"
            return f"there is no tower {tower_text(tower)} on the table"
        colour = tower[level - 1].colour
        if colour not in self._movable(seat):
            return f"{who} may not mine {colour.value} pieces"
        if tower[-1].colour == colour:
            return f"{colour.value} controls {tower_text(tower)}, so it cannot be mined for {colour.value}"
        if sum(p.colour == colour for p in tower) < 2:
            return f"mining needs two or more {colour.value} pieces in the tower"
        return None

    def _split_reason(self, seat: int, tower: Tower, height: int, hand: Held | None) -> str | None:
        who = seat_name(seat)
        if hand is not None:
            return f"{who} holds the mined {hand.piece} and must play it first (one play at a time)"
        if not 1 <= height < len(tower):
            return f"{tower_text(tower)} cannot be split at height {height}"
        if not self._available(tower, self._reserved()):
            if any(t[0] == tower for t in self.towers):
                return f"{tower_text(tower)} is being handled by a player who mined it"
            return f"there is no tower {tower_text(tower)} on the table"
        below, above = tower[height - 1], tower[height]
        if below.colour != above.colour:
            return f"{below} and {above} are not a pair of one colour"
        owner = self._owner(below.colour)
        if owner == seat:
            return f"{who} cannot split a pair of their own colour {below.colour.value}"
        return None

    def _cap_targets(self, seat: int, piece: Pyramid, hand: Held | None,
                     towers: list[Tower] | None = None) -> Iterator[Tower]:
        gus = self._owner(piece.colour) is None
        for target in self._distinct_towers(self._reserved()) if towers is None else towers:
            top = target[-1]
            if top.colour != piece.colour and piece.size <= top.size and not (gus and len(target) == 1):
                yield target

    def _plays_of(self, seat: int) -> Iterator[Play]:
        hand = self.hand_of(seat)
        if hand is not None:
            capped = False
            for target in self._cap_targets(seat, hand.piece, hand):
                capped = True
                yield Cap(seat, hand.piece, target)
            if not capped:
                yield SetDown(seat, hand.piece)
            return
        movable = self._movable(seat)
        towers = self._distinct_towers(self._reserved())
        for piece in self._free_pieces(movable):
            for target in self._cap_targets(seat, piece, None, towers):
                yield Cap(seat, piece, target)
        for tower in towers:
            if len(tower) < 2:
                continue
            top_colour = tower[-1].colour
            counts = Counter(p.colour for p in tower)
            for level, p in enumerate(tower, start=1):
                if p.colour in movable and p.colour != top_colour and counts[p.colour] >= 2:
                    yield Mine(seat, tower, level)
            for height in split_points(tower):
                if self._owner(tower[height].colour) != seat:
                    yield Split(seat, tower, height)

    def _has_play(self, seat: int) -> bool:
        return next(self._plays_of(seat), None) is not None

    def _may_act(self, seat: int) -> bool:
        if self.hand_of(seat) is not None or seat not in self.done:
            return True  # a holder can always place; anyone else can agree to end
        return self._has_play(seat) or self._tower_war_claimable()

    def _tower_war_claimable(self) -> bool:
        return not self.held and self.history.count(self.history[-1]) >= TOWER_WAR_REPEATS

    def _actions_of(self, seat: int) -> list[IceTowersAction]:
        out: list[IceTowersAction] = list(self._plays_of(seat))
        hand = self.hand_of(seat)
        if hand is None and seat not in self.done:
            out.append(Done(seat))
        if hand is not None and self._showdown_stands():
            out.append(Showdown(seat))
        if self._tower_war_claimable():
            out.append(TowerWar(seat))
        return out

    def _showdown_stands(self) -> bool:
        return not self._why_no_showdown()

    def _why_no_showdown(self) -> str:
        """Empty when a Final Piece Showdown stands, else why not."""
        if len(self.held) < 2:
            return "it needs two or more players holding a mined piece"
        for h in self.held:
            target = next(self._cap_targets(h.seat, h.piece, h), None)
            if target is not None:
                return f"{seat_name(h.seat)}'s {h.piece} can still cap {tower_text(target)}"
        for seat in range(self.num_players):
            if self.hand_of(seat) is None and seat not in self.done and self._has_play(seat):
                return f"{seat_name(seat)} can still play and has not agreed that the game is over"
        return ""

    # --- scores ------------------------------------------------------------------------
    def colour_scores(self) -> dict[Colour, int]:
        """Points of each colour in play: the towers it controls (held pieces score nothing)."""
        scores = dict.fromkeys(self.colours, 0)
        for tower, _ in self.towers:
            scores[tower[-1].colour] = scores.get(tower[-1].colour, 0) + tower_points(tower)
        return scores

    def scores(self) -> tuple[int, ...]:
        """Each seat's points: the sum over the colours it plays."""
        by_colour = self.colour_scores()
        return tuple(sum(by_colour[c] for c in self.colours_of(s)) for s in range(self.num_players))

    def gus_score(self) -> int | None:
        gus = self.gus_colour()
        return None if gus is None else self.colour_scores()[gus]

    def _finish(self, towers: tuple[Placed, ...], removed: tuple[Tower, ...], how: str,
                effects: list[str]) -> tuple[IceTowersState, list[str]]:
        done = replace(self, towers=towers, held=(), removed=self.removed + removed, done=frozenset())
        scores = done.scores()
        gus = done.gus_score()
        best = max(scores)
        termination = how
        if gus is not None and gus > best:
            winners: tuple[int, ...] = ()
            termination += "; Gus wins"
        else:
            winners = tuple(s for s, v in enumerate(scores) if v == best)
            if gus is not None and gus == best:
                termination += "; Gus shares the win"
        ended = Outcome(termination, winners, tuple(float(v) for v in scores))
        text = ", ".join(f"{seat_name(s)} {v}" for s, v in enumerate(scores))
        if gus is not None:
            text += f", Gus {gus}"
        return replace(done, ended=ended), effects + [f"game over ({termination}): {text}"]

    # --- reports ----------------------------------------------------------------------
    def invariant_violations(self) -> list[str]:
        problems: list[str] = []
        counts: Counter[Pyramid] = Counter()
        for tower, step in self.towers:
            if not tower:
                problems.append("an empty tower")
            if not 0 <= step <= self.plays:
                problems.append(f"{tower_text(tower)} changed at play {step}, but only {self.plays} were made")
            problems += size_violations(tower)
            counts.update(tower)
        for tower in self.removed:
            counts.update(tower)
        for h in self.held:
            counts[h.piece] += 1
            if h.origin not in self.towers:
                problems.append(f"{seat_name(h.seat)} holds {h.piece} from {tower_text(h.origin[0])}, which is not on the table")
        for piece, expected in self.inventory:
            n = counts.pop(piece, 0)
            if n != expected:
                problems.append(f"{n} {piece} piece(s), but {expected} were set up")
        for piece, n in counts.items():
            problems.append(f"{n} {piece} piece(s) that were not set up")
        for piece, _ in self.inventory:
            if piece.colour not in self.colours:
                problems.append(f"{piece} is of a colour not in play")
        if list(self.towers) != sorted(self.towers, key=_placed_key):
            problems.append("towers are not in canonical order")
        if len({h.seat for h in self.held}) != len(self.held):
            problems.append("a player holds two mined pieces")
        if self.ended is not None and self.held:
            problems.append("the game is over with a mined piece still in hand")
        return problems

    def summary(self) -> dict[str, Any]:
        by_colour = self.colour_scores()
        return {
            "game": ICETOWERS.name,
            "variant": self.variant,
            "turn": self.turn_text(),
            "plays": self.plays,
            "seats": [{"seat": seat_name(s), "colours": [c.value for c in self.colours_of(s)],
                       "score": v, "done": s in self.done,
                       "holding": None if self.hand_of(s) is None else str(self.hand_of(s).piece)}  # type: ignore[union-attr]
                      for s, v in enumerate(self.scores())],
            "gus": None if self.gus_colour() is None else {"colour": self.gus_colour().value,  # type: ignore[union-attr]
                                                            "score": self.gus_score()},
            "colour_scores": {c.value: v for c, v in by_colour.items()},
            "towers": [{"tower": tower_text(t), "controller": t[-1].colour.value, "points": tower_points(t)}
                       for t, _ in self.towers],
            "removed": [tower_text(t) for t in self.removed],
            "tower_war_claimable": self.ended is None and self._tower_war_claimable(),
            "outcome": None if self.ended is None else self.ended.to_json(),
        }

    def __str__(self) -> str:
        lines = [f"IceTowers ({self.variant}), {self.plays} plays, {self.turn_text()}"]
        by_colour = self.colour_scores()
        for s, v in enumerate(self.scores()):
            hand = self.hand_of(s)
            extra = (f", holding {hand.piece}" if hand else "") + (", done" if s in self.done else "")
            colours = "+".join(c.value for c in self.colours_of(s))
            lines.append(f"  {seat_name(s)} {colours}: {v} points{extra}")
        gus = self.gus_colour()
        if gus is not None:
            lines.append(f"  Gus {gus.value}: {by_colour[gus]} points")
        for tower, _ in self.towers:
            lines.append(f"  {tower_text(tower):40} {tower[-1].colour.value} {tower_points(tower)}")
        for tower in self.removed:
            lines.append(f"  {tower_text(tower):40} removed in the Tower War")
        if self.ended is not None:
            lines.append(f"  over: {self.ended.termination}")
        return "\n".join(lines)

    def to_json(self) -> dict[str, Any]:
        return {
            "game": ICETOWERS.name,
            "players": self.num_players,
            "variant": self.variant,
            "colours": [[c.value, o] for c, o in zip(self.colours, self.owners)],
            "inventory": [[str(p), n] for p, n in self.inventory],
            "towers": [[tower_text(t), step] for t, step in self.towers],
            "held": [[h.seat, str(h.piece), tower_text(h.origin[0]), h.origin[1]] for h in self.held],
            "done": sorted(self.done),
            "history": list(self.history),
            "removed": [tower_text(t) for t in self.removed],
            "ended": None if self.ended is None else self.ended.to_json(),
        }


def _controller_text(state: IceTowersState, colour: Colour) -> str:
    owner = state._owner(colour)
    return f"Gus ({colour.value})" if owner is None else f"{seat_name(owner)} ({colour.value})"


def _placed_key(placed: Placed) -> tuple[str, int]:
    return (tower_text(placed[0]), placed[1])


def _sorted(towers: Iterable[Placed]) -> tuple[Placed, ...]:
    return tuple(sorted(towers, key=_placed_key))


def _digest(towers: Iterable[Placed], held: Iterable[Held]) -> str:
    """A short fingerprint of the position (towers by content, hands), for repetition."""
    text = ";".join(tower_text(t) for t, _ in towers) + "#" + ";".join(
        f"{h.seat}:{h.piece}:{tower_text(h.origin[0])}" for h in held)
    return hashlib.blake2b(text.encode(), digest_size=8).hexdigest()


# --- the game -------------------------------------------------------------------------------

def _colour_list(value: Any, what: str) -> tuple[Colour, ...]:
    items = [value] if isinstance(value, str) else value
    if not isinstance(items, list) or not items or not all(isinstance(v, str) for v in items):
        raise GameError(f"{what} must be a colour name or a list of colour names, not {value!r}")
    try:
        return tuple(Colour.parse(v) for v in items)
    except ValueError as exc:
        raise GameError(f"{what}: {exc}") from None


_OPTIONS = ("colours", "gus_colour", "pieces_per_size", "table")


def _seat_colours(num_players: int, variant: str,
                  options: Mapping[str, Any]) -> tuple[tuple[Colour, ...], tuple[int | None, ...]]:
    per_seat = 2 if variant == TWO_COLOUR else 1
    if "colours" in options:
        given = options["colours"]
        if not isinstance(given, list) or len(given) != num_players:
            raise GameError(f"option colours needs one entry per seat ({num_players}), not {given!r}")
        seat_colours = [_colour_list(v, f"colours of {seat_name(s)}") for s, v in enumerate(given)]
        for s, cs in enumerate(seat_colours):
            if len(cs) != per_seat:
                raise GameError(f"{seat_name(s)} needs {per_seat} colour(s) in the {variant} variant, got {len(cs)}")
    else:
        defaults = TWO_COLOUR_SEATS if per_seat == 2 else tuple((c,) for c in SEAT_COLOURS)
        seat_colours = list(defaults[:num_players])
    colours: list[Colour] = [c for cs in seat_colours for c in cs]
    owners: list[int | None] = [s for s, cs in enumerate(seat_colours) for _ in cs]
    if variant == GUS:
        if "gus_colour" in options:
            gus = _colour_list(options["gus_colour"], "gus_colour")[0]
        else:
            free = [c for c in GUS_COLOURS if c not in colours]
            if not free:
                raise GameError("Gus's colours (white, then clear) are both taken; give gus_colour")
            gus = free[0]
        colours.append(gus)
        owners.append(None)
    elif "gus_colour" in options:
        raise GameError("option gus_colour needs the gus variant")
    if len(set(colours)) != len(colours):
        raise GameError(f"each colour may be played by one player only: {', '.join(c.value for c in colours)}")
    return tuple(colours), tuple(owners)


def _table(value: Any, colours: tuple[Colour, ...]) -> list[Tower]:
    if not isinstance(value, list) or not value or not all(isinstance(t, str) for t in value):
        raise GameError(f"option table must be a list of tower texts like 'red-L/blue-M', not {value!r}")
    towers = []
    for text in value:
        try:
            tower = parse_tower(text)
        except TowerError as exc:
            raise GameError(f"option table: {exc}") from None
        for piece in tower:
            if piece.colour not in colours:
                raise GameError(f"option table: {piece} in {text!r} is not a colour in play "
                                f"({', '.join(c.value for c in colours)})")
        problems = size_violations(tower)
        if problems:
            raise GameError(f"option table: {problems[0]}")
        towers.append(tower)
    return towers


class IceTowers(Game):
    name: ClassVar[str] = "icetowers"
    title: ClassVar[str] = "IceTowers"
    min_players: ClassVar[int] = 2
    max_players: ClassVar[int] = 4
    variants: ClassVar[Mapping[str, str]] = {
        "standard": "one colour each, everyone plays at once",
        TWO_COLOUR: "two colours each, scored together (the two-player option, at any table size)",
        GUS: "an extra colour for Gus the ghost: anyone may move for him; he never caps a "
             "single-piece tower, never splits, and can win",
    }
    playout_limit: ClassVar[int] = 3000

    def new_initial_state(self, num_players: int, variant: str = "standard",
                          options: Mapping[str, Any] | None = None) -> IceTowersState:
        """A table of free-standing pieces, or the towers given in option "table".

        Options: "colours", one entry per seat (a colour name, or a list of two in the
        two-colour variant); "gus_colour" (default white, else clear); "pieces_per_size"
        (1-5, default 5: a full stash is five of each size); "table", a list of tower
        texts ('red-L/blue-M') to start from instead (a game resumed from what the camera
        saw, or a puzzle), in place of the scattered stashes.
        """
        self.check_player_count(num_players)
        self.check_variant(variant)
        options = dict(options or {})
        unknown = set(options) - set(_OPTIONS)
        if unknown:
            raise GameError(f"IceTowers has no option(s) {', '.join(sorted(unknown))} (known: {', '.join(_OPTIONS)})")
        colours, owners = _seat_colours(num_players, variant, options)
        if "table" in options:
            if "pieces_per_size" in options:
                raise GameError("give either option table or option pieces_per_size, not both")
            towers = _sorted((t, 0) for t in _table(options["table"], colours))
        else:
            per_size = options.get("pieces_per_size", PIECES_PER_SIZE_IN_STASH)
            if (not isinstance(per_size, int) or isinstance(per_size, bool)
                    or not 1 <= per_size <= PIECES_PER_SIZE_IN_STASH):
                raise GameError(f"option pieces_per_size must be 1-{PIECES_PER_SIZE_IN_STASH}, not {per_size!r}")
            towers = _sorted((((Pyramid(c, s),), 0) for c in colours for s in Size for _ in range(per_size)))
        inventory = Counter(p for t, _ in towers for p in t)
        state = IceTowersState(
            num_players=num_players, variant=variant, colours=colours, owners=owners,
            inventory=tuple(sorted(inventory.items(), key=lambda item: str(item[0]))),
            towers=towers, held=(), done=frozenset(), history=(_digest(towers, ()),), removed=(), ended=None)
        if not any(state._has_play(s) for s in range(num_players)):
            return state._finish(towers, (), "no plays left", [])[0]
        return state

    def parse_action(self, text: str) -> IceTowersAction:
        return parse_action(text)

    def state_from_json(self, data: Mapping[str, Any]) -> IceTowersState:
        try:
            towers = _sorted((parse_tower(t), int(step)) for t, step in data["towers"])
            held = tuple(Held(int(seat), Pyramid.parse(piece), (parse_tower(origin), int(step)))
                         for seat, piece, origin, step in data["held"])
            ended = data["ended"]
            state = IceTowersState(
                num_players=int(data["players"]), variant=str(data["variant"]),
                colours=tuple(Colour.parse(c) for c, _ in data["colours"]),
                owners=tuple(None if o is None else int(o) for _, o in data["colours"]),
                inventory=tuple((Pyramid.parse(p), int(n)) for p, n in data["inventory"]),
                towers=towers, held=held,
                done=frozenset(int(s) for s in data["done"]),
                history=tuple(str(d) for d in data["history"]),
                removed=tuple(parse_tower(t) for t in data["removed"]),
                ended=None if ended is None else Outcome(
                    str(ended["termination"]), tuple(int(x) for x in ended["winners"]),
                    None if ended["scores"] is None else tuple(float(x) for x in ended["scores"])),
            )
        except (KeyError, TypeError, ValueError) as exc:
            raise GameError(f"bad IceTowers state data: {exc!r}") from None
        self.check_player_count(state.num_players)
        self.check_variant(state.variant)
        if not state.history:
            raise GameError("bad IceTowers state data: empty history")
        return state


ICETOWERS = register(IceTowers())
