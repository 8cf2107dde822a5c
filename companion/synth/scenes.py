"""Samplers of physically plausible table scenes, one per game.

Each sampler builds a small game-level truth (who stands where, pointing which way) and lays the
pieces out from it, so the labels can be checked against the state. Everything random comes from
one `numpy.random.Generator` seeded by the caller: the same seed gives the same scene.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Callable

import numpy as np

from companion.pieces import CARDINALS, ALL_DIRECTIONS, HEIGHT_MM, PIECES_PER_SIZE_IN_STASH, Colour, Pose, Size
from companion import geometry as geo
from companion.boards.hexgrid import HEX_DIRECTIONS
from companion.synth.boards import HexBoard, SquareBoard, coasters_board
from companion.synth.camera import webcam
from companion.synth.scene import (BEAD, CARD, COIN, D6, D6_MM, D8, HAND, PAWN, PYRAMID, TOKEN_HEIGHT_MM, Look, Scene,
                                   SceneObject, d6_face_up, d8_face_up)

ALL_COLOURS = tuple(Colour)
TABLE_KINDS = ("wood", "cloth", "plain", "dark", "white")
TABLE_POOL = 6  # table textures per kind, made once per renderer
BOARD_STYLES = 8
SKIN = ((0.87, 0.68, 0.55), (0.78, 0.57, 0.43), (0.58, 0.40, 0.28), (0.40, 0.27, 0.19), (0.95, 0.78, 0.67))
TOKEN_COLOURS = ((0.8, 0.1, 0.1), (0.1, 0.2, 0.7), (0.95, 0.95, 0.9), (0.08, 0.08, 0.08), (0.9, 0.75, 0.1),
                 (0.1, 0.55, 0.2), (0.55, 0.35, 0.2), (0.6, 0.2, 0.6))
BEAD_TINTS = ((0.85, 0.9, 0.95), (0.3, 0.5, 0.9), (0.2, 0.7, 0.4), (0.08, 0.08, 0.1), (0.95, 0.95, 0.95),
              (0.8, 0.2, 0.2))


class _Builder:
    """Collects objects and keeps off-board things from overlapping."""

    def __init__(self, rng: np.random.Generator, board_top: float):
        self.rng = rng
        self.board_top = board_top
        self.objects: list[SceneObject] = []
        self.discs: list[tuple[float, float, float]] = []
        self.stacks = 0

    def free(self, x: float, y: float, r: float) -> bool:
        return all(math.hypot(x - ox, y - oy) >= r + orad for ox, oy, orad in self.discs)

    def claim(self, x: float, y: float, r: float) -> None:
        self.discs.append((x, y, r))

    def spot(self, centre: tuple[float, float], spread: tuple[float, float], r: float,
             keep_out: Callable[[float, float], bool] | None = None) -> tuple[float, float] | None:
        """A free spot for a disc of radius r, near `centre` within +-spread, or None."""
        for _ in range(40):
            x = centre[0] + self.rng.uniform(-spread[0], spread[0])
            y = centre[1] + self.rng.uniform(-spread[1], spread[1])
            if self.free(x, y, r) and (keep_out is None or not keep_out(x, y)):
                self.claim(x, y, r)
                return x, y
        return None

    def add(self, obj: SceneObject) -> SceneObject:
        self.objects.append(obj)
        return obj

    def stack(self, x: float, y: float, z: float, pieces: list[tuple[Colour, Size]], **truth) -> list[SceneObject]:
        """Stacks pieces (bottom first) over each other's tips, each sliding down until its rim rests."""
        stack_id = self.stacks
        self.stacks += 1
        yaw = self.rng.uniform(0, 90)
        out = []
        base = z
        for level, (colour, size) in enumerate(pieces):
            if level:
                base += geo.stack_rise(pieces[level - 1][1], size)
            pose = geo.upright_pose(x + self.rng.normal(0, 0.2), y + self.rng.normal(0, 0.2), base,
                                    yaw + self.rng.normal(0, 2))
            out.append(self.add(SceneObject(PYRAMID, pose, colour=colour, size=size, piece_pose=Pose.UPRIGHT,
                                            stack=stack_id if len(pieces) > 1 else None,
                                            level=level if len(pieces) > 1 else None, **truth)))
        return out

    def upright(self, colour: Colour, size: Size, x: float, y: float, z: float, **truth) -> SceneObject:
        return self.stack(x, y, z, [(colour, size)], **truth)[0]

    def lying(self, colour: Colour, size: Size, x: float, y: float, z: float, heading: float, **truth) -> SceneObject:
        """A piece lying with its footprint centred on (x, y), apex towards `heading`."""
        length = math.hypot(HEIGHT_MM[size], geo.half_base(size))
        hx, hy = geo.heading_vector(heading)
        pose = geo.lying_pose(size, x - hx * length / 2, y - hy * length / 2, z, heading)
        return self.add(SceneObject(PYRAMID, pose, colour=colour, size=size, piece_pose=Pose.LYING,
                                    heading_deg=heading, **truth))

    def nest(self, colour: Colour, sizes: list[Size], x: float, y: float, z: float, heading: float,
             **truth) -> list[SceneObject]:
        """Pieces nested one inside another (largest outside), lying together."""
        outer = self.lying(colour, sizes[0], x, y, z, heading, **truth)
        out = [outer]
        host_index = len(self.objects) - 1
        for size in sizes[1:]:
            rise = geo.nest_rise(sizes[0], size)
            pose = outer.pose @ geo.translation(0, 0, rise)
            out.append(self.add(SceneObject(PYRAMID, pose, colour=colour, size=size, piece_pose=Pose.LYING,
                                            heading_deg=heading, nested_in=host_index, **truth)))
        return out

    def token(self, kind: str, x: float, y: float, z: float, tint, yaw: float | None = None,
              scale: float = 1.0, translucent: bool = False, value: int | None = None, **truth) -> SceneObject:
        """A token standing at (x, y, z); a d6 or d8 shows `value`, or a face drawn from its own place."""
        yaw = self.rng.uniform(0, 360) if yaw is None else yaw
        pose = geo.upright_pose(x, y, z, yaw)
        if kind in (D6, D8):
            # Drawn apart from the scene's generator, so that a seed still gives the scene it always gave.
            faces = 6 if kind == D6 else 8
            value = value or int(np.random.default_rng([round(abs(x) * 10), round(abs(y) * 10)]).integers(1, faces + 1))
            pose = pose @ (d6_face_up(value, D6_MM * scale) if kind == D6 else d8_face_up(value, TOKEN_HEIGHT_MM[D8] * scale))
        return self.add(SceneObject(kind, pose, tint=tuple(float(c) for c in tint), scale=(scale, scale, scale),
                                    translucent=translucent, value=value, **truth))


