"""Game records: a JSON-lines file, one header line, then one event per line.

Header (line 1)::

    {"format": "icehouse-record/1", "game": "icebomb-arena", "variant": "standard",
     "players": ["Ann", "Bob", "Cy", "Dee"], "seed": 7, "options": {}}

`players` are in seat order, clockwise; the first is seat P1. `seed` seeds the
random source used for any chance node the record does not resolve itself.
`variant` (default "standard") and `options` (default {}) are optional.

Events (every later line)::

    {"action": "P1 bid LM"}
    {"action": "P3 move LN", "time": 1764421234.5, "comment": "into the bomb"}

`action` is the action's text form (see each game's module); `time` (seconds
since the epoch) and `comment` are optional. Blank lines are ignored. The format
is documented for users in docs/records.md.
"""

from __future__ import annotations

import json
import random
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from companion.games import GameError, State, get_game
from companion.games.base import CHANCE, sample_chance

FORMAT = "icehouse-record/1"
_HEADER_KEYS = {"format", "game", "variant", "players", "seed", "options"}
_EVENT_KEYS = {"action", "time", "comment"}


class RecordError(ValueError):
    """A record that cannot be read; the message names the line and the problem."""

    def __init__(self, line: int, problem: str):
        super().__init__(f"line {line}: {problem}")
        self.line = line
        self.problem = problem


@dataclass(frozen=True)
class RecordHeader:
    game: str
    players: tuple[str, ...]
    variant: str = "standard"
    seed: int = 0
    options: dict[str, Any] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        return {"format": FORMAT, "game": self.game, "variant": self.variant,
                "players": list(self.players), "seed": self.seed, "options": self.options}

    def initial_state(self) -> State:
        return get_game(self.game).new_initial_state(len(self.players), self.variant, self.options)


@dataclass(frozen=True)
class RecordEvent:
    line: int
    action: str
    time: float | None = None
    comment: str | None = None

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"action": self.action}
        if self.time is not None:
            out["time"] = self.time
        if self.comment:
            out["comment"] = self.comment
        return out


def parse_record(lines: Iterable[str]) -> tuple[RecordHeader, list[RecordEvent]]:
    """Reads a record's lines. Raises RecordError for the first malformed line."""
    header: RecordHeader | None = None
    events: list[RecordEvent] = []
    for number, raw in enumerate(lines, start=1):
        if not raw.strip():
            continue
        try:
            data = json.loads(raw)
        except json.JSONDecodeError as exc:
            raise RecordError(number, f"not valid JSON ({exc.msg} at column {exc.colno})") from None
        if not isinstance(data, dict):
            raise RecordError(number, f"expected a JSON object, got {type(data).__name__}")
        if header is None:
            header = _parse_header(number, data)
        else:
            events.append(_parse_event(number, data))
    if header is None:
        raise RecordError(1, "empty record: no header line")
    return header, events


def read_record(path: str | Path) -> tuple[RecordHeader, list[RecordEvent]]:
    try:
        text = Path(path).read_text(encoding="utf-8")
    except UnicodeDecodeError as exc:
        raise RecordError(1, f"not UTF-8 text ({exc.reason})") from None
    return parse_record(text.splitlines())


def write_record(path: str | Path, header: RecordHeader, actions: Iterable[str | RecordEvent]) -> None:
    lines = [json.dumps(header.to_json())]
    for a in actions:
        lines.append(json.dumps(a.to_json() if isinstance(a, RecordEvent) else {"action": str(a)}))
    Path(path).write_text("\n".join(lines) + "\n", encoding="utf-8")


def _parse_header(line: int, data: dict[str, Any]) -> RecordHeader:
    unknown = set(data) - _HEADER_KEYS
    if unknown:
        raise RecordError(line, f"unknown header field(s): {', '.join(sorted(unknown))}")
    if data.get("format", FORMAT) != FORMAT:
        raise RecordError(line, f"unsupported format {data['format']!r} (expected {FORMAT!r})")
    game = data.get("game")
    if not isinstance(game, str):
        raise RecordError(line, "header needs \"game\": a game name")
    try:
        get_game(game)
    except GameError as exc:
        raise RecordError(line, str(exc)) from None
    players = data.get("players")
    if not isinstance(players, list) or not players or not all(isinstance(p, str) and p for p in players):
        raise RecordError(line, "header needs \"players\": a list of names in seat order")
    variant = data.get("variant", "standard")
    seed = data.get("seed", 0)
    options = data.get("options", {})
    if not isinstance(variant, str):
        raise RecordError(line, "\"variant\" must be a string")
    if not isinstance(seed, int) or isinstance(seed, bool):
        raise RecordError(line, "\"seed\" must be an integer")
    if not isinstance(options, dict):
        raise RecordError(line, "\"options\" must be an object")
    header = RecordHeader(game, tuple(players), variant, seed, options)
    try:
        header.initial_state()
    except (GameError, ValueError) as exc:
        raise RecordError(line, f"bad set-up: {exc}") from None
    return header


