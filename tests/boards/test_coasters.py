"""The Martian Coasters geometry, square by square against the table in equipment.md."""

from __future__ import annotations

import pytest

from companion.boards.coasters import (
    CELL_MM,
    QUADRANTS,
    Quadrant,
    exits_text,
    martian_coasters,
    parse_exits,
)
from companion.pieces import Colour, Direction

# Copied by hand from ../shared/rules/equipment.md: top row (rank 6) first, files a-f.
EQUIPMENT_TABLE = """
RDL  URDL URL  UDL  URL  UDL
UDL  UDL  RDL  URD  URL  URDL
RDL  URL  UDL  URL  UDL  URD
UDL  URD  RDL  URD  RDL  URL
URDL RDL  UDL  URL  URD  URD
URD  RDL  URD  RDL  URDL URL
"""
LETTERS = {"U": Direction.N, "R": Direction.E, "D": Direction.S, "L": Direction.W}


def table_exits() -> dict[str, set[Direction]]:
    """Square name -> exits, read straight from the equipment table."""
    out = {}
    rows = EQUIPMENT_TABLE.strip().splitlines()
    for row_index, row in enumerate(rows):
        rank = 6 - row_index
        for file_index, letters in enumerate(row.split()):
            out[f"{'abcdef'[file_index]}{rank}"] = {LETTERS[ch] for ch in letters}
    return out


TABLE = table_exits()


@pytest.mark.parametrize("square", sorted(TABLE))
def test_every_square_has_the_exits_of_the_equipment_table(square):
    board = martian_coasters()
    assert set(board.exits(board.grid.parse(square))) == TABLE[square]


def test_the_layout_prints_as_the_equipment_table():
    assert martian_coasters().rows_text() == [line.rstrip() for line in EQUIPMENT_TABLE.strip().splitlines()]


def test_allows_needs_an_arrow_and_a_square_beyond_it():
    board = martian_coasters()
    g = board.grid
    assert board.allows(g.parse("a1"), Direction.N)
    assert not board.allows(g.parse("a1"), Direction.W)  # no arrow
    assert Direction.S in board.exits(g.parse("a1"))
    assert not board.allows(g.parse("a1"), Direction.S)  # an arrow pointing off the board
    assert not board.allows(g.parse("a1"), Direction.NE)  # arrows are never diagonal


def test_standard_dots_meet_at_the_centre_and_centres_are_the_middle_squares():
    board = martian_coasters()
    names = {q: board.grid.name(board.dot_corner(q)) for q in QUADRANTS}
    assert names == {Quadrant.BOTTOM_LEFT: "c3", Quadrant.TOP_LEFT: "c4",
                     Quadrant.TOP_RIGHT: "d4", Quadrant.BOTTOM_RIGHT: "d3"}
    assert board.dots_meet_at_centre
    assert [board.grid.name(c) for c in board.centres] == ["b2", "b5", "e5", "e2"]
    assert [board.grid.name(board.outer_corner(q)) for q in QUADRANTS] == ["a1", "a6", "f6", "f1"]


def test_each_coaster_is_the_drawn_coaster_turned():
    board = martian_coasters()
    # The bottom-right coaster is not turned: its top row is the drawing's top row.
    assert [board.exits_text(board.grid.parse(s)) for s in ("d3", "e3", "f3")] == ["URD", "RDL", "URL"]
    assert [set(board.exits(board.grid.parse(s))) for s in ("d3", "e3", "f3")] == [
        parse_exits("URD"), parse_exits("LRD"), parse_exits("LUR")]


def test_quadrants_and_colours():
    board = martian_coasters(colours={"top-right": "purple", "bottom-left": Colour.GREEN})
    g = board.grid
    assert board.quadrant_of(g.parse("c3")) is Quadrant.BOTTOM_LEFT
    assert board.quadrant_of(g.parse("d4")) is Quadrant.TOP_RIGHT
    assert board.colour_of(g.parse("f6")) is Colour.PURPLE
    assert board.colour(Quadrant.BOTTOM_LEFT) is Colour.GREEN
    assert board.quadrant_of_colour(Colour.PURPLE) is Quadrant.TOP_RIGHT
    with pytest.raises(ValueError, match="no red coaster"):
        board.quadrant_of_colour(Colour.RED)


def test_a_differently_turned_coaster_changes_only_its_own_squares():
    standard = martian_coasters()
    turned = martian_coasters(rotations={"bottom-right": 2})
    g = standard.grid
    for cell in g.cells:
        if standard.quadrant_of(cell) is not Quadrant.BOTTOM_RIGHT:
            assert turned.exits(cell) == standard.exits(cell)
    # Half a turn: the drawing's top-left square (URD) lands bottom-right with its arrows reversed (DLU).
    assert set(turned.exits(g.parse("f1"))) == {Direction.S, Direction.W, Direction.N}
    assert turned.dot_corner(Quadrant.BOTTOM_RIGHT) == g.parse("f1")
    assert not turned.dots_meet_at_centre
    # Four quarter-turns apart are the same board; shared instances per layout.
    assert martian_coasters(rotations={"top-left": 2}) is standard


@pytest.mark.parametrize(("rotations", "colours", "message"), [
    ({"top-left": 4}, None, "quarter-turn count 0-3"),
    ({"middle": 1}, None, "unknown coaster position"),
    (None, {"top-left": "pink"}, "unknown colour"),
    (None, {"top-left": "red"}, "must differ"),
])
def test_bad_layouts_are_refused_with_the_input_named(rotations, colours, message):
    with pytest.raises(ValueError, match=message):
        martian_coasters(rotations, colours)


def test_exit_letters_round_trip_and_bad_letters_are_named():
    assert exits_text(parse_exits("LDRU")) == "URDL"
    with pytest.raises(ValueError, match="'UX'"):
        parse_exits("UX")


def test_board_plane_coordinates():
    board = martian_coasters()
    x, y = board.cell_centre_mm(board.grid.parse("a1"))
    assert x == pytest.approx(CELL_MM / 2) and y == pytest.approx(CELL_MM / 2)
    x, y = board.coaster_centre_mm(Quadrant.TOP_RIGHT)
    assert (x, y) == pytest.approx((4.5 * CELL_MM, 4.5 * CELL_MM))
