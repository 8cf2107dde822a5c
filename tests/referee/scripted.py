"""A scripted Icebomb Arena table rendered from engine states: fixed camera, hands between moves."""

from __future__ import annotations

import math

import numpy as np

from companion.games.icebomb_arena import IcebombState, Phase
from companion.pieces import Colour, Size
from companion import geometry as geo
from companion.synth.boards import SquareBoard
from companion.synth.camera import Camera, look_at
from companion.synth.labels import sidecar
from companion.synth.scene import HAND, PAWN, BEAD, Scene, SceneObject
from companion.synth.scenes import _Builder, sample_look
from companion.vision.mapper import Mapper, MapperConfig, location_from_truth, truth_detections
from companion.vision.observation import Observation

COLOURS = (Colour.RED, Colour.YELLOW, Colour.GREEN, Colour.BLUE)
BOARD = SquareBoard("chessboard", 8, 8, 44.45, 15.0, 3.0, (0, 0, 8, 8))
SEAT_GAP_MM = 75.0


def camera(width: int = 320, height: int = 240) -> Camera:
    cx, cy = BOARD.centre
    r, t = look_at(np.array([cx + 60, cy - 420, 620.0]), np.array([cx, cy - 10, 0.0]))
    fx = (width / 2) / math.tan(math.radians(72) / 2)
    return Camera(width, height, fx, fx, width / 2, height / 2, tuple(map(tuple, r)), tuple(t))


def seat_point(seat: int, seats: int = 4) -> tuple[float, float, float]:
    """(x, y, bearing) of a seat's zone, clockwise from the south as the mapper's seat zones."""
    bearing = (180 + 360 * seat / seats) % 360
    cx, cy = BOARD.centre
    reach = BOARD.width_mm / 2 + BOARD.border_mm + SEAT_GAP_MM
    return cx + reach * math.sin(math.radians(bearing)), cy + reach * math.cos(math.radians(bearing)), bearing


def scene_of(state: IcebombState, hand_at: tuple[float, float] | None = None, seed: int = 5) -> Scene:
    rng = np.random.default_rng(seed)
    b = _Builder(rng, BOARD.thickness_mm)
    z = BOARD.thickness_mm
    grid = state.grid

    def centre(cell: int) -> tuple[float, float]:
        f, r = grid.coords(cell)
        return BOARD.cell_centre(f, r)

    for p, cell in enumerate(state.gladiators):
        if cell is not None and state.alive[p]:
            b.token(PAWN, *centre(cell), z, (0.1, 0.2, 0.7), yaw=0.0, cell=grid.name(cell))
    for cell in sorted(state.bombs):
        b.token(BEAD, *centre(cell), z, (0.85, 0.9, 0.95), yaw=0.0, translucent=True, cell=grid.name(cell))
    for cell, block in enumerate(state.blocks):
        if block is not None:
            b.upright(COLOURS[block[0]], Size(block[1]), *centre(cell), z, cell=grid.name(cell))
    if state.phase not in (Phase.BID, Phase.PLAN):
        for p, hand in enumerate(state.hands):
            sx, sy, bearing = seat_point(p)
            across = (math.cos(math.radians(bearing)), -math.sin(math.radians(bearing)))
            for k, q in enumerate(hand or ()):
                x, y = sx + across[0] * (k - 0.5) * 45, sy + across[1] * (k - 0.5) * 45
                if q.direction is None:
                    b.upright(COLOURS[p], q.size, x, y, 0.0, zone=f"P{p + 1}")
                else:
                    b.lying(COLOURS[p], q.size, x, y, 0.0, BOARD.heading(q.direction), zone=f"P{p + 1}")
    if hand_at is not None:
        pose = geo.translation(hand_at[0], hand_at[1], 110.0) @ geo.rotation_z(math.radians(30))
        b.add(SceneObject(HAND, pose, tint=(0.87, 0.68, 0.55)))
    look = sample_look(np.random.default_rng(11))
    look.noise_sigma, look.blur_sigma, look.vignette = 1.5, 0.0, 0.0
    return Scene("icebomb-arena", seed, BOARD, b.objects, camera(), look, {})


def renderer_for_tests():
    """The renderer at test quality (one sample, small shadow maps); skips the test where there is
    no headless GL context."""
    import pytest

    pytest.importorskip("moderngl")
    from companion.synth.render import Renderer

    try:
        return Renderer(samples=1, shadow_size=256)
    except Exception as exc:  # no EGL on this machine
        pytest.skip(f"no headless GL context: {exc}")


def render(renderer, scene: Scene) -> tuple[np.ndarray, dict]:
    rendered = renderer.render(scene)
    return rendered.image, sidecar(scene, rendered.ids)


def observe(truth: dict) -> Observation:
    return Mapper("icebomb-arena", MapperConfig(seats=4)).map(truth_detections(truth), location_from_truth(truth))
