"""Square grids: chessboards, their 6x6 and 4x8 playing areas, the Martian Coasters 6x6.

Cells are integers (rank * files + file), named like chess squares ('a1' is the
corner chosen at set-up; files run a.. to the east, ranks 1.. to the north).
Neighbour tables are built once per grid so rules engines can step cheaply.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cache

from companion.pieces import ALL_DIRECTIONS, Direction

Cell = int


@dataclass(frozen=True)
class SquareGrid:
    files: int
    ranks: int
    _steps: dict[Direction, tuple[Cell | None, ...]] = field(init=False, repr=False, compare=False)
    _names: tuple[str, ...] = field(init=False, repr=False, compare=False)
    _by_name: dict[str, Cell] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        if not (1 <= self.files <= 26 and 1 <= self.ranks <= 99):
            raise ValueError(f"grid size {self.files}x{self.ranks} out of range (files 1-26, ranks 1-99)")
        steps = {}
        for d in ALL_DIRECTIONS:
            df, dr = d.delta
            table = []
            for cell in range(self.files * self.ranks):
                f, r = cell % self.files + df, cell // self.files + dr
                table.append(r * self.files + f if 0 <= f < self.files and 0 <= r < self.ranks else None)
            steps[d] = tuple(table)
        object.__setattr__(self, "_steps", steps)
        names = tuple(f"{chr(ord('a') + c % self.files)}{c // self.files + 1}" for c in range(self.files * self.ranks))
        object.__setattr__(self, "_names", names)
        object.__setattr__(self, "_by_name", {n: c for c, n in enumerate(names)})

    @property
    def size(self) -> int:
        return self.files * self.ranks

    def contains(self, name: str) -> bool:
        """Whether `name` (lower-case, like 'c4') is a cell of this grid."""
        return name in self._by_name

    @property
    def cells(self) -> range:
        return range(self.size)

    def cell(self, file: int, rank: int) -> Cell:
        """The cell at 0-based (file, rank)."""
        if not (0 <= file < self.files and 0 <= rank < self.ranks):
            raise ValueError(f"({file}, {rank}) is off a {self.files}x{self.ranks} grid")
        return rank * self.files + file

    def coords(self, cell: Cell) -> tuple[int, int]:
        """0-based (file, rank) of a cell."""
        return cell % self.files, cell // self.files

    def name(self, cell: Cell) -> str:
        return self._names[cell]

    def parse(self, name: str) -> Cell:
        """The cell named like 'c4'; ValueError naming the grid when it is off the board."""
        found = self._by_name.get(name)
        if found is not None:
            return found
        text = name.strip().lower()
        if len(text) < 2 or not text[0].isalpha() or not text[1:].isdigit():
            raise ValueError(f"bad cell name {name!r} (expected a file letter and a rank number, e.g. c4)")
        f, r = ord(text[0]) - ord("a"), int(text[1:]) - 1
        if not (0 <= f < self.files and 0 <= r < self.ranks):
            raise ValueError(f"cell {name!r} is off the {self.files}x{self.ranks} board")
        return r * self.files + f

    def step(self, cell: Cell, direction: Direction) -> Cell | None:
        """The neighbouring cell in `direction`, or None past the edge."""
        return self._steps[direction][cell]

    def neighbours(self, cell: Cell, directions: tuple[Direction, ...]) -> list[Cell]:
        return [n for d in directions if (n := self._steps[d][cell]) is not None]

    def chebyshev(self, a: Cell, b: Cell) -> int:
        (fa, ra), (fb, rb) = self.coords(a), self.coords(b)
        return max(abs(fa - fb), abs(ra - rb))

    def manhattan(self, a: Cell, b: Cell) -> int:
        (fa, ra), (fb, rb) = self.coords(a), self.coords(b)
        return abs(fa - fb) + abs(ra - rb)


@cache
def square_grid(files: int, ranks: int) -> SquareGrid:
    """A shared grid instance per size (grids are immutable)."""
    return SquareGrid(files, ranks)
