"""Hex grids in axial coordinates (q, r), pointy-top, for Ice Arena and any other hex game.

Cells are integers (indexes into the grid's sorted (r, q) list) so rules engines can keep
them in tuples and step through precomputed tables. A cell's text name is its axial pair,
'q,r' (for example '0,-2'), which reads the same in actions, logs and tests.

Directions, on the board plane with r growing towards the bottom edge as drawn:
E (+1, 0), NE (+1, -1), NW (0, -1), W (-1, 0), SW (-1, +1), SE (0, +1).

Line of sight follows the table rule "partially blocked means blocked": every hex that the
straight segment between the two centres passes through, or runs along an edge of, stands
in the way (a "supercover" line: wider than the usual sampled hex line, which misses hexes
the segment only clips). A segment that merely touches a hex's corner does not count.
"""

from __future__ import annotations

from collections.abc import Container, Iterator
from dataclasses import dataclass, field
from enum import Enum
from functools import cache

Cell = int
Axial = tuple[int, int]


class HexDirection(str, Enum):
    """The six neighbour directions of a pointy-top hex."""

    E = "E"
    NE = "NE"
    NW = "NW"
    W = "W"
    SW = "SW"
    SE = "SE"

    @property
    def delta(self) -> Axial:
        """(dq, dr) of one step this way."""
        return _HEX_DELTAS[self]

    def turned(self, sixths: int) -> HexDirection:
        """This direction turned anticlockwise (as drawn) by `sixths` sixths of a circle."""
        return HEX_DIRECTIONS[(HEX_DIRECTIONS.index(self) + sixths) % 6]

    @property
    def opposite(self) -> HexDirection:
        return self.turned(3)

    @classmethod
    def parse(cls, text: str) -> HexDirection:
        try:
            return cls(text.strip().upper())
        except ValueError:
            raise ValueError(f"unknown hex direction {text!r} (expected E, NE, NW, W, SW or SE)") from None


_HEX_DELTAS = {
    HexDirection.E: (1, 0),
    HexDirection.NE: (1, -1),
    HexDirection.NW: (0, -1),
    HexDirection.W: (-1, 0),
    HexDirection.SW: (-1, 1),
    HexDirection.SE: (0, 1),
}
HEX_DIRECTIONS: tuple[HexDirection, ...] = tuple(_HEX_DELTAS)

def axial_distance(a: Axial, b: Axial) -> int:
    """Hex steps between two axial coordinates on an unbounded grid."""
    dq, dr = a[0] - b[0], a[1] - b[1]
    return (abs(dq) + abs(dr) + abs(dq + dr)) // 2


def _cube_round(x: float, y: float, z: float) -> Axial:
    rx, ry, rz = round(x), round(y), round(z)
    ex, ey, ez = abs(rx - x), abs(ry - y), abs(rz - z)
    # The coordinate that rounded worst is rebuilt from the other two (x + y + z = 0).
    if ex > ey and ex > ez:
        rx = -ry - rz
    elif ey <= ez:
        rz = -rx - ry
    return rx, rz  # axial q = x, r = z


def round_axial(q: float, r: float) -> Axial:
    """The hex containing fractional axial coordinates (q, r)."""
    return _cube_round(q, -q - r, r)


def _length_inside(a: Axial, b: Axial, hex_: Axial) -> float:
    """The fraction of segment a-b (between centres) lying in the closed hex `hex_`.

    In cube coordinates a hex is the slab intersection |dx-dy| <= 1, |dy-dz| <= 1,
    |dz-dx| <= 1 for the offset d from its centre; each slab bounds t in [0, 1].
    """
    ca = (a[0] - hex_[0], -a[0] - a[1] + hex_[0] + hex_[1], a[1] - hex_[1])
    cb = (b[0] - hex_[0], -b[0] - b[1] + hex_[0] + hex_[1], b[1] - hex_[1])
    lo, hi = 0.0, 1.0
    for i, j in ((0, 1), (1, 2), (2, 0)):
        u0 = ca[i] - ca[j]
        du = (cb[i] - cb[j]) - u0
        if du == 0:
            if abs(u0) > 1:
                return 0.0
            continue
        t1, t2 = (-1 - u0) / du, (1 - u0) / du
        lo, hi = max(lo, min(t1, t2)), min(hi, max(t1, t2))
        if hi <= lo:
            return 0.0
    return hi - lo


def hexes_between(a: Axial, b: Axial) -> frozenset[Axial]:
    """Every hex other than `a` and `b` that the segment between their centres passes through
    or runs along an edge of (a touch at a single corner does not count), on an unbounded grid."""
    n = axial_distance(a, b)
    candidates: set[Axial] = set()
    for i in range(1, n):
        t = i / n
        x = a[0] + (b[0] - a[0]) * t
        z = a[1] + (b[1] - a[1]) * t
        q, r = _cube_round(x, -x - z, z)
        candidates.add((q, r))
        candidates.update((q + dq, r + dr) for dq, dr in _HEX_DELTAS.values())
    candidates.discard(a)
    candidates.discard(b)
    return frozenset(h for h in candidates if _length_inside(a, b, h) > 1e-9)