def _parse_event(line: int, data: dict[str, Any]) -> RecordEvent:
    unknown = set(data) - _EVENT_KEYS
    if unknown:
        raise RecordError(line, f"unknown event field(s): {', '.join(sorted(unknown))}")
    action = data.get("action")
    if not isinstance(action, str) or not action.strip():
        raise RecordError(line, "event needs \"action\": the action's text")
    time = data.get("time")
    if time is not None and (not isinstance(time, (int, float)) or isinstance(time, bool)):
        raise RecordError(line, "\"time\" must be a number of seconds")
    comment = data.get("comment")
    if comment is not None and not isinstance(comment, str):
        raise RecordError(line, "\"comment\" must be a string")
    return RecordEvent(line, action.strip(), time, comment)


@dataclass(frozen=True)
class Verdict:
    """The referee's word on one event of a record."""

    line: int | None  # None for chance the replay drew itself from the seed
    action: str
    legal: bool
    reason: str | None = None
    effects: tuple[str, ...] = ()

    def to_json(self) -> dict[str, Any]:
        return {"line": self.line, "action": self.action, "legal": self.legal,
                "reason": self.reason, "effects": list(self.effects)}

    def __str__(self) -> str:
        where = f"line {self.line}" if self.line is not None else "seeded chance"
        if self.legal:
            said = f"legal    {self.action}"
            return f"{where:>9}: {said}" + (f"  -> {'; '.join(self.effects)}" if self.effects else "")
        return f"{where:>9}: ILLEGAL  {self.action}  ({self.reason})"


def replay(header: RecordHeader, events: Iterable[RecordEvent]) -> Iterator[tuple[Verdict, State]]:
    """Judges each event in turn, yielding its verdict and the state after it.

    An illegal or unreadable action is a verdict and leaves the state unchanged.
    When the game waits on chance and the next event is a player's action, the
    chance outcome is drawn from the header's seed (so hand-written records need
    not spell out random tie-breaks) and reported as its own verdict.
    """
    game = get_game(header.game)
    state = header.initial_state()
    rng = random.Random(header.seed)
    for event in events:
        try:
            action = game.parse_action(event.action)
        except GameError as exc:
            yield Verdict(event.line, event.action, False, str(exc)), state
            continue
        while action.player is not None and state.current_player() == CHANCE:
            drawn = sample_chance(state, rng)
            state, effects = state.apply_with_effects(drawn)
            yield Verdict(None, str(drawn), True, None, tuple(effects)), state
        reason = state.illegal_reason(action)
        if reason is not None:
            yield Verdict(event.line, event.action, False, reason), state
            continue
        state, effects = state.apply_with_effects(action)
        yield Verdict(event.line, str(action), True, None, tuple(effects)), state


def runs(played: Sequence[str], together: Callable[[str], bool], upto: int) -> Iterator[tuple[int, int]]:
    """(start, end) of each run of `played` before `upto`: consecutive actions for which `together`
    holds form one run (made at once), any other action is a run of its own."""
    start = 0
    while start < min(upto, len(played)):
        end = start + 1
        while together(played[start]) and end < len(played) and together(played[end]):
            end += 1
        yield start, end
        start = end


def agreeing_prefix(seen: Sequence[str], played: Sequence[str], together: Callable[[str], bool]) -> int:
    """How many of the first actions of `seen` are those of `played` (a record's), where a run of
    consecutive played actions for which `together` holds was made at once and may be seen in any
    order (Icebomb Arena's plans are revealed together; a camera applies them seat by seat)."""
    agree = 0
    for start, end in runs(played, together, len(seen)):
        if sorted(seen[start:end]) != sorted(played[start:end]):
            break
        agree = end
    return agree


def actions_differing(seen: Sequence[str], played: Sequence[str], together: Callable[[str], bool]) -> list[int]:
    """Indices of the actions of `seen` that are not the record's (`played`) in the same place,
    runs of actions made at once (`together`, as for `agreeing_prefix`) compared as sets. Where a
    misread left the game where the record's action would have (a gladiator stopped by the edge
    either way), a camera goes on in step with the record and only that action differs."""
    return [start + k for start, end in runs(played, together, len(seen))
            for k, text in enumerate(seen[start:end]) if text not in played[start:end]]
