"""What the camera saw on one frame, in the piece vocabulary: the Observation value types and JSON.

An `Observation` is the mapper's output: the board (kind, outer corner pixels, confidence) and every
object seen, each with its pixels (box, apex, contact), where it is on the board (a cell, or table
millimetres and a seat zone off the board), how it rests (pose, direction, stack and level) and how
sure the mapper is. Nothing here knows a game's rules; `position_json` writes the per-game position
documented in docs/observations/<game>.md (for IceTowers exactly what `companion score` reads).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from companion.pieces import Colour, Pose, Size

Point = tuple[float, float]
PYRAMID = "pyramid"
OBSERVATION_VERSION = 1


class ObservationFormatError(ValueError):
    """An observation's JSON cannot be read; the message names the field."""


@dataclass(frozen=True, slots=True)
class SeenBoard:
    """The board as located: its kind, outer corner pixels (a1's corner first) and confidence."""

    kind: str
    corners: tuple[Point, ...]
    confidence: float

    def to_json(self) -> dict[str, Any]:
        return {"kind": self.kind, "corners": [[round(x, 1), round(y, 1)] for x, y in self.corners],
                "confidence": round(self.confidence, 4)}


@dataclass(frozen=True, slots=True)
class SeenPiece:
    """One object as mapped onto the board.

    Attributes:
        kind: "pyramid", "pawn", "bead", "d6" or "d8".
        colour, size, pose: a pyramid's attributes (None for tokens, or when the detector did not say).
        direction: where a lying pyramid points: a compass name on square boards ('N', 'NE', ...),
            a hex direction ('E', 'NE', 'NW', 'W', 'SW', 'SE') on hex boards; None when upright.
        cell: the board cell it stands in (game names), None off the playing area.
        table_mm: its ground point on the board plane in millimetres (board frame).
        zone: the seat zone ('P1', ...) of a piece beside the board, when seats are known.
        stack: the id of the stack, tower or nest it belongs to (shared by its pieces), None alone.
        level: 0 for the bottom of a stack (the outer piece of a nest), counting up (inwards).
        value: a die's value when read, else None.
        box, apex, contact: pixels, as detected.
        confidence: 0..1, the least of the detector's and the mapper's confidences.
        unsure: why the mapper doubts it (empty when sure); an unsure piece is never silently trusted.
    """

    kind: str
    colour: Colour | None = None
    size: Size | None = None
    pose: Pose | None = None
    direction: str | None = None
    cell: str | None = None
    table_mm: Point | None = None
    zone: str | None = None
    stack: int | None = None
    level: int | None = None
    value: int | None = None
    box: tuple[float, float, float, float] = (0.0, 0.0, 0.0, 0.0)
    apex: Point | None = None
    contact: Point | None = None
    confidence: float = 1.0
    unsure: tuple[str, ...] = ()

    @property
    def is_pyramid(self) -> bool:
        return self.kind == PYRAMID

    @property
    def piece_text(self) -> str:
        """'red-L' for a pyramid, the kind for a token."""
        if not self.is_pyramid:
            return self.kind
        return f"{self.colour.value if self.colour else '?'}-{self.size.letter if self.size else '?'}"

    @property
    def where(self) -> str:
        """The cell, else the seat zone, else 'table'."""
        return self.cell or self.zone or "table"

    def to_json(self) -> dict[str, Any]:
        return {
            "kind": self.kind,
            "colour": self.colour.value if self.colour else None,
            "size": int(self.size) if self.size else None,
            "pose": self.pose.value if self.pose else None,
            "direction": self.direction,
            "cell": self.cell,
            "table_mm": None if self.table_mm is None else [round(v, 1) for v in self.table_mm],
            "zone": self.zone,
            "stack": self.stack,
            "level": self.level,
            "value": self.value,
            "box": [round(v, 1) for v in self.box],
            "apex": None if self.apex is None else [round(v, 1) for v in self.apex],
            "contact": None if self.contact is None else [round(v, 1) for v in self.contact],
            "confidence": round(self.confidence, 4),
            "unsure": list(self.unsure),
        }

    @classmethod
    def from_json(cls, data: Mapping[str, Any], where: str = "piece") -> SeenPiece:
        try:
            def point(v):
                return None if v is None else (float(v[0]), float(v[1]))

            return cls(
                kind=str(data["kind"]),
                colour=None if data.get("colour") is None else Colour.parse(data["colour"]),
                size=None if data.get("size") is None else Size.parse(str(data["size"])),
                pose=None if data.get("pose") is None else Pose(data["pose"]),
                direction=data.get("direction"), cell=data.get("cell"), table_mm=point(data.get("table_mm")),
                zone=data.get("zone"), stack=data.get("stack"), level=data.get("level"), value=data.get("value"),
                box=tuple(float(v) for v in data.get("box", (0, 0, 0, 0))), apex=point(data.get("apex")),
                contact=point(data.get("contact")), confidence=float(data.get("confidence", 1.0)),
                unsure=tuple(str(u) for u in data.get("unsure", ())))
        except (KeyError, TypeError, ValueError, IndexError) as exc:
            raise ObservationFormatError(f"{where}: {exc}") from None