@dataclass(frozen=True)
class HexGrid:
    """A hex board: a hexagon of `radius` rings round (0, 0), or `rows` x `columns` with
    odd rows shifted right by half a hex (an "odd-r" rectangle, top row r = 0)."""

    radius: int | None = None
    rows: int | None = None
    columns: int | None = None
    _axial: tuple[Axial, ...] = field(init=False, repr=False, compare=False)
    _index: dict[Axial, Cell] = field(init=False, repr=False, compare=False)
    _steps: dict[HexDirection, tuple[Cell | None, ...]] = field(init=False, repr=False, compare=False)
    _between: dict[tuple[Cell, Cell], tuple[Cell, ...]] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        if self.radius is not None:
            if self.rows is not None or self.columns is not None:
                raise ValueError("a hex grid has either a radius or rows x columns, not both")
            if not 0 <= self.radius <= 30:
                raise ValueError(f"hex grid radius {self.radius} out of range (0-30)")
            r0 = self.radius
            cells = [(q, r) for r in range(-r0, r0 + 1) for q in range(-r0, r0 + 1) if axial_distance((q, r), (0, 0)) <= r0]
        else:
            if self.rows is None or self.columns is None:
                raise ValueError("a hex grid needs a radius, or both rows and columns")
            if not (1 <= self.rows <= 60 and 1 <= self.columns <= 60):
                raise ValueError(f"hex grid size {self.rows}x{self.columns} out of range (1-60 each)")
            cells = [(col - (r - (r & 1)) // 2, r) for r in range(self.rows) for col in range(self.columns)]
        cells.sort(key=lambda c: (c[1], c[0]))
        index = {c: i for i, c in enumerate(cells)}
        steps = {d: tuple(index.get((q + d.delta[0], r + d.delta[1])) for q, r in cells) for d in HEX_DIRECTIONS}
        object.__setattr__(self, "_axial", tuple(cells))
        object.__setattr__(self, "_index", index)
        object.__setattr__(self, "_steps", steps)
        object.__setattr__(self, "_between", {})

    @property
    def size(self) -> int:
        return len(self._axial)

    @property
    def cells(self) -> range:
        return range(len(self._axial))

    def coords(self, cell: Cell) -> Axial:
        """Axial (q, r) of a cell."""
        return self._axial[cell]

    def cell(self, q: int, r: int) -> Cell:
        """The cell at axial (q, r); ValueError when it is off the board."""
        try:
            return self._index[(q, r)]
        except KeyError:
            raise ValueError(f"hex ({q}, {r}) is off the {self.describe()}") from None

    def contains(self, q: int, r: int) -> bool:
        return (q, r) in self._index

    def name(self, cell: Cell) -> str:
        q, r = self._axial[cell]
        return f"{q},{r}"

    def parse(self, name: str) -> Cell:
        """The cell named 'q,r'; ValueError naming the board when it is malformed or off it."""
        parts = name.strip().split(",")
        try:
            q, r = (int(p) for p in parts)
        except ValueError:
            raise ValueError(f"bad hex name {name!r} (expected axial 'q,r', e.g. 0,-2)") from None
        return self.cell(q, r)

    def describe(self) -> str:
        if self.radius is not None:
            return f"hex board of radius {self.radius}"
        return f"{self.rows}x{self.columns} hex board"

    def step(self, cell: Cell, direction: HexDirection) -> Cell | None:
        """The neighbour in `direction`, or None past the edge."""
        return self._steps[direction][cell]

    def neighbours(self, cell: Cell) -> list[Cell]:
        return [n for d in HEX_DIRECTIONS if (n := self._steps[d][cell]) is not None]

    def direction_between(self, a: Cell, b: Cell) -> HexDirection | None:
        """The direction from `a` to the adjacent cell `b`, or None when they are not neighbours."""
        for d in HEX_DIRECTIONS:
            if self._steps[d][a] == b:
                return d
        return None

    def ray(self, cell: Cell, direction: HexDirection) -> Iterator[Cell]:
        """The cells met going from `cell` (not included) straight in `direction` to the edge."""
        table = self._steps[direction]
        nxt = table[cell]
        while nxt is not None:
            yield nxt
            nxt = table[nxt]

    def straight_direction(self, a: Cell, b: Cell) -> HexDirection | None:
        """The direction in which `b` lies on a straight ray from `a`, or None."""
        (qa, ra), (qb, rb) = self._axial[a], self._axial[b]
        n = axial_distance((qa, ra), (qb, rb))
        if n == 0:
            return None
        for d in HEX_DIRECTIONS:
            dq, dr = d.delta
            if (qa + dq * n, ra + dr * n) == (qb, rb):
                return d
        return None

    def distance(self, a: Cell, b: Cell) -> int:
        return axial_distance(self._axial[a], self._axial[b])

    def within(self, cell: Cell, steps: int) -> list[Cell]:
        """Every cell at most `steps` away (the cell itself included), in cell order."""
        q0, r0 = self._axial[cell]
        return [i for i, c in enumerate(self._axial) if axial_distance(c, (q0, r0)) <= steps]

    def between(self, a: Cell, b: Cell) -> tuple[Cell, ...]:
        """The board cells that stand between `a` and `b` for line of sight, in cell order."""
        key = (a, b) if a <= b else (b, a)
        found = self._between.get(key)
        if found is None:
            hexes = hexes_between(self._axial[key[0]], self._axial[key[1]])
            found = tuple(sorted(self._index[h] for h in hexes if h in self._index))
            self._between[key] = found
        return found

    def line_of_sight(self, a: Cell, b: Cell, blocked: Container[Cell]) -> bool:
        """True when no cell strictly between `a` and `b` is in `blocked`; a cell that is
        even partly in the way blocks."""
        return not any(c in blocked for c in self.between(a, b))


@cache
def hex_grid(radius: int) -> HexGrid:
    """A shared hexagonal grid per radius (grids are immutable)."""
    return HexGrid(radius=radius)


@cache
def hex_rectangle(rows: int, columns: int) -> HexGrid:
    """A shared rows x columns grid per size."""
    return HexGrid(rows=rows, columns=columns)
