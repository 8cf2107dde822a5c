"""Automatic IceTowers scoring from what the camera sees on the table.

An observation is the towers on the table (each bottom to top) and the free-standing
pieces, optionally with who plays which colour; the format is documented in
docs/observations/icetowers.md. `score_observation` says who controls each tower, each
colour's and each player's score, the rule violations visible (a piece resting on a
smaller one) and what is notable but legal (a pair of one colour, which only mining
produces: a split opportunity; a mining opportunity).

Here observations meet the rules, so this module may import the game; vision never does.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from companion.games.icetowers import Tower, size_violations, split_points, tower_points, tower_text
from companion.pieces import Colour, Pyramid, Size

GUS_NAME = "Gus"


class ObservationError(ValueError):
    """An observation that cannot be read; the message names the field and the problem."""


@dataclass(frozen=True, slots=True)
class Observation:
    """What is on the table: towers bottom to top (free pieces are one-piece towers).

    `players` maps each player's name to the colours they play, in seat order; empty
    when unknown, in which case colours are scored on their own. `gus` is the ghost's
    colour, if he plays.
    """

    towers: tuple[Tower, ...]
    players: tuple[tuple[str, tuple[Colour, ...]], ...] = ()
    gus: Colour | None = None
    doubts: tuple[str, ...] = ()  # what the camera was unsure of, when read from `recognize --json`

    def owner_of(self, colour: Colour) -> str | None:
        """The name of the player of `colour`, 'Gus' for his colour, None when unknown."""
        if colour == self.gus:
            return GUS_NAME
        for name, colours in self.players:
            if colour in colours:
                return name
        return None


@dataclass(frozen=True, slots=True)
class TowerScore:
    tower: Tower
    controller: Colour
    owner: str | None
    points: int

    def to_json(self) -> dict[str, Any]:
        return {"tower": tower_text(self.tower), "controller": self.controller.value,
                "owner": self.owner, "points": self.points}


@dataclass(frozen=True, slots=True)
class ScoreReport:
    """Scores, controllers, violations and notes for one observation."""

    towers: tuple[TowerScore, ...]
    colour_scores: tuple[tuple[Colour, int], ...]
    player_scores: tuple[tuple[str, int], ...]
    winners: tuple[str, ...]
    violations: tuple[str, ...]
    notes: tuple[str, ...]

    def to_json(self) -> dict[str, Any]:
        return {
            "towers": [t.to_json() for t in self.towers],
            "colour_scores": {c.value: v for c, v in self.colour_scores},
            "player_scores": {name: v for name, v in self.player_scores},
            "winners": list(self.winners),
            "violations": list(self.violations),
            "notes": list(self.notes),
        }

    def __str__(self) -> str:
        lines = ["towers (bottom to top):"]
        for t in self.towers:
            who = t.controller.value + (f" ({t.owner})" if t.owner else "")
            lines.append(f"  {tower_text(t.tower):40} {who:20} {t.points:>3}")
        lines.append("colours: " + (", ".join(f"{c.value} {v}" for c, v in self.colour_scores) or "none"))
        if self.player_scores:
            lines.append("players: " + ", ".join(f"{name} {v}" for name, v in self.player_scores))
        if self.winners:
            lines.append("leading: " + ", ".join(self.winners))
        lines.append("violations: " + ("none" if not self.violations else ""))
        lines += [f"  {v}" for v in self.violations]
        lines.append("notes: " + ("none" if not self.notes else ""))
        lines += [f"  {n}" for n in self.notes]
        return "\n".join(lines)


def score_observation(observation: Observation) -> ScoreReport:
    """Scores a table as seen: the top piece's colour controls a tower and earns its pips."""
    towers = tuple(TowerScore(t, t[-1].colour, observation.owner_of(t[-1].colour), tower_points(t))
                   for t in observation.towers)
    colours: dict[Colour, int] = {}
    for _, player_colours in observation.players:
        for c in player_colours:
            colours[c] = 0
    if observation.gus is not None:
        colours[observation.gus] = 0
    for t in towers:
        colours[t.controller] = colours.get(t.controller, 0) + t.points
    for t in observation.towers:
        for p in t:
            colours.setdefault(p.colour, 0)

    players = [(name, sum(colours[c] for c in cs)) for name, cs in observation.players]
    if observation.gus is not None:
        players.append((GUS_NAME, colours[observation.gus]))
    ranked = players or [(c.value, v) for c, v in colours.items()]
    best = max((v for _, v in ranked), default=0)
    winners = tuple(name for name, v in ranked if v == best) if ranked else ()

    violations: list[str] = []
    notes: list[str] = [f"camera unsure, confirm: {d}" for d in observation.doubts]
    for t in observation.towers:
        violations += size_violations(t)
        if observation.players:
            violations += [f"{p} in {tower_text(t)} is of a colour nobody plays"
                           for p in t if observation.owner_of(p.colour) is None]
        for height in split_points(t):
            notes.append(f"split opportunity: {tower_text(t[:height])}|{tower_text(t[height:])} "
                         f"({t[height - 1]} under {t[height]}), for {_splitters(observation, t[height].colour)}")
        counts: dict[Colour, int] = {}
        for p in t:
            counts[p.colour] = counts.get(p.colour, 0) + 1
        for colour, n in counts.items():
            if n >= 2 and colour != t[-1].colour:
                owner = observation.owner_of(colour)
                notes.append(f"mining opportunity: {n} {colour.value} pieces in {tower_text(t)}"
                             + (f", for {owner}" if owner else ""))
    return ScoreReport(towers, tuple(colours.items()), tuple(players), winners, tuple(violations), tuple(notes))