def _jitter(rng, colour, amount=0.06):
    return tuple(float(np.clip(c + rng.normal(0, amount), 0, 1)) for c in colour)


def sample_look(rng: np.random.Generator) -> Look:
    elevation = math.radians(rng.uniform(25, 80))
    azimuth = rng.uniform(0, 2 * math.pi)
    warmth = rng.uniform(-1, 1)
    light = (1.0 + 0.12 * warmth, 1.0, 1.0 - 0.15 * warmth)
    table_kind = str(rng.choice(TABLE_KINDS, p=(0.35, 0.2, 0.2, 0.1, 0.15)))
    blur = float(rng.uniform(0.3, 1.4)) if rng.random() < 0.5 else 0.0
    return Look(
        light_dir=(math.cos(elevation) * math.cos(azimuth), math.cos(elevation) * math.sin(azimuth),
                   math.sin(elevation)),
        light_colour=light, ambient=float(rng.uniform(0.3, 0.6)), shadow_softness=float(rng.uniform(1.0, 4.0)),
        table_texture=int(rng.integers(TABLE_POOL)), table_kind=table_kind,
        table_tint=_jitter(rng, (1, 1, 1), 0.05), board_style=int(rng.integers(BOARD_STYLES)),
        piece_alpha=float(rng.uniform(0.42, 0.68)), exposure=float(rng.uniform(0.85, 1.2)),
        white_balance=(float(rng.uniform(0.88, 1.12)), 1.0, float(rng.uniform(0.88, 1.12))),
        blur_sigma=blur, noise_sigma=float(rng.uniform(1.0, 7.0)), jpeg_quality=int(rng.integers(55, 96)),
        vignette=float(rng.uniform(0, 0.35)),
        extra={"colour_jitter": [[round(float(v), 4) for v in rng.normal(0, 0.03, 3)] for _ in ALL_COLOURS]},
    )


