"""The Martian Coasters board: four 3x3 coasters in a 2x2 square, a 6x6 grid with arrows.

Every square has arrows printed on some of its edges; an arrow is an allowed exit
in that direction. All four coasters carry the same pattern of arrows and a small
dot in one corner; how each coaster is turned decides the 6x6 layout. In the
standard set-up the four dots meet at the centre of the grid.

Cells and names are those of a 6x6 `SquareGrid` ('a1' is the outer corner of the
bottom-left coaster, files run east, ranks north). Exits are written with the
letters of the rules' drawings: U(p) = N, R(ight) = E, D(own) = S, L(eft) = W.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from enum import Enum
from functools import cache

from companion.boards.square import Cell, SquareGrid, square_grid
from companion.pieces import CARDINALS, Colour, Direction

COASTER_SIDE = 3
BOARD_SIDE = 2 * COASTER_SIDE
#: A coaster is about 4 in square (unverified; vision calibrates from the image).
COASTER_MM = 101.6
CELL_MM = COASTER_MM / COASTER_SIDE

_LETTER_TO_DIRECTION = {"U": Direction.N, "R": Direction.E, "D": Direction.S, "L": Direction.W}
_DIRECTION_TO_LETTER = {d: letter for letter, d in _LETTER_TO_DIRECTION.items()}

#: One coaster drawn with its dot at the upper-left, rows from the top (equipment.md).
BASE_COASTER_EXITS: tuple[tuple[str, ...], ...] = (
    ("URD", "LRD", "LUR"),
    ("LUR", "URD", "URD"),
    ("LRD", "URDL", "LUR"),
)


class Quadrant(str, Enum):
    """Where a coaster lies in the 2x2 square, seen with a1 at the bottom-left."""

    BOTTOM_LEFT = "bottom-left"
    TOP_LEFT = "top-left"
    TOP_RIGHT = "top-right"
    BOTTOM_RIGHT = "bottom-right"

    @property
    def origin(self) -> tuple[int, int]:
        """0-based (file, rank) of the coaster's bottom-left square."""
        return _ORIGINS[self]

    @classmethod
    def parse(cls, text: str) -> Quadrant:
        try:
            return cls(text.strip().lower())
        except ValueError:
            names = ", ".join(q.value for q in cls)
            raise ValueError(f"unknown coaster position {text!r} (expected one of: {names})") from None


_ORIGINS = {
    Quadrant.BOTTOM_LEFT: (0, 0),
    Quadrant.TOP_LEFT: (0, COASTER_SIDE),
    Quadrant.TOP_RIGHT: (COASTER_SIDE, COASTER_SIDE),
    Quadrant.BOTTOM_RIGHT: (COASTER_SIDE, 0),
}
#: Clockwise order around the board, starting at the a1 corner.
QUADRANTS: tuple[Quadrant, ...] = tuple(Quadrant)

#: Quarter-turns clockwise from the drawing (dot upper-left) that bring the dots to the centre.
STANDARD_ROTATIONS: Mapping[Quadrant, int] = {
    Quadrant.TOP_LEFT: 2,
    Quadrant.TOP_RIGHT: 3,
    Quadrant.BOTTOM_LEFT: 1,
    Quadrant.BOTTOM_RIGHT: 0,
}
#: Which coaster is which colour when the table does not say (an unverified default).
DEFAULT_COLOURS: Mapping[Quadrant, Colour] = {
    Quadrant.BOTTOM_LEFT: Colour.RED,
    Quadrant.TOP_LEFT: Colour.YELLOW,
    Quadrant.TOP_RIGHT: Colour.GREEN,
    Quadrant.BOTTOM_RIGHT: Colour.BLUE,
}


def parse_exits(text: str) -> frozenset[Direction]:
    """Reads exit letters such as 'URD' into directions; ValueError naming the text."""
    try:
        return frozenset(_LETTER_TO_DIRECTION[ch] for ch in text.strip().upper())
    except KeyError:
        raise ValueError(f"bad exits {text!r} (expected letters from U, R, D, L)") from None