def _splitters(observation: Observation, colour: Colour) -> str:
    owner = observation.owner_of(colour)
    if owner == GUS_NAME:
        return "any player (Gus never splits)"
    if owner is None:
        return f"anyone but the player of {colour.value}"
    return f"anyone but {owner}"


# --- reading observations -------------------------------------------------------------

def _piece(value: Any, where: str) -> Pyramid:
    try:
        if isinstance(value, str):
            return Pyramid.parse(value)
        if isinstance(value, list) and len(value) == 2 and isinstance(value[0], str):
            size = value[1]
            if isinstance(size, int) and not isinstance(size, bool):
                size = str(size)
            if isinstance(size, str):
                return Pyramid(Colour.parse(value[0]), Size.parse(size))
    except ValueError as exc:
        raise ObservationError(f"{where}: {exc}") from None
    raise ObservationError(f"{where}: a piece is [\"colour\", \"size\"] or \"colour-size\", not {value!r}")


def _colours(value: Any, where: str) -> tuple[Colour, ...]:
    items = [value] if isinstance(value, str) else value
    if not isinstance(items, list) or not items or not all(isinstance(v, str) for v in items):
        raise ObservationError(f"{where}: expected a colour name or a list of them, not {value!r}")
    try:
        return tuple(Colour.parse(v) for v in items)
    except ValueError as exc:
        raise ObservationError(f"{where}: {exc}") from None


TABLE_FIELDS = frozenset({"game", "players", "gus", "towers", "free"})


def table_from_recognized(data: Mapping[str, Any]) -> dict[str, Any]:
    """The table part of what `companion recognize --json` prints (a full camera observation).

    Only the fields scoring needs are read: the derived `position` (towers and free pieces), or,
    when it is absent, the `pieces` themselves; `players` and `gus` are kept when given. Pixels,
    boxes, confidences and the rest are ignored.
    """
    position = data.get("position")
    if not isinstance(position, Mapping):
        from companion.vision.observation import Observation as Seen, ObservationFormatError, icetowers_position

        try:
            position = icetowers_position(Seen.from_json(data))
        except ObservationFormatError as exc:
            raise ObservationError(f"camera observation: {exc}") from None
    table = {k: position[k] for k in ("towers", "free") if k in position}
    table.update({k: data[k] for k in ("players", "gus") if k in data})
    if "game" in data:
        table["game"] = data["game"]
    return table


