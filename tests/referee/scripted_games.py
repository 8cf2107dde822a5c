"""Scripted tables of Zamboni Wars, Ice Arena, ARENA and IceTowers, rendered from engine states.

Each game's `*_scene(state, hand_at=None)` lays out exactly what the engine state shows, with the
board, camera and light fixed across calls, so that consecutive states differ on the picture only
where the move changed the table; `hand_at` adds a hand hovering over that point. `observe(game,
truth)` is the perfect detector (the render's own labels) through the real mapper.
"""

from __future__ import annotations

import math
import zlib
from collections.abc import Sequence

import numpy as np

from companion import geometry as geo
from companion.games.ice_arena import IceArenaState
from companion.games.icetowers import IceTowersState
from companion.games.space_arena import ArenaState
from companion.games.zamboni_wars import ZamboniState
from companion.pieces import Colour, Pyramid, Size
from companion.synth.boards import HexBoard, SquareBoard
from companion.synth.camera import Camera, look_at
from companion.synth.scene import D6, HAND, Scene, SceneObject
from companion.synth.scenes import _Builder, sample_look
from companion.vision.mapper import map_truth
from companion.vision.observation import Observation

LOOK_SEED = 11
LAYOUT_SEED = 5
HAND_HEIGHT_MM = 110.0
# A webcam on its stand is not set closer than for a board this wide: a small board is watched
# from further than its size asks, so a hand over it does not fill the picture.
MIN_VIEW_SPAN_MM = 320.0
# A ship is a tree of its colour: a large, a medium on it, a small on top. A taller ship would need
# two pieces of one size, the upper hiding the lower, and its height could not be counted.
TREE = (Size.LARGE, Size.MEDIUM, Size.SMALL)


def camera_over(centre: tuple[float, float], span_mm: float, width: int, height: int) -> Camera:
    """A webcam on a stand at the near side, high enough that a board `span_mm` across fills the
    picture's width and all of it is in view (the Icebomb script's pose, scaled to the board)."""
    cx, cy = centre
    span_mm = max(span_mm, MIN_VIEW_SPAN_MM)
    eye = np.array([cx + 0.1 * span_mm, cy - 0.8 * span_mm, 1.05 * span_mm])
    r, t = look_at(eye, np.array([cx, cy - 0.03 * span_mm, 0.0]))
    fx = (width / 2) / math.tan(math.radians(72) / 2)
    return Camera(width, height, fx, fx, width / 2, height / 2, tuple(map(tuple, r)), tuple(t))


def _finish(game: str, b: _Builder, board, centre: tuple[float, float], span_mm: float,
            hand_at: tuple[float, float] | None, size: tuple[int, int]) -> Scene:
    if hand_at is not None:
        pose = geo.translation(hand_at[0], hand_at[1], HAND_HEIGHT_MM) @ geo.rotation_z(math.radians(30))
        b.add(SceneObject(HAND, pose, tint=(0.87, 0.68, 0.55)))
    look = sample_look(np.random.default_rng(LOOK_SEED))
    # A webcam's noise, but no blur or vignette: the test is about the rules chain, not optics.
    look.noise_sigma, look.blur_sigma, look.vignette = 1.5, 0.0, 0.0
    return Scene(game, LAYOUT_SEED, board, b.objects, camera_over(centre, span_mm, *size), look, {})


def hand_path(scene: Scene) -> tuple[tuple[float, float], ...]:
    """Where a hand hovers, frame by frame, while a move is made: from the near left of the board
    (or of the pieces, on a bare table) towards its middle."""
    if scene.board is not None:
        points = np.asarray(scene.board.outline(), float)
    else:
        points = np.array([obj.pose[:2, 3] for obj in scene.objects if obj.kind != HAND], float)
    (x0, y0), (x1, y1) = points.min(axis=0), points.max(axis=0)
    cx, cy, span = (x0 + x1) / 2, (y0 + y1) / 2, max(x1 - x0, y1 - y0)
    return (cx - 0.33 * span, cy - 0.17 * span), (cx + 0.11 * span, cy + 0.08 * span)


