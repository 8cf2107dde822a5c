"""Board geometry shared by rules, vision and the scene generator: cells, names, directions."""

from companion.boards.square import SquareGrid

__all__ = ["SquareGrid"]