def _chessboard(rng: np.random.Generator, area: tuple[int, int, int, int] = (0, 0, 8, 8)) -> SquareBoard:
    # Looney's bandana has 1.75 in squares; wooden and vinyl boards run 40-57 mm.
    cell = 44.45 if rng.random() < 0.4 else float(rng.uniform(40, 57))
    thickness = float(rng.choice([0.6, rng.uniform(2, 4), rng.uniform(8, 16)]))
    return SquareBoard("chessboard", 8, 8, cell, float(rng.uniform(0, 30)), thickness, area)


def _seat_points(board_outline: list[tuple[float, float]], seats: int, rng) -> list[tuple[float, float, float]]:
    """(x, y, heading towards the board) of each seat, clockwise around the board from the south."""
    xs = [p[0] for p in board_outline]
    ys = [p[1] for p in board_outline]
    cx, cy = (min(xs) + max(xs)) / 2, (min(ys) + max(ys)) / 2
    rx, ry = (max(xs) - min(xs)) / 2, (max(ys) - min(ys)) / 2
    out = []
    for k in range(seats):
        bearing = math.radians(180 + 360 * k / seats)  # clockwise seen from above, starting south
        dx, dy = math.sin(bearing), math.cos(bearing)
        scale = 1 / max(abs(dx) / rx, abs(dy) / ry)
        gap = rng.uniform(45, 90)
        out.append((cx + dx * (scale + gap), cy + dy * (scale + gap), geo.heading_of(-dx, -dy)))
    return out


def _inside(outline: list[tuple[float, float]], margin: float = 0.0) -> Callable[[float, float], bool]:
    xs = [p[0] for p in outline]
    ys = [p[1] for p in outline]
    lo_x, hi_x, lo_y, hi_y = min(xs) - margin, max(xs) + margin, min(ys) - margin, max(ys) + margin
    return lambda x, y: lo_x <= x <= hi_x and lo_y <= y <= hi_y


def _distractors(b: _Builder, centre: tuple[float, float], spread: tuple[float, float], board_keep_out,
                 camera_height_guess: float) -> None:
    rng = b.rng
    if rng.random() < 0.3:
        for _ in range(int(rng.integers(1, 5))):
            spot = b.spot(centre, spread, 13, board_keep_out)
            if spot:
                r = rng.uniform(9, 14)
                coin_obj = b.token(COIN, *spot, 0.0, _jitter(rng, (0.75, 0.6, 0.35) if rng.random() < 0.6
                                                           else (0.75, 0.75, 0.78), 0.05))
                coin_obj.scale = (r, r, rng.uniform(1.5, 2.2))
    if rng.random() < 0.25:
        for _ in range(int(rng.integers(1, 3))):
            spot = b.spot(centre, spread, 45, board_keep_out)
            if spot:
                b.token(CARD, *spot, 0.0, _jitter(rng, TOKEN_COLOURS[int(rng.integers(len(TOKEN_COLOURS)))], 0.1))
    if rng.random() < 0.25:
        for _ in range(int(rng.integers(1, 3))):
            spot = b.spot(centre, spread, 12, board_keep_out)
            if spot:
                kind = D6 if rng.random() < 0.5 else D8
                b.token(kind, *spot, 0.0, _jitter(rng, TOKEN_COLOURS[int(rng.integers(len(TOKEN_COLOURS)))]),
                        scale=rng.uniform(0.85, 1.15), zone="table")
    if rng.random() < 0.3:
        for _ in range(int(rng.integers(1, 3))):
            x = centre[0] + rng.uniform(-spread[0], spread[0]) * 0.7
            y = centre[1] + rng.uniform(-spread[1], spread[1]) * 0.7
            z = rng.uniform(60, max(80.0, min(220.0, camera_height_guess - 180)))
            reach = rng.uniform(0, 360)
            pose = geo.translation(x, y, z) @ geo.rotation_z(-math.radians(reach)) @ geo.rotation_x(
                math.radians(rng.uniform(-15, 5)))
            s = rng.uniform(0.9, 1.15)
            b.add(SceneObject(HAND, pose, tint=_jitter(rng, SKIN[int(rng.integers(len(SKIN)))], 0.03),
                              scale=(s, s, s)))


def _finish(game: str, seed: int, rng, b: _Builder, board, target, state, width, height) -> Scene:
    camera = webcam(rng, np.asarray(target, float), width, height)
    look = sample_look(rng)
    return Scene(game, seed, board, b.objects, camera, look, state)


def _board_target(rng, board) -> np.ndarray:
    cx, cy = board.centre
    span = board.width_mm if isinstance(board, SquareBoard) else board.hex_mm * 3 * board.radius
    return np.array([cx + rng.normal(0, span * 0.12), cy + rng.normal(0, span * 0.12), board.thickness_mm])


