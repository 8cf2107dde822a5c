"""Playing surfaces as they lie on the table: chessboards, Martian Coasters, hex boards.

Cells, their names, the hex directions and the coaster arrows come from the shared board geometry
(`companion.boards`: `square`, `coasters`, `hexgrid`); this module adds only what drawing needs:
sizes in millimetres, borders and thickness, where each cell lies on the table, and outlines.
World origin is the outer corner of the a1 cell (square boards) or the centre hex (hex boards);
+x is east, +y is north (towards higher ranks).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from companion.boards.coasters import QUADRANTS, CoasterBoard, Quadrant, martian_coasters
from companion.boards.hexgrid import HEX_DIRECTIONS, HexDirection, HexGrid, hex_grid, round_axial
from companion.boards.square import Cell, SquareGrid, square_grid
from companion.pieces import Colour, Direction

SQRT3 = math.sqrt(3)
# The order of `coaster_colours` in a scene's state: near-left, near-right, far-left, far-right
# (as `companion.vision.locate.BoardSpec` counts coasters).
COASTER_ORDER = (Quadrant.BOTTOM_LEFT, Quadrant.BOTTOM_RIGHT, Quadrant.TOP_LEFT, Quadrant.TOP_RIGHT)


@dataclass(frozen=True)
class SquareBoard:
    """A square grid of `files` x `ranks` cells of `cell_mm`, with a play area inside it.

    The play area (`area`: first file, first rank, files, ranks, 0-based in the full grid) is where
    cell names are counted from: the 6x6 and 8x4 Icebomb arenas are parts of a chessboard. A
    Martian Coasters board (`kind` "coasters") carries its `layout`: arrows and coaster colours.
    """

    kind: str  # "chessboard" or "coasters"
    files: int
    ranks: int
    cell_mm: float
    border_mm: float
    thickness_mm: float
    area: tuple[int, int, int, int]
    layout: CoasterBoard | None = None

    @property
    def grid(self) -> SquareGrid:
        """The play area's grid: cell numbers and names as the rules engines use them."""
        return self.layout.grid if self.layout is not None else square_grid(self.area[2], self.area[3])

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
        """Name of play-area cell (file, rank), 0-based within the area."""
        return self.grid.name(self.grid.cell(file, rank))

    def area_cells(self) -> list[tuple[int, int]]:
        """0-based (file, rank) of every play-area cell, counted within the area."""
        return [self.grid.coords(cell) for cell in self.grid.cells]

    def cell_centre(self, file: int, rank: int) -> tuple[float, float]:
        """Centre of play-area cell (file, rank), in world millimetres."""
        f0, r0 = self.area[0], self.area[1]
        return (f0 + file + 0.5) * self.cell_mm, (r0 + rank + 0.5) * self.cell_mm

    def centre_of(self, cell: Cell) -> tuple[float, float]:
        """Centre of a play-area cell given as the grid's cell number."""
        return self.cell_centre(*self.grid.coords(cell))

    def cell_at(self, x: float, y: float) -> str | None:
        """Name of the play-area cell containing (x, y), or None off the play area."""
        f = math.floor(x / self.cell_mm) - self.area[0]
        r = math.floor(y / self.cell_mm) - self.area[1]
        if 0 <= f < self.area[2] and 0 <= r < self.area[3]:
            return self.cell_name(f, r)
        return None

    def heading(self, direction: Direction) -> float:
        """Compass heading on the table of a board direction (north is towards higher ranks)."""
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
        out = {"kind": self.kind, "files": self.files, "ranks": self.ranks, "cell_mm": round(self.cell_mm, 3),
               "border_mm": round(self.border_mm, 3), "thickness_mm": round(self.thickness_mm, 3),
               "area": {"first_file": self.area[0], "first_rank": self.area[1], "files": self.area[2],
                        "ranks": self.area[3]}}
        if self.layout is not None:
            out["coasters"] = {q.value: {"colour": self.layout.colour(q).value, "rotation": self.layout.rotation(q)}
                               for q in QUADRANTS}
        return out


def coasters_board(cell_mm: float, thickness_mm: float, colours: tuple[Colour, ...]) -> SquareBoard:
    """The Martian Coasters in the standard set-up (dots at the centre), coloured in `COASTER_ORDER`."""
    layout = martian_coasters(colours=dict(zip(COASTER_ORDER, colours)))
    return SquareBoard("coasters", 6, 6, cell_mm, 0.0, thickness_mm, (0, 0, 6, 6), layout)


@dataclass(frozen=True)
class HexBoard:
    """A hexagon of pointy-top hexes with `radius` rings round the centre hex.

    Cells, names and directions are those of `companion.boards.hexgrid.hex_grid(radius)`, whose
    axial r grows towards the south edge: a hex's centre is at x = sqrt(3) h (q + r/2), y = -1.5 h r
    for `hex_mm` h (centre to corner).
    """

    radius: int
    hex_mm: float  # centre to corner
    border_mm: float
    thickness_mm: float
    kind: str = "hex"

    @property
    def grid(self) -> HexGrid:
        return hex_grid(self.radius)

    def cells(self) -> range:
        return self.grid.cells

    def cell_name(self, cell: Cell) -> str:
        return self.grid.name(cell)

    def axial_centre(self, q: float, r: float) -> tuple[float, float]:
        """Table position of axial (q, r), fractional values allowed."""
        return self.hex_mm * SQRT3 * (q + r / 2), -self.hex_mm * 1.5 * r

    def centre_of(self, cell: Cell) -> tuple[float, float]:
        return self.axial_centre(*self.grid.coords(cell))

    def heading(self, direction: HexDirection) -> float:
        """Compass heading on the table of one step in `direction`."""
        x, y = self.axial_centre(*direction.delta)
        return math.degrees(math.atan2(x, y)) % 360

    def cell_at(self, x: float, y: float) -> str | None:
        """Name of the hex containing (x, y), or None off the board."""
        fr = -y / (1.5 * self.hex_mm)
        fq = x / (SQRT3 * self.hex_mm) - fr / 2
        q, r = round_axial(fq, fr)
        return self.grid.name(self.grid.cell(q, r)) if self.grid.contains(q, r) else None

    def hex_corners(self, cell: Cell) -> list[tuple[float, float]]:
        cx, cy = self.centre_of(cell)
        return [(cx + self.hex_mm * math.cos(math.radians(30 + 60 * i)),
                 cy + self.hex_mm * math.sin(math.radians(30 + 60 * i))) for i in range(6)]

    @property
    def centre(self) -> tuple[float, float]:
        return 0.0, 0.0

    def outline(self) -> list[tuple[float, float]]:
        """The six corners of the board's hexagonal outline (flat-top), border included."""
        extent = self.hex_mm * SQRT3 * (self.radius + 0.5) + self.border_mm
        extent /= math.cos(math.radians(30))
        return [(extent * math.cos(math.radians(60 * i)), extent * math.sin(math.radians(60 * i))) for i in range(6)]

    def to_json(self) -> dict:
        return {"kind": self.kind, "radius": self.radius, "hex_mm": round(self.hex_mm, 3),
                "border_mm": round(self.border_mm, 3), "thickness_mm": round(self.thickness_mm, 3),
                "directions": {d.value: round(self.heading(d), 6) for d in HEX_DIRECTIONS}}


Board = SquareBoard | HexBoard