@dataclass(frozen=True, slots=True)
class Observation:
    """Everything seen in one frame, mapped onto the board.

    `game` names the game whose position format `position_json` writes; `image` names the source
    (a file, or a frame number). `board` is None when no board was located (then cells are None).
    """

    game: str
    pieces: tuple[SeenPiece, ...]
    board: SeenBoard | None = None
    image: str | None = None
    notes: tuple[str, ...] = field(default=())

    @property
    def unsure(self) -> bool:
        """True when any piece is unsure or the board is missing: the position must be confirmed."""
        return self.board is None and self.game != "icetowers" or any(p.unsure for p in self.pieces)

    @property
    def pyramids(self) -> tuple[SeenPiece, ...]:
        return tuple(p for p in self.pieces if p.is_pyramid)

    def stacks(self) -> list[list[SeenPiece]]:
        """Every stack (or nest), each bottom to top (outer to inner), in order of stack id."""
        groups: dict[int, list[SeenPiece]] = {}
        for p in self.pieces:
            if p.stack is not None:
                groups.setdefault(p.stack, []).append(p)
        return [sorted(g, key=lambda p: p.level or 0) for _, g in sorted(groups.items())]

    def to_json(self) -> dict[str, Any]:
        return {"version": OBSERVATION_VERSION, "game": self.game, "image": self.image,
                "board": None if self.board is None else self.board.to_json(),
                "pieces": [p.to_json() for p in self.pieces], "unsure": self.unsure,
                "notes": list(self.notes), "position": position_json(self)}

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> Observation:
        """Reads `to_json` output back (the `position` and `unsure` fields are derived, not read)."""
        if not isinstance(data, Mapping) or "pieces" not in data or "game" not in data:
            raise ObservationFormatError("an observation is an object with \"game\" and \"pieces\"")
        board = data.get("board")
        try:
            seen_board = None if board is None else SeenBoard(
                str(board["kind"]), tuple((float(x), float(y)) for x, y in board["corners"]), float(board["confidence"]))
        except (KeyError, TypeError, ValueError) as exc:
            raise ObservationFormatError(f"board: {exc}") from None
        pieces = tuple(SeenPiece.from_json(p, f"pieces[{i}]") for i, p in enumerate(data["pieces"], start=1))
        return cls(str(data["game"]), pieces, seen_board, data.get("image"), tuple(data.get("notes", ())))


# --- per-game positions ---------------------------------------------------------------------

def _pyramid_pair(p: SeenPiece) -> list[str]:
    return [p.colour.value if p.colour else "?", p.size.letter if p.size else "?"]


def icetowers_position(observation: Observation) -> dict[str, Any]:
    """The table in the format `companion score` reads (docs/observations/icetowers.md).

    Towers are the stacks of two or more pieces, bottom to top; `free` holds single pieces,
    standing or lying (a piece set down in the open is free-standing; see docs/rulings/mapper.md).
    Pieces whose colour or size was not read are left out (they are marked unsure in `pieces`).
    """
    towers, free = [], []
    for stack in observation.stacks():
        pyramids = [p for p in stack if p.is_pyramid]
        if pyramids and all(p.colour and p.size for p in pyramids):
            (towers if len(pyramids) > 1 else free).append([_pyramid_pair(p) for p in pyramids])
    for p in observation.pyramids:
        if p.stack is None and p.colour and p.size:
            free.append([_pyramid_pair(p)])
    return {"game": "icetowers", "towers": towers, "free": [f[0] for f in free]}


def board_position(observation: Observation) -> dict[str, Any]:
    """The position on a board game's table: what stands in each cell, and what lies in each seat zone.

    `cells` maps a cell to its contents bottom to top; `zones` maps a seat zone to the pieces in
    front of that seat; `table` lists what is neither (e.g. dice beside the board).
    """
    cells: dict[str, list[str]] = {}
    zones: dict[str, list[str]] = {}
    table: list[str] = []
    ordered = sorted(observation.pieces, key=lambda p: (p.stack if p.stack is not None else -1, p.level or 0))
    for p in ordered:
        text = p.piece_text
        if p.is_pyramid:
            text += " " + (p.direction or "U") if p.pose == Pose.LYING else " U"
        elif p.value is not None:
            text += f"={p.value}"
        if p.cell:
            cells.setdefault(p.cell, []).append(text)
        elif p.zone:
            zones.setdefault(p.zone, []).append(text)
        else:
            table.append(text)
    return {"game": observation.game, "cells": dict(sorted(cells.items())), "zones": dict(sorted(zones.items())),
            "table": sorted(table)}


def position_json(observation: Observation) -> dict[str, Any]:
    """The game's position as seen, in its documented format (docs/observations/<game>.md)."""
    if observation.game == "icetowers":
        return icetowers_position(observation)
    return board_position(observation)