def icebomb_arena(seed: int, rng: np.random.Generator, width: int, height: int) -> Scene:
    """Chessboard arena (8x8, or the 6x6 and 8x4 areas), pawns, glass-bead bombs, upright blocks,
    and each gladiator's two revealed pyramids in front of their seat."""
    players = int(rng.choice([2, 3, 4, 4, 5, 6]))
    if players >= 4:
        area = (0, 0, 8, 8)
    elif players == 3:
        area = (int(rng.integers(0, 3)), int(rng.integers(0, 3)), 6, 6)
    else:
        # Two gladiators use half the board: 8 files by 4 ranks, as the engine's arena (a1-h4).
        area = (0, int(rng.choice([0, 4])), 8, 4)
    board = _chessboard(rng, area)
    b = _Builder(rng, board.thickness_mm)
    z = board.thickness_mm
    colours = [Colour(c) for c in rng.choice([c.value for c in ALL_COLOURS], players, replace=False)]
    cells = board.area_cells()
    order = rng.permutation(len(cells))
    free_cells = [cells[i] for i in order]
    bombs_each = {2: 4, 3: 3}.get(players, 2)
    contents: dict[str, dict] = {}
    jitter = board.cell_mm * 0.08

    def take_cell():
        f, r = free_cells.pop()
        x, y = board.cell_centre(f, r)
        return board.cell_name(f, r), x + rng.normal(0, jitter), y + rng.normal(0, jitter)

    bead_tint = BEAD_TINTS[int(rng.integers(len(BEAD_TINTS)))]
    for p in range(players):
        for _ in range(int(rng.integers(0, bombs_each + 1))):
            name, x, y = take_cell()
            b.token(BEAD, x, y, z, _jitter(rng, bead_tint, 0.03), translucent=True, cell=name, scale=rng.uniform(0.9, 1.1))
            contents[name] = {"bomb": True}
    pawn_tints = rng.permutation(len(TOKEN_COLOURS))
    for p in range(players):
        if rng.random() < 0.9:
            name, x, y = take_cell()
            b.token(PAWN, x, y, z, _jitter(rng, TOKEN_COLOURS[pawn_tints[p % len(TOKEN_COLOURS)]], 0.04),
                    cell=name, owner=f"P{p + 1}", scale=rng.uniform(0.85, 1.1))
            contents[name] = {"gladiator": f"P{p + 1}"}
    for p, colour in enumerate(colours):
        for _ in range(int(rng.integers(0, 4))):
            if not free_cells:
                break
            name, x, y = take_cell()
            size = Size(int(rng.integers(1, 4)))
            b.upright(colour, size, x, y, z, cell=name, owner=f"P{p + 1}")
            contents[name] = {"block": f"{colour.value}-{size.letter}", "owner": f"P{p + 1}"}
    outline = board.outline()
    keep_out = _inside(outline, 8)
    revealed = {}
    for p, (sx, sy, facing) in enumerate(_seat_points(outline, players, rng)):
        picks = []
        block_used = False
        for hand_index in range(2):
            size = Size(int(rng.integers(1, 4)))
            spot = b.spot((sx, sy), (45, 25), 28, keep_out)
            if spot is None:
                continue
            if not block_used and rng.random() < 0.3:
                block_used = True
                b.upright(colours[p], size, *spot, 0.0, zone=f"P{p + 1}", owner=f"P{p + 1}")
                picks.append(f"{colours[p].value}-{size.letter} block")
            else:
                direction = CARDINALS[int(rng.integers(4))]
                b.lying(colours[p], size, *spot, 0.0, board.heading(direction), direction=direction.value,
                        zone=f"P{p + 1}", owner=f"P{p + 1}")
                picks.append(f"{colours[p].value}-{size.letter} {direction.value}")
        revealed[f"P{p + 1}"] = picks
    _distractors(b, board.centre, (board.width_mm * 0.8, board.depth_mm * 0.8), keep_out, 400)
    state = {"players": {f"P{p + 1}": c.value for p, c in enumerate(colours)},
             "arena": f"{area[2]}x{area[3]}", "cells": contents, "revealed": revealed}
    return _finish("icebomb-arena", seed, rng, b, board, _board_target(rng, board), state, width, height)