def _steady(b: _Builder, *key) -> _Builder:
    """`b` with its randomness (a stack's turn and wobble) drawn for one piece alone: a piece nobody
    touched looks the same from one position to the next, whatever else came and went."""
    b.rng = np.random.default_rng([LAYOUT_SEED, zlib.crc32(repr(key).encode())])
    return b


def observe(game: str, truth: dict) -> Observation:
    return map_truth(game, truth)


# --- Zamboni Wars -----------------------------------------------------------------------------

ZAMBONI_CELL_MM = 30.0
MOVEMENT_DIE_AT = (6 * ZAMBONI_CELL_MM + 45.0, -25.0)  # on the table, right of the near corner


def zamboni_board(state: ZamboniState) -> SquareBoard:
    """The state's own coasters (their turns and colours), as they lie on the table."""
    return SquareBoard("coasters", 6, 6, ZAMBONI_CELL_MM, 0.0, 3.0, (0, 0, 6, 6), state.board)


def zamboni_scene(state: ZamboniState, hand_at: tuple[float, float] | None = None,
                  size: tuple[int, int] = (480, 360)) -> Scene:
    board = zamboni_board(state)
    b = _Builder(np.random.default_rng(LAYOUT_SEED), board.thickness_mm)
    top = board.thickness_mm
    for seat, zamboni in enumerate(state.zambonis):
        if zamboni is None:
            continue
        x, y = board.centre_of(zamboni.cell)
        b.nest(state.colour_of(seat), list(zamboni.sizes), x, y, top, board.heading(zamboni.facing),
               direction=zamboni.facing.value, cell=board.grid.name(zamboni.cell), owner=f"P{seat + 1}")
    for cell in state.cover:
        b.token(D6, *board.centre_of(cell), top, (0.95, 0.95, 0.9), yaw=0.0, cell=board.grid.name(cell))
    # The movement die lies beside the board all game; it is never part of the position.
    b.token(D6, *MOVEMENT_DIE_AT, 0.0, (0.8, 0.1, 0.1), yaw=20.0, zone="table")
    return _finish("zamboni-wars", b, board, board.centre, board.width_mm + 60, hand_at, size)


# --- Ice Arena --------------------------------------------------------------------------------

ICE_ARENA_HEX_MM = 28.0
SMALLS_SIDE_BY_SIDE_MM = 13.0


def ice_arena_board(state: IceArenaState) -> HexBoard:
    board = HexBoard(state.radius, ICE_ARENA_HEX_MM, 10.0, 3.0)
    assert [board.cell_name(c) for c in board.cells()] == [state.grid.name(c) for c in state.grid.cells]
    return board


def ice_arena_scene(state: IceArenaState, hand_at: tuple[float, float] | None = None,
                    size: tuple[int, int] = (480, 360)) -> Scene:
    """Bots as stacks on their hexes (core bottom to top, spare smalls, the owner's cap) and the
    smalls in the arena standing or lying, two in one hex side by side."""
    board = ice_arena_board(state)
    b = _Builder(np.random.default_rng(LAYOUT_SEED), board.thickness_mm)
    top = board.thickness_mm
    for bot in state.bots:
        pieces = [(p.colour, p.size) for p in bot.core] + [(c, Size.SMALL) for c in bot.spares]
        pieces.append((state.colours[bot.owner], Size.SMALL))
        _steady(b, bot.id).stack(*board.centre_of(bot.cell), top, pieces, cell=board.cell_name(bot.cell),
                                 owner=f"P{bot.owner + 1}")
    by_cell: dict[int, list] = {}
    for small in state.smalls:
        if state.bot_at(small.cell) is not None:
            raise ValueError(f"a small shares hex {board.cell_name(small.cell)} with a bot: the script does "
                             "not draw pieces around a stack")
        by_cell.setdefault(small.cell, []).append(small)
    for cell, smalls in by_cell.items():
        x, y = board.centre_of(cell)
        name = board.cell_name(cell)
        for k, small in enumerate(smalls):
            # Side by side across the first piece's direction (or east-west when it stands).
            heading = board.heading(smalls[0].direction) if smalls[0].direction is not None else 0.0
            off = (k - (len(smalls) - 1) / 2) * SMALLS_SIDE_BY_SIDE_MM
            px, py = x + off * math.cos(math.radians(heading)), y - off * math.sin(math.radians(heading))
            if small.direction is None:
                _steady(b, name, k).upright(small.colour, Size.SMALL, px, py, top, cell=name)
            else:
                b.lying(small.colour, Size.SMALL, px, py, top, board.heading(small.direction),
                        direction=small.direction.value, cell=name)
    span = 2 * max(math.hypot(*p) for p in board.outline())
    return _finish("ice-arena", b, board, board.centre, span, hand_at, size)


