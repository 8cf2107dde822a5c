"""Hex grid geometry, checked against independent formulas: breadth-first search for
distance, and exact segment-against-hexagon clipping in the plane for line of sight."""

from __future__ import annotations

import math
from collections import deque

import pytest

from companion.boards.hexgrid import HEX_DIRECTIONS, HexDirection, HexGrid, hex_grid, hex_rectangle

SQRT3 = math.sqrt(3)


def bfs_distances(grid: HexGrid, start: int) -> dict[int, int]:
    seen = {start: 0}
    todo = deque([start])
    while todo:
        c = todo.popleft()
        for n in grid.neighbours(c):
            if n not in seen:
                seen[n] = seen[c] + 1
                todo.append(n)
    return seen


def centre(q: int, r: int) -> tuple[float, float]:
    return SQRT3 * (q + r / 2), 1.5 * r


def touched_length(p0, p1, q: int, r: int) -> float:
    """Length of the segment p0-p1 inside the closed hexagon (q, r) (Cyrus-Beck clipping)."""
    cx, cy = centre(q, r)
    corners = [(cx + math.cos(math.radians(30 + 60 * k)), cy + math.sin(math.radians(30 + 60 * k))) for k in range(6)]
    dx, dy = p1[0] - p0[0], p1[1] - p0[1]
    t0, t1 = 0.0, 1.0
    for k in range(6):
        ax, ay = corners[k]
        bx, by = corners[(k + 1) % 6]
        # Inward normal of edge a->b for the hexagon around (cx, cy).
        nx, ny = -(by - ay), bx - ax
        if nx * (cx - ax) + ny * (cy - ay) < 0:
            nx, ny = -nx, -ny
        num = nx * (p0[0] - ax) + ny * (p0[1] - ay)
        den = nx * dx + ny * dy
        if abs(den) < 1e-12:
            if num < -1e-9:
                return 0.0
            continue
        t = -num / den
        if den > 0:
            t0 = max(t0, t)
        else:
            t1 = min(t1, t)
    return max(0.0, t1 - t0) * math.hypot(dx, dy)


def geometric_between(grid: HexGrid, a: int, b: int) -> set[int]:
    p0, p1 = centre(*grid.coords(a)), centre(*grid.coords(b))
    return {c for c in grid.cells if c not in (a, b) and touched_length(p0, p1, *grid.coords(c)) > 1e-6}


def test_hexagon_has_the_centred_hexagonal_number_of_cells():
    for radius in range(0, 6):
        assert hex_grid(radius).size == 3 * radius * (radius + 1) + 1


def test_rectangle_has_rows_times_columns_cells_and_rows_of_equal_length():
    grid = hex_rectangle(5, 7)
    assert grid.size == 35
    rows = {}
    for c in grid.cells:
        q, r = grid.coords(c)
        rows.setdefault(r, []).append(q)
    assert sorted(rows) == [0, 1, 2, 3, 4] and all(len(qs) == 7 for qs in rows.values())


@pytest.mark.parametrize("grid", [hex_grid(4), hex_rectangle(6, 8)], ids=["radius4", "rect6x8"])
def test_distance_matches_breadth_first_search(grid):
    for start in grid.cells:
        by_bfs = bfs_distances(grid, start)
        assert len(by_bfs) == grid.size, "the board is connected"
        for other, d in by_bfs.items():
            assert grid.distance(start, other) == d


def test_six_directions_are_unit_steps_and_opposites_cancel():
    grid = hex_grid(3)
    centre_cell = grid.cell(0, 0)
    seen = set()
    for d in HEX_DIRECTIONS:
        n = grid.step(centre_cell, d)
        assert grid.distance(centre_cell, n) == 1
        assert grid.step(n, d.opposite) == centre_cell
        assert grid.direction_between(centre_cell, n) is d
        seen.add(n)
    assert len(seen) == 6
    assert grid.step(grid.cell(3, 0), HexDirection.E) is None


def test_names_round_trip_and_errors_name_the_input():
    grid = hex_grid(2)
    for c in grid.cells:
        assert grid.parse(grid.name(c)) == c
    with pytest.raises(ValueError, match="'3,0'.*radius 2|off the hex board of radius 2"):
        grid.parse("3,0")
    with pytest.raises(ValueError, match="bad hex name 'x'"):
        grid.parse("x")


@pytest.mark.parametrize("grid", [hex_grid(4), hex_rectangle(5, 6)], ids=["radius4", "rect5x6"])
def test_cells_in_the_way_match_exact_segment_clipping(grid):
    for a in grid.cells:
        for b in grid.cells:
            if a < b:
                assert set(grid.between(a, b)) == geometric_between(grid, a, b), (grid.name(a), grid.name(b))


def test_a_line_along_an_edge_is_blocked_by_either_hex_beside_it():
    grid = hex_grid(3)
    a, b = grid.cell(0, 0), grid.cell(1, 1)  # the line runs along the edge between 1,0 and 0,1
    assert set(grid.between(a, b)) == {grid.cell(1, 0), grid.cell(0, 1)}
    assert grid.line_of_sight(a, b, set())
    assert not grid.line_of_sight(a, b, {grid.cell(1, 0)})
    assert not grid.line_of_sight(a, b, {grid.cell(0, 1)})
    assert grid.line_of_sight(a, b, {a, b}), "the ends themselves never block"


def test_straight_rays_and_directions():
    grid = hex_grid(3)
    o = grid.cell(0, 0)
    assert [grid.name(c) for c in grid.ray(o, HexDirection.NE)] == ["1,-1", "2,-2", "3,-3"]
    assert grid.straight_direction(o, grid.cell(0, 3)) is HexDirection.SE
    assert grid.straight_direction(o, grid.cell(1, 1)) is None
    assert sorted(grid.within(o, 1)) == sorted([o, *grid.neighbours(o)])


def test_bad_shapes_are_refused():
    with pytest.raises(ValueError):
        HexGrid()
    with pytest.raises(ValueError):
        HexGrid(radius=2, rows=3, columns=3)
    with pytest.raises(ValueError):
        HexGrid(radius=-1)


def test_round_axial_finds_the_nearest_hex_centre_whichever_coordinate_rounds_worst():
    import math
    import random

    from companion.boards.hexgrid import round_axial

    def nearest(q, r):
        # Independent answer: the hex whose centre (pointy-top, unit size) is nearest.
        x, y = math.sqrt(3) * (q + r / 2), 1.5 * r
        best = None
        for cq in range(math.floor(q) - 2, math.floor(q) + 3):
            for cr in range(math.floor(r) - 2, math.floor(r) + 3):
                d = (math.sqrt(3) * (cq + cr / 2) - x) ** 2 + (1.5 * cr - y) ** 2
                if best is None or d < best[0]:
                    best = (d, (cq, cr))
        return best[1]

    assert round_axial(0.4, 0.45) == (0, 1)  # r rounds worst: the case a missing branch got wrong
    rng = random.Random(7)
    for _ in range(2000):
        q, r = rng.uniform(-5, 5), rng.uniform(-5, 5)
        assert round_axial(q, r) == nearest(q, r), (q, r)