def zamboni_wars(seed: int, rng: np.random.Generator, width: int, height: int) -> Scene:
    """Martian Coasters with their arrows; each player's Zamboni is a nest lying in one of 8 directions."""
    cell_mm, thickness = float(rng.uniform(27, 34)), float(rng.uniform(2, 4))
    players = int(rng.integers(2, 5))
    colours = [Colour.RED, Colour.YELLOW, Colour.GREEN, Colour.BLUE]
    rng.shuffle(colours)
    board = coasters_board(cell_mm, thickness, tuple(colours))
    b = _Builder(rng, board.thickness_mm)
    z = board.thickness_mm
    cells = board.area_cells()
    order = rng.permutation(len(cells))
    zambonis = {}
    for p in range(players):
        f, r = cells[order[p]]
        x, y = board.cell_centre(f, r)
        sizes = [[Size.LARGE, Size.MEDIUM, Size.SMALL], [Size.MEDIUM, Size.SMALL], [Size.SMALL]][
            int(rng.choice(3, p=(0.6, 0.25, 0.15)))]
        direction = ALL_DIRECTIONS[int(rng.integers(8))]
        name = board.cell_name(f, r)
        b.nest(colours[p], sizes, x + rng.normal(0, 1.5), y + rng.normal(0, 1.5), z, board.heading(direction),
               direction=direction.value, cell=name, owner=f"P{p + 1}")
        zambonis[f"P{p + 1}"] = {"colour": colours[p].value, "cell": name, "facing": direction.value,
                                 "armour": [s.letter for s in sizes]}
    keep_out = _inside(board.outline(), 8)
    if rng.random() < 0.7:
        spot = b.spot(board.centre, (board.width_mm * 0.9, board.depth_mm * 0.9), 14, keep_out)
        if spot:
            b.token(D6, *spot, 0.0, _jitter(rng, TOKEN_COLOURS[int(rng.integers(len(TOKEN_COLOURS)))]),
                    zone="table", scale=rng.uniform(0.9, 1.2))
    _distractors(b, board.centre, (board.width_mm, board.depth_mm), keep_out, 400)
    state = {"zambonis": zambonis, "coaster_colours": [c.value for c in colours],
             "exits": [row.split() for row in board.layout.rows_text()]}
    return _finish("zamboni-wars", seed, rng, b, board, _board_target(rng, board), state, width, height)


def _tower(rng, stash: dict[tuple[Colour, Size], int], colours: list[Colour], height: int) -> list[tuple[Colour, Size]]:
    """A tower bottom first; each piece caps one of the same size or larger, of a different colour."""
    available = [k for k, n in stash.items() if n > 0 and k[0] in colours]
    if not available:
        return []
    pieces = [available[int(rng.integers(len(available)))]]
    stash[pieces[0]] -= 1
    while len(pieces) < height:
        below = pieces[-1]
        options = [k for k, n in stash.items() if n > 0 and k[0] in colours and k[1] <= below[1] and k[0] != below[0]]
        if not options:
            break
        pick = options[int(rng.integers(len(options)))]
        stash[pick] -= 1
        pieces.append(pick)
    return pieces


def _table_pieces(b: _Builder, stash: dict, colours: list[Colour], region: tuple[float, float], tower_count: int,
                  heights: dict[int, float], max_loose: int) -> tuple[list[dict], list[str]]:
    """Towers obeying the capping rule (heights drawn with the given chances) and up to `max_loose`
    pieces lying where they were set down, in `region` around the origin of a bare table; the stash
    is drawn from. Returns the state's "towers" and "lying" entries."""
    rng = b.rng
    towers = []
    for _ in range(tower_count):
        pieces = _tower(rng, stash, colours, int(rng.choice(list(heights), p=tuple(heights.values()))))
        if not pieces:
            break
        spot = b.spot((0, 0), region, geo.half_base(pieces[0][1]) * 1.5 + 3)
        if spot is None:
            for key in pieces:
                stash[key] += 1
            continue
        b.stack(*spot, 0.0, pieces, zone="table")
        towers.append({"pieces": [f"{c.value}-{s.letter}" for c, s in pieces], "at_mm": [round(v, 1) for v in spot]})
    loose = []
    for _ in range(int(rng.integers(0, max_loose + 1))):  # pieces set down in the open, not yet stood up
        options = [k for k, n in stash.items() if n > 0]
        if not options:
            break
        colour, size = options[int(rng.integers(len(options)))]
        spot = b.spot((0, 0), region, HEIGHT_MM[size] * 0.6)
        if spot:
            stash[(colour, size)] -= 1
            b.lying(colour, size, *spot, 0.0, float(rng.uniform(0, 360)), zone="table")
            loose.append(f"{colour.value}-{size.letter}")
    return towers, loose


