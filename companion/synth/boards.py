"""Minimal drawing geometry of the playing surfaces: chessboards, Martian Coasters, hex boards.

Only what a scene needs: where a cell is on the table, which cell a point falls in, and which
compass heading a board direction has. World origin is the outer corner of the a1 cell (square
boards) or the centre cell (hex boards); +y is north (towards higher ranks).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from companion.pieces import Direction

# The Martian Coasters 6x6 layout from ../shared/rules/equipment.md, top row (rank 6) first:
# the exits allowed from each square (U=north, R=east, D=south, L=west).
COASTER_EXITS = (
    ("RDL", "URDL", "URL", "UDL", "URL", "UDL"),
    ("UDL", "UDL", "RDL", "URD", "URL", "URDL"),
    ("RDL", "URL", "UDL", "URL", "UDL", "URD"),
    ("UDL", "URD", "RDL", "URD", "RDL", "URL"),
    ("URDL", "RDL", "UDL", "URL", "URD", "URD"),
    ("URD", "RDL", "URD", "RDL", "URDL", "URL"),
)
EXIT_LETTERS = {"U": Direction.N, "R": Direction.E, "D": Direction.S, "L": Direction.W}


@dataclass(frozen=True)
class SquareBoard:
    """A square grid of `files` x `ranks` cells of `cell_mm`, with a play area inside it.

    The play area (`area`: first file, first rank, files, ranks, 0-based in the full grid) is where
    cell names are counted from: the 6x6 and 4x8 Icebomb arenas are parts of a chessboard.
    """

    kind: str  # "chessboard" or "coasters"
    files: int
    ranks: int
    cell_mm: float
    border_mm: float
    thickness_mm: float
    area: tuple[int, int, int, int]

    @property
    def width_mm(self) -> float:
        return self.files * self.cell_mm

    @property
    def depth_mm(self) -> float:
        return self.ranks * self.cell_mm

    @property
    def centre(self) -> tuple[float, float]:
        return self.width_mm / 2, self.depth_mm / 2

    def cell_name(self, file: int, rank: int) -> str:
        return f"{chr(ord('a') + file)}{rank + 1}"

    def area_cells(self) -> list[tuple[int, int]]:
        """0-based (file, rank) of every play-area cell, counted within the area."""
        return [(f, r) for r in range(self.area[3]) for f in range(self.area[2])]

    def cell_centre(self, file: int, rank: int) -> tuple[float, float]:
        """Centre of play-area cell (file, rank), in world millimetres."""
        f0, r0 = self.area[0], self.area[1]
        return (f0 + file + 0.5) * self.cell_mm, (r0 + rank + 0.5) * self.cell_mm

    def cell_at(self, x: float, y: float) -> str | None:
        """Name of the play-area cell containing (x, y), or None off the play area."""
        f = math.floor(x / self.cell_mm) - self.area[0]
        r = math.floor(y / self.cell_mm) - self.area[1]
        if 0 <= f < self.area[2] and 0 <= r < self.area[3]:
            return self.cell_name(f, r)
        return None

    def heading(self, direction: Direction) -> float:
        return float(direction.degrees)

    def area_corners(self) -> list[tuple[float, float]]:
        """Outer corners of the play area: a1's corner, then the last file's, the far corner, the last rank's."""
        f0, r0, nf, nr = self.area
        c = self.cell_mm
        return [(f0 * c, r0 * c), ((f0 + nf) * c, r0 * c), ((f0 + nf) * c, (r0 + nr) * c), (f0 * c, (r0 + nr) * c)]

    def outline(self) -> list[tuple[float, float]]:
        """Corners of the physical board, border included."""
        b = self.border_mm
        return [(-b, -b), (self.width_mm + b, -b), (self.width_mm + b, self.depth_mm + b), (-b, self.depth_mm + b)]

    def to_json(self) -> dict:
        return {"kind": self.kind, "files": self.files, "ranks": self.ranks, "cell_mm": round(self.cell_mm, 3),
                "border_mm": round(self.border_mm, 3), "thickness_mm": round(self.thickness_mm, 3),
                "area": {"first_file": self.area[0], "first_rank": self.area[1], "files": self.area[2],
                         "ranks": self.area[3]}}


# Pointy-top hexes: axial step (dq, dr) -> (name, compass heading).
HEX_DIRECTIONS = {
    (1, 0): ("E", 90.0), (0, 1): ("NE", 30.0), (-1, 1): ("NW", 330.0),
    (-1, 0): ("W", 270.0), (0, -1): ("SW", 210.0), (1, -1): ("SE", 150.0),
}


@dataclass(frozen=True)
class HexBoard:
    """A hexagon of pointy-top hexes with `radius` rings round the centre.

    Internally (q, r) has r growing north; cell names follow `companion.boards.hexgrid`, whose r grows
    towards the bottom edge as drawn: name(q, r) is 'q+r,-r', so the direction names agree.
    """

    radius: int
    hex_mm: float  # centre to corner
    border_mm: float
    thickness_mm: float
    kind: str = "hex"

    def cells(self) -> list[tuple[int, int]]:
        n = self.radius
        return [(q, r) for r in range(-n, n + 1) for q in range(-n, n + 1) if abs(q + r) <= n]

    @staticmethod
    def cell_name(q: int, r: int) -> str:
        return f"{q + r},{-r}"

    def cell_centre(self, q: int, r: int) -> tuple[float, float]:
        return self.hex_mm * math.sqrt(3) * (q + r / 2), self.hex_mm * 1.5 * r

    def cell_at(self, x: float, y: float) -> str | None:
        fr = y / (1.5 * self.hex_mm)
        fq = x / (math.sqrt(3) * self.hex_mm) - fr / 2
        q, r, s = round(fq), round(fr), round(-fq - fr)
        dq, dr, ds = abs(q - fq), abs(r - fr), abs(s + fq + fr)
        if dq > dr and dq > ds:
            q = -r - s
        elif dr > ds:
            r = -q - s
        if max(abs(q), abs(r), abs(q + r)) > self.radius:
            return None
        return self.cell_name(q, r)

    def hex_corners(self, q: int, r: int) -> list[tuple[float, float]]:
        cx, cy = self.cell_centre(q, r)
        return [(cx + self.hex_mm * math.cos(math.radians(30 + 60 * i)),
                 cy + self.hex_mm * math.sin(math.radians(30 + 60 * i))) for i in range(6)]

    @property
    def centre(self) -> tuple[float, float]:
        return 0.0, 0.0

    def outline(self) -> list[tuple[float, float]]:
        """The six corners of the board's hexagonal outline (flat-top), border included."""
        extent = self.hex_mm * math.sqrt(3) * (self.radius + 0.5) + self.border_mm
        extent /= math.cos(math.radians(30))
        return [(extent * math.cos(math.radians(60 * i)), extent * math.sin(math.radians(60 * i))) for i in range(6)]

    def to_json(self) -> dict:
        return {"kind": self.kind, "radius": self.radius, "hex_mm": round(self.hex_mm, 3),
                "border_mm": round(self.border_mm, 3), "thickness_mm": round(self.thickness_mm, 3),
                "directions": {name: heading for name, heading in HEX_DIRECTIONS.values()}}


Board = SquareBoard | HexBoard