def exits_text(exits: frozenset[Direction]) -> str:
    """Exit letters in the fixed order U R D L, as the equipment table writes them."""
    return "".join(_DIRECTION_TO_LETTER[d] for d in CARDINALS if d in exits)


def _rotated_coaster(quarter_turns: int) -> dict[tuple[int, int], frozenset[Direction]]:
    """The base coaster turned clockwise: local (file, rank) from its bottom-left -> exits."""
    out = {}
    for row, line in enumerate(BASE_COASTER_EXITS):
        for col, letters in enumerate(line):
            exits = parse_exits(letters)
            # Drawing row/column (row 0 at the top) to local file/rank (rank 0 at the bottom).
            file, rank = col, COASTER_SIDE - 1 - row
            for _ in range(quarter_turns % 4):
                # A clockwise quarter-turn about the coaster's middle square.
                file, rank = rank, COASTER_SIDE - 1 - file
                exits = frozenset(d.turned(2) for d in exits)
            out[(file, rank)] = exits
    return out


@dataclass(frozen=True)
class CoasterBoard:
    """A Martian Coasters layout: quarter-turns and colour of each coaster.

    Build it with `martian_coasters()`, which shares one instance per layout.
    """

    rotations: tuple[int, int, int, int]
    colours: tuple[Colour, Colour, Colour, Colour]
    grid: SquareGrid = field(init=False, repr=False, compare=False)
    _exits: tuple[frozenset[Direction], ...] = field(init=False, repr=False, compare=False)
    _quadrant_of: tuple[Quadrant, ...] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        if len(self.rotations) != 4 or any(not isinstance(r, int) or not 0 <= r <= 3 for r in self.rotations):
            raise ValueError(f"coaster rotations {self.rotations!r} must be four quarter-turn counts 0-3")
        if len(self.colours) != 4:
            raise ValueError(f"coaster colours {self.colours!r} must name four colours")
        grid = square_grid(BOARD_SIDE, BOARD_SIDE)
        exits: list[frozenset[Direction]] = [frozenset()] * grid.size
        quadrant_of: list[Quadrant] = [Quadrant.BOTTOM_LEFT] * grid.size
        for quadrant, turns in zip(QUADRANTS, self.rotations):
            f0, r0 = quadrant.origin
            for (f, r), cell_exits in _rotated_coaster(turns).items():
                cell = grid.cell(f0 + f, r0 + r)
                exits[cell] = cell_exits
                quadrant_of[cell] = quadrant
        object.__setattr__(self, "grid", grid)
        object.__setattr__(self, "_exits", tuple(exits))
        object.__setattr__(self, "_quadrant_of", tuple(quadrant_of))

    # --- arrows ---------------------------------------------------------------------
    def exits(self, cell: Cell) -> frozenset[Direction]:
        """The directions a piece may leave `cell` in (its arrows)."""
        return self._exits[cell]

    def allows(self, cell: Cell, direction: Direction) -> bool:
        """True when an arrow lets a piece leave `cell` towards `direction` onto the board."""
        return direction in self._exits[cell] and self.grid.step(cell, direction) is not None

    def exits_text(self, cell: Cell) -> str:
        return exits_text(self._exits[cell])

    def rows_text(self) -> list[str]:
        """The layout as the equipment table prints it: top rank first, exits per square."""
        lines = []
        for rank in reversed(range(BOARD_SIDE)):
            cells = [self.grid.cell(f, rank) for f in range(BOARD_SIDE)]
            lines.append(" ".join(f"{self.exits_text(c):4}" for c in cells).rstrip())
        return lines

    # --- coasters -------------------------------------------------------------------
    def quadrant_of(self, cell: Cell) -> Quadrant:
        return self._quadrant_of[cell]

    def rotation(self, quadrant: Quadrant) -> int:
        return self.rotations[QUADRANTS.index(quadrant)]

    def colour(self, quadrant: Quadrant) -> Colour:
        return self.colours[QUADRANTS.index(quadrant)]

    def colour_of(self, cell: Cell) -> Colour:
        return self.colour(self._quadrant_of[cell])

    def quadrant_of_colour(self, colour: Colour) -> Quadrant:
        for quadrant, c in zip(QUADRANTS, self.colours):
            if c is colour:
                return quadrant
        raise ValueError(f"no {colour.value} coaster on this board")

    def centre(self, quadrant: Quadrant) -> Cell:
        """The middle square of a coaster (a Warp Zone in Zamboni Wars)."""
        f0, r0 = quadrant.origin
        return self.grid.cell(f0 + 1, r0 + 1)

    @property
    def centres(self) -> tuple[Cell, ...]:
        """The four coaster centres, in `QUADRANTS` order."""
        return tuple(self.centre(q) for q in QUADRANTS)

    def outer_corner(self, quadrant: Quadrant) -> Cell:
        """The coaster's corner that is also a corner of the whole 6x6 board."""
        f0, r0 = quadrant.origin
        return self.grid.cell(0 if f0 == 0 else BOARD_SIDE - 1, 0 if r0 == 0 else BOARD_SIDE - 1)

    def dot_corner(self, quadrant: Quadrant) -> Cell:
        """The square in the coaster's dotted corner, given how the coaster is turned."""
        # Drawn with the dot upper-left; each clockwise quarter-turn moves it one corner on.
        local = [(0, 2), (2, 2), (2, 0), (0, 0)][self.rotation(quadrant)]
        f0, r0 = quadrant.origin
        return self.grid.cell(f0 + local[0], r0 + local[1])

    @property
    def dots_meet_at_centre(self) -> bool:
        """True for the standard set-up, where all four dotted corners touch the middle."""
        return all(self.grid.chebyshev(self.dot_corner(q), self.grid.cell(2, 2)) <= 1
                   and self.grid.chebyshev(self.dot_corner(q), self.grid.cell(3, 3)) <= 1
                   for q in QUADRANTS)

    # --- board-plane coordinates ----------------------------------------------------------
    def cell_centre_mm(self, cell: Cell) -> tuple[float, float]:
        """(x, y) in millimetres from the a1 corner of the board, x east, y north."""
        f, r = self.grid.coords(cell)
        return ((f + 0.5) * CELL_MM, (r + 0.5) * CELL_MM)

    def coaster_centre_mm(self, quadrant: Quadrant) -> tuple[float, float]:
        return self.cell_centre_mm(self.centre(quadrant))