def icetowers(seed: int, rng: np.random.Generator, width: int, height: int) -> Scene:
    """A bare table with free pieces and towers of 1-5 pieces that obey the capping rule."""
    b = _Builder(rng, 0.0)
    players = int(rng.integers(2, 5))
    colours = [Colour(c) for c in rng.choice([c.value for c in ALL_COLOURS], players, replace=False)]
    if rng.random() < 0.25:  # Gus, the ghost player, prefers white, then clear
        gus = Colour.WHITE if Colour.WHITE not in colours else Colour.CLEAR
        if gus not in colours:
            colours.append(gus)
    stash = {(c, s): PIECES_PER_SIZE_IN_STASH for c in colours for s in Size}
    region = (rng.uniform(140, 260), rng.uniform(100, 200))
    towers, loose = _table_pieces(b, stash, colours, region, int(rng.integers(3, 13)),
                                  {1: 0.35, 2: 0.25, 3: 0.2, 4: 0.12, 5: 0.08}, max_loose=2)
    _distractors(b, (0, 0), (region[0] * 1.3, region[1] * 1.3), None, 400)
    target = np.array([rng.normal(0, region[0] * 0.2), rng.normal(0, region[1] * 0.2), 0.0])
    state = {"colours": [c.value for c in colours], "towers": towers, "lying": loose}
    return _finish("icetowers", seed, rng, b, None, target, state, width, height)


def ice_arena(seed: int, rng: np.random.Generator, width: int, height: int) -> Scene:
    """Hex board with stacked bots (larges, mediums, capped by the owner's smalls) and small pieces
    upright or lying in the arena."""
    board = HexBoard(int(rng.integers(3, 6)), float(rng.uniform(25, 31)), float(rng.uniform(5, 20)),
                     float(rng.uniform(1, 6)))
    b = _Builder(rng, board.thickness_mm)
    z = board.thickness_mm
    four = [Colour.RED, Colour.YELLOW, Colour.GREEN, Colour.BLUE]
    players = int(rng.integers(2, 5))
    owners = list(four)
    rng.shuffle(owners)
    owners = owners[:players]
    # Drawn from south row to north row, west to east, as before the board geometry was shared,
    # so that a seed still gives the scene (and a resumed dataset the items) it always gave.
    cells = sorted(board.cells(), key=lambda c: (-board.grid.coords(c)[1], sum(board.grid.coords(c))))
    order = [cells[i] for i in rng.permutation(len(cells))]
    bots, smalls = [], []
    for p, owner in enumerate(owners):
        for _ in range(int(rng.integers(1, 4))):
            cell = order.pop()
            x, y = board.centre_of(cell)
            body = [(four[int(rng.integers(4))], Size.LARGE) for _ in range(int(rng.integers(1, 3)))]
            body += [(four[int(rng.integers(4))], Size.MEDIUM) for _ in range(int(rng.integers(1, 3)))]
            body += [(owner, Size.SMALL) for _ in range(int(rng.integers(1, 3)))]
            name = board.cell_name(cell)
            b.stack(x + rng.normal(0, 1), y + rng.normal(0, 1), z, body, cell=name, owner=f"P{p + 1}")
            bots.append({"owner": f"P{p + 1}", "cell": name, "stack": [f"{c.value}-{s.letter}" for c, s in body]})
    for _ in range(int(rng.integers(2, 9))):
        if not order:
            break
        cell = order.pop()
        x, y = board.centre_of(cell)
        name = board.cell_name(cell)
        colour = four[int(rng.integers(4))]
        can_point = colour in (Colour.RED, Colour.BLUE, Colour.GREEN)
        count = 2 if colour in (Colour.RED, Colour.YELLOW) and rng.random() < 0.2 else 1
        direction = HEX_DIRECTIONS[int(rng.integers(6))]
        heading = board.heading(direction)
        lying = can_point and rng.random() < 0.6
        for k in range(count):
            # Two pieces in one hex stand side by side, across the direction they point.
            off = (k - (count - 1) / 2) * 13
            px, py = x + off * math.cos(math.radians(heading)), y - off * math.sin(math.radians(heading))
            if lying:
                b.lying(colour, Size.SMALL, px, py, z, heading, direction=direction.value, cell=name)
            else:
                b.upright(colour, Size.SMALL, px, py, z, cell=name)
        smalls.append({"cell": name, "colour": colour.value, "count": count,
                       "pointing": direction.value if lying else "up"})
    for _ in range(int(rng.integers(0, 3))):  # mine and corrosion tokens
        if not order:
            break
        x, y = board.centre_of(order.pop())
        coin_obj = b.token(COIN, x, y, z, (0.75, 0.6, 0.35), zone="board")
        coin_obj.scale = (10.0, 10.0, 1.8)
    outline = board.outline()
    keep_out = _inside(outline, 5)
    extent = max(p[0] for p in outline)
    for _ in range(int(rng.integers(0, 5))):
        spot = b.spot((0, 0), (extent * 1.4, extent * 1.2), 13, keep_out)
        if spot:
            kind = D6 if rng.random() < 0.5 else D8
            b.token(kind, *spot, 0.0, _jitter(rng, TOKEN_COLOURS[int(rng.integers(len(TOKEN_COLOURS)))]),
                    zone="table", scale=rng.uniform(0.9, 1.15))
    _distractors(b, (0, 0), (extent * 1.3, extent * 1.3), keep_out, 400)
    state = {"owners": {f"P{p + 1}": c.value for p, c in enumerate(owners)}, "bots": bots, "smalls": smalls}
    return _finish("ice-arena", seed, rng, b, board, _board_target(rng, board), state, width, height)


