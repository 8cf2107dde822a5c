"""The piece vocabulary shared by rules, vision and the scene generator.

Colours, sizes, poses and directions are small enums with a one- or two-letter
text form, so that actions, observations and labels all write them the same way.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum, IntEnum


class Colour(str, Enum):
    """The ten standard Looney Pyramid colours (Rainbow, then Xeno)."""

    RED = "red"
    YELLOW = "yellow"
    GREEN = "green"
    BLUE = "blue"
    BLACK = "black"
    PURPLE = "purple"
    CLEAR = "clear"
    ORANGE = "orange"
    CYAN = "cyan"
    WHITE = "white"

    @property
    def opaque(self) -> bool:
        return self in (Colour.BLACK, Colour.WHITE)

    @classmethod
    def parse(cls, text: str) -> Colour:
        try:
            return cls(text.strip().lower())
        except ValueError:
            names = ", ".join(c.value for c in cls)
            raise ValueError(f"unknown colour {text!r} (expected one of: {names})") from None


class Size(IntEnum):
    """Pyramid size; the value is the pip count."""

    SMALL = 1
    MEDIUM = 2
    LARGE = 3

    @property
    def letter(self) -> str:
        return "SML"[self - 1]

    @property
    def pips(self) -> int:
        return int(self)

    @classmethod
    def parse(cls, text: str) -> Size:
        """Reads 'S'/'M'/'L', 'small'/'medium'/'large' or a pip count '1'..'3'."""
        t = text.strip().upper()
        if t in ("S", "M", "L"):
            return cls("SML".index(t) + 1)
        if t in ("1", "2", "3"):
            return cls(int(t))
        for size in cls:
            if size.name == t:
                return size
        raise ValueError(f"unknown size {text!r} (expected S, M, L or 1-3)")


class Pose(str, Enum):
    """How a pyramid rests: standing on its base, or lying on a face pointing somewhere."""

    UPRIGHT = "upright"
    LYING = "lying"


class Direction(str, Enum):
    """Compass directions on a square board, seen from the a1 corner.

    N is towards higher ranks, E towards later files. Diagonals are used for
    Zamboni facing; most games use only the four cardinal directions.
    """

    N = "N"
    NE = "NE"
    E = "E"
    SE = "SE"
    S = "S"
    SW = "SW"
    W = "W"
    NW = "NW"

    @property
    def delta(self) -> tuple[int, int]:
        """(file step, rank step) of one move in this direction."""
        return _DELTAS[self]

    @property
    def is_cardinal(self) -> bool:
        return len(self.value) == 1

    @property
    def degrees(self) -> int:
        """Clockwise angle from N, as on a compass."""
        return 45 * _ORDER.index(self)

    def turned(self, eighths: int) -> Direction:
        """This direction turned clockwise by `eighths` eighths of a circle."""
        return _ORDER[(_ORDER.index(self) + eighths) % 8]

    @property
    def opposite(self) -> Direction:
        return self.turned(4)

    @classmethod
    def parse(cls, text: str) -> Direction:
        try:
            return cls(text.strip().upper())
        except ValueError:
            raise ValueError(f"unknown direction {text!r} (expected N, NE, E, SE, S, SW, W or NW)") from None


_ORDER = [Direction.N, Direction.NE, Direction.E, Direction.SE, Direction.S, Direction.SW, Direction.W, Direction.NW]
_DELTAS = {
    Direction.N: (0, 1),
    Direction.NE: (1, 1),
    Direction.E: (1, 0),
    Direction.SE: (1, -1),
    Direction.S: (0, -1),
    Direction.SW: (-1, -1),
    Direction.W: (-1, 0),
    Direction.NW: (-1, 1),
}
CARDINALS: tuple[Direction, ...] = (Direction.N, Direction.E, Direction.S, Direction.W)
ALL_DIRECTIONS: tuple[Direction, ...] = tuple(_ORDER)


@dataclass(frozen=True, slots=True)
class Pyramid:
    """One physical piece: a colour and a size."""

    colour: Colour
    size: Size

    def __str__(self) -> str:
        return f"{self.colour.value}-{self.size.letter}"

    @classmethod
    def parse(cls, text: str) -> Pyramid:
        """Reads the text form 'red-L'."""
        colour, sep, size = text.rpartition("-")
        if not sep:
            raise ValueError(f"bad pyramid {text!r} (expected COLOUR-SIZE, e.g. red-L)")
        return cls(Colour.parse(colour), Size.parse(size))


# Physical dimensions from ../shared/rules/equipment.md, in millimetres.
BASE_MM = {Size.SMALL: 14.3, Size.MEDIUM: 19.8, Size.LARGE: 25.4}
HEIGHT_MM = {Size.SMALL: 25.4, Size.MEDIUM: 34.9, Size.LARGE: 44.5}
PIECES_PER_SIZE_IN_STASH = 5