@cache
def coaster_board(rotations: tuple[int, int, int, int], colours: tuple[Colour, Colour, Colour, Colour]) -> CoasterBoard:
    """The shared board for rotations and colours given in `QUADRANTS` order."""
    return CoasterBoard(rotations, colours)


def martian_coasters(rotations: Mapping[Quadrant | str, int] | None = None,
                     colours: Mapping[Quadrant | str, Colour | str] | None = None) -> CoasterBoard:
    """A shared board for a layout; missing entries take the standard set-up.

    Args:
        rotations: quarter-turns clockwise (0-3) from the drawing with the dot at the
            upper-left, per coaster position ('top-left' or a `Quadrant`).
        colours: each coaster's colour, per position.

    Raises:
        ValueError: an unknown position, a rotation outside 0-3, an unknown colour or
            two coasters of one colour.
    """
    turns = dict(STANDARD_ROTATIONS)
    for key, value in (rotations or {}).items():
        if not isinstance(value, int) or isinstance(value, bool) or not 0 <= value <= 3:
            raise ValueError(f"rotation {value!r} of the {key} coaster must be a quarter-turn count 0-3")
        turns[Quadrant.parse(key) if isinstance(key, str) else key] = value
    paint = dict(DEFAULT_COLOURS)
    for key, value in (colours or {}).items():
        paint[Quadrant.parse(key) if isinstance(key, str) else key] = (
            Colour.parse(value) if isinstance(value, str) else value)
    if len(set(paint.values())) != 4:
        raise ValueError(f"coaster colours must differ: {', '.join(c.value for c in paint.values())}")
    return coaster_board(tuple(turns[q] for q in QUADRANTS), tuple(paint[q] for q in QUADRANTS))