def space_arena(seed: int, rng: np.random.Generator, width: int, height: int) -> Scene:
    """ARENA: single-colour ships stacked as trees on a chessboard, eight-sided dice beside them."""
    board = _chessboard(rng)
    b = _Builder(rng, board.thickness_mm)
    z = board.thickness_mm
    players = int(rng.integers(2, 5))
    colours = [Colour(c) for c in rng.choice([c.value for c in ALL_COLOURS], players, replace=False)]
    cells = board.area_cells()
    order = [cells[i] for i in rng.permutation(len(cells))]
    ships, dice = {}, []
    for p, colour in enumerate(colours):
        f, r = order.pop()
        x, y = board.cell_centre(f, r)
        name = board.cell_name(f, r)
        if rng.random() < 0.15:
            direction = ALL_DIRECTIONS[int(rng.integers(8))]
            size = Size(int(rng.integers(2, 4)))
            b.lying(colour, size, x, y, z, board.heading(direction), direction=direction.value, cell=name,
                    owner=f"P{p + 1}")
            ships[f"P{p + 1}"] = {"colour": colour.value, "cell": name, "height": 1, "lying": direction.value}
        else:
            count = int(rng.integers(1, 6))
            sizes = sorted((Size(int(rng.integers(1, 4))) for _ in range(count)), reverse=True)
            b.stack(x + rng.normal(0, 1), y + rng.normal(0, 1), z, [(colour, s) for s in sizes], cell=name,
                    owner=f"P{p + 1}")
            ships[f"P{p + 1}"] = {"colour": colour.value, "cell": name, "height": count,
                                  "stack": [s.letter for s in sizes]}
        for _ in range(int(rng.integers(0, 3))):  # height and speed dice beside the ship
            nearby = [(ff, rr) for ff, rr in order if abs(ff - f) <= 1 and abs(rr - r) <= 1]
            if not nearby:
                break
            ff, rr = nearby[int(rng.integers(len(nearby)))]
            order.remove((ff, rr))
            dx, dy = board.cell_centre(ff, rr)
            dname = board.cell_name(ff, rr)
            die = b.token(D8, dx + rng.normal(0, 3), dy + rng.normal(0, 3), z,
                          _jitter(rng, TOKEN_COLOURS[int(rng.integers(len(TOKEN_COLOURS)))]), cell=dname,
                          owner=f"P{p + 1}", scale=rng.uniform(0.9, 1.15))
            ship = ships[f"P{p + 1}"]
            if ship.get("lying") and "height_die" not in ship:
                # A ship laid down flies as high as the d8 beside it shows (the rules' other way).
                ship.update(height=die.value, height_die=dname)
            dice.append(dname)
    for _ in range(int(rng.integers(0, 4))):  # obstacles and power-ups
        if not order:
            break
        f, r = order.pop()
        x, y = board.cell_centre(f, r)
        coin_obj = b.token(COIN, x, y, z, _jitter(rng, (0.75, 0.75, 0.78)), cell=board.cell_name(f, r))
        coin_obj.scale = (11.0, 11.0, 1.8)
    keep_out = _inside(board.outline(), 8)
    _distractors(b, board.centre, (board.width_mm * 0.8, board.depth_mm * 0.8), keep_out, 400)
    state = {"ships": ships, "dice_cells": dice}
    return _finish("space-arena", seed, rng, b, board, _board_target(rng, board), state, width, height)