def camera_doubts(data: Mapping[str, Any]) -> tuple[str, ...]:
    """One line per piece the camera was unsure of (those are not scored until confirmed)."""
    out = []
    for i, piece in enumerate(data.get("pieces") or (), start=1):
        if isinstance(piece, Mapping) and piece.get("unsure"):
            what = f"{piece.get('colour') or '?'}-{'?SML'[piece['size']] if piece.get('size') in (1, 2, 3) else '?'}"
            out.append(f"pieces[{i}] {what}: {'; '.join(map(str, piece['unsure']))}")
    return tuple(out)


def parse_observation(data: Any) -> Observation:
    """Builds an Observation from JSON data; ObservationError naming the bad field.

    Accepts the table format of docs/observations/icetowers.md (strict: an unknown field is
    an error, to catch typos) and the full observation `companion recognize --json` prints
    (recognised by its `pieces`; only the fields scoring needs are read).
    """
    if isinstance(data, list) and len(data) == 1 and isinstance(data[0], Mapping):
        data = data[0]
    if isinstance(data, list) and data and all(isinstance(d, Mapping) for d in data):
        raise ObservationError(f"a list of {len(data)} observations: score one table at a time")
    if not isinstance(data, Mapping):
        raise ObservationError(f"an observation is a JSON object, not {type(data).__name__}")
    if "pieces" in data:
        table = parse_observation(table_from_recognized(data))
        return replace(table, doubts=camera_doubts(data))
    unknown = set(data) - TABLE_FIELDS
    if unknown:
        raise ObservationError(f"unknown field(s): {', '.join(sorted(unknown))}")
    if data.get("game", "icetowers") != "icetowers":
        raise ObservationError(f"only icetowers observations can be scored, not {data['game']!r}")
    towers: list[Tower] = []
    raw_towers = data.get("towers", [])
    if not isinstance(raw_towers, list):
        raise ObservationError("\"towers\" must be a list of towers")
    for i, raw in enumerate(raw_towers, start=1):
        if not isinstance(raw, list) or not raw:
            raise ObservationError(f"towers[{i}]: a tower is a non-empty list of pieces, bottom to top")
        towers.append(tuple(_piece(p, f"towers[{i}] piece {j}") for j, p in enumerate(raw, start=1)))
    raw_free = data.get("free", [])
    if not isinstance(raw_free, list):
        raise ObservationError("\"free\" must be a list of pieces")
    towers += [(_piece(p, f"free[{i}]"),) for i, p in enumerate(raw_free, start=1)]
    if not towers:
        raise ObservationError("no towers and no free pieces: nothing to score")

    players: list[tuple[str, tuple[Colour, ...]]] = []
    raw_players = data.get("players", [])
    if not isinstance(raw_players, list):
        raise ObservationError("\"players\" must be a list of {\"name\": ..., \"colours\": [...]}")
    for i, raw in enumerate(raw_players, start=1):
        if not isinstance(raw, Mapping) or not isinstance(raw.get("name"), str) or not raw["name"]:
            raise ObservationError(f"players[{i}]: needs a \"name\" and \"colours\"")
        players.append((raw["name"], _colours(raw.get("colours"), f"players[{i}] colours")))
    gus = None
    if data.get("gus") is not None:
        gus = _colours(data["gus"], "gus")[0]
    taken = [c for _, cs in players for c in cs] + ([gus] if gus else [])
    if len(set(taken)) != len(taken):
        raise ObservationError("each colour may belong to one player only")
    names = [name for name, _ in players]
    if len(set(names)) != len(names) or (gus is not None and GUS_NAME in names):
        raise ObservationError("player names must differ (and 'Gus' is the ghost's)")
    return Observation(tuple(towers), tuple(players), gus)


def read_observation(path: str | Path) -> Observation:
    """Reads an observation file; ObservationError (or OSError) when it cannot be read."""
    try:
        data = json.loads(Path(path).read_text(encoding="utf-8"))
    except json.JSONDecodeError as exc:
        raise ObservationError(f"not valid JSON ({exc.msg} at line {exc.lineno} column {exc.colno})") from None
    except UnicodeDecodeError as exc:
        raise ObservationError(f"not UTF-8 text ({exc.reason})") from None
    return parse_observation(data)