# --- ARENA ------------------------------------------------------------------------------------

ARENA_BOARD = SquareBoard("chessboard", 8, 8, 44.45, 15.0, 3.0, (0, 0, 8, 8))


def arena_scene(state: ArenaState, colours: Sequence[Colour], hand_at: tuple[float, float] | None = None,
                size: tuple[int, int] = (480, 360)) -> Scene:
    """Each flying ship as a tree of its seat's colour on its tile, one piece per height."""
    board = ARENA_BOARD
    assert (state.arena.files, state.arena.ranks) == (board.files, board.ranks)
    b = _Builder(np.random.default_rng(LAYOUT_SEED), board.thickness_mm)
    for seat, ship in enumerate(state.ships):
        if not ship.flying:
            continue
        f, r, z = ship.at
        if z >= len(TREE):
            raise ValueError(f"P{seat + 1}'s ship flies at height {z + 1}: the script shows trees of "
                             f"at most {len(TREE)} pieces")
        _steady(b, seat).stack(*board.cell_centre(f, r), board.thickness_mm,
                               [(colours[seat], s) for s in TREE[: z + 1]], cell=board.cell_name(f, r),
                               owner=f"P{seat + 1}")
    return _finish("space-arena", b, board, board.centre, board.width_mm + 2 * board.border_mm, hand_at, size)


# --- IceTowers --------------------------------------------------------------------------------

ICETOWERS_SPACING_MM = 70.0


def icetowers_spots(start: IceTowersState) -> dict[Pyramid, tuple[float, float]]:
    """Where each piece of the start stands on the bare table: the colours in rows, sizes across.

    Needs a start where every piece is free and none is repeated (one piece per colour and size).
    """
    pieces = [tower[0] for tower, _ in start.towers]
    assert all(len(tower) == 1 for tower, _ in start.towers) and len(set(pieces)) == len(pieces)
    colours = sorted({p.colour for p in pieces}, key=lambda c: c.value)
    spots = {}
    for p in pieces:
        row, column = colours.index(p.colour), 3 - int(p.size)
        spots[p] = ((column - 1) * ICETOWERS_SPACING_MM, ((len(colours) - 1) / 2 - row) * ICETOWERS_SPACING_MM)
    return spots


def icetowers_scene(state: IceTowersState, spots: dict[Pyramid, tuple[float, float]],
                    hand_at: tuple[float, float] | None = None, size: tuple[int, int] = (480, 360)) -> Scene:
    """Towers on a bare table; a tower stands where its bottom piece stood at the start (a cap
    carries the capping piece onto the tower, which does not move)."""
    b = _Builder(np.random.default_rng(LAYOUT_SEED), 0.0)
    for tower, _ in state.towers:
        _steady(b, str(tower[0])).stack(*spots[tower[0]], 0.0, [(p.colour, p.size) for p in tower], zone="table")
    xs = [x for x, _ in spots.values()]
    ys = [y for _, y in spots.values()]
    centre = ((min(xs) + max(xs)) / 2, (min(ys) + max(ys)) / 2)
    span = max(max(xs) - min(xs), max(ys) - min(ys)) + 2 * ICETOWERS_SPACING_MM
    return _finish("icetowers", b, None, centre, span, hand_at, size)