def close_up(seed: int, rng: np.random.Generator, width: int, height: int) -> Scene:
    """Pieces photographed from close by and low down, as people photograph them (and as a
    webcam on a short stand beside the table sees them): towers, nests, loose lying pieces and
    glass beads on a bare table, the camera 15-50 cm away and 30-80 degrees from straight down.
    Not a game: it teaches the detector the large, side-on views the board scenes never show."""
    b = _Builder(rng, 0.0)
    colours = [Colour(c) for c in rng.choice([c.value for c in ALL_COLOURS], int(rng.integers(2, 6)), replace=False)]
    stash = {(c, s): PIECES_PER_SIZE_IN_STASH for c in colours for s in Size}
    region = (rng.uniform(60, 150), rng.uniform(40, 110))
    towers, loose = _table_pieces(b, stash, colours, region, int(rng.integers(2, 9)), {1: 0.5, 2: 0.3, 3: 0.2},
                                  max_loose=4)
    for _ in range(int(rng.integers(0, 6))):
        spot = b.spot((0, 0), (region[0] * 1.2, region[1] * 1.2), 8)
        if spot:
            b.claim(*spot, 8)
            tint = BEAD_TINTS[int(rng.integers(len(BEAD_TINTS)))]
            b.token(BEAD, *spot, 0.0, _jitter(rng, tint, 0.03), translucent=bool(rng.random() < 0.6),
                    scale=rng.uniform(0.9, 1.2), zone="table")
    target = np.array([rng.normal(0, region[0] * 0.15), rng.normal(0, region[1] * 0.15), rng.uniform(5, 25)])
    camera = webcam(rng, target, width, height, distance_mm=(150, 500), min_tilt_deg=30.0, max_tilt_deg=80.0)
    state = {"colours": [c.value for c in colours], "towers": towers, "lying": loose}
    return Scene("close-up", seed, None, b.objects, camera, sample_look(rng), state)


SAMPLERS: dict[str, Callable[[int, np.random.Generator, int, int], Scene]] = {
    "icebomb-arena": icebomb_arena,
    "zamboni-wars": zamboni_wars,
    "icetowers": icetowers,
    "ice-arena": ice_arena,
    "space-arena": space_arena,
}
GAMES = tuple(SAMPLERS)
# Scene kinds that are not games; a dataset takes them with --games (e.g. the close-up views).
EXTRA_SCENES: dict[str, Callable[[int, np.random.Generator, int, int], Scene]] = {"close-up": close_up}
SCENE_KINDS = GAMES + tuple(EXTRA_SCENES)


FRAMINGS = ("free", "referee")


def sample_scene(game: str, seed: int, width: int = 640, height: int = 480, framing: str = "free") -> Scene:
    """The scene for `game` drawn from `seed`.

    `framing`: "free" places the camera anywhere from near to far, often cutting the board (what
    a detector must learn from); "referee" keeps the same table but stands the camera back so the
    whole board is in view, as one set up to referee a game is. Scenes without a board keep their
    camera.

    Raises:
        ValueError: for an unknown game name or framing.
    """
    if game not in SCENE_KINDS:
        raise ValueError(f"no scene sampler for game {game!r} (expected one of: {', '.join(SCENE_KINDS)})")
    if framing not in FRAMINGS:
        raise ValueError(f"unknown framing {framing!r} (expected one of: {', '.join(FRAMINGS)})")
    rng = np.random.default_rng([seed, SCENE_KINDS.index(game)])
    scene = {**SAMPLERS, **EXTRA_SCENES}[game](seed, rng, width, height)
    if framing == "referee" and scene.board is not None:
        # A stream of its own, so the table is exactly the free framing's.
        camera_rng = np.random.default_rng([seed, SCENE_KINDS.index(game), 1])
        outline = np.asarray(scene.board.outline(), float)
        cx, cy = outline.mean(axis=0)
        span = 2 * float(np.hypot(outline[:, 0] - cx, outline[:, 1] - cy).max())  # in view at any turn
        target = np.array([cx + camera_rng.normal(0, span * 0.03), cy + camera_rng.normal(0, span * 0.03),
                           scene.board.thickness_mm])
        scene = dataclasses.replace(scene, camera=webcam(camera_rng, target, width, height, fit_span_mm=span))
    return scene
