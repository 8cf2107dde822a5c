"""Rigid geometry of the pieces on a table: poses, stacking and nesting heights, keypoints.

Shared by the scene renderer (companion/synth) and the vision checks that compare what the camera
saw with what a piece of each size would look like (companion/vision/sizing.py).

World coordinates are millimetres in the board frame: x towards later files (east), y towards
higher ranks (north), z up from the table top. A pose is a 4x4 matrix taking a shape's local
coordinates (base on z=0, axis along +z) to world coordinates.
"""

from __future__ import annotations

import math

import numpy as np

from companion.pieces import BASE_MM, HEIGHT_MM, Size

# Horizontal thickness of a pyramid's wall at its rim. A stacked piece's rim rests where the
# lower piece's outer half-width equals the upper piece's inner half-width. 1.5 mm puts a tree's
# rims where a photograph of real trees shows them (docs/synth.md, ruling 2).
WALL_MM = 1.5


def half_base(size: Size) -> float:
    return BASE_MM[size] / 2


def slant_height(size: Size) -> float:
    """Distance from the middle of a base edge to the apex, along a face."""
    return math.hypot(HEIGHT_MM[size], half_base(size))


def pyramid_corners(size: Size) -> np.ndarray:
    """The five vertices in local coordinates: four base corners, then the apex."""
    a, h = half_base(size), HEIGHT_MM[size]
    return np.array([[-a, -a, 0], [a, -a, 0], [a, a, 0], [-a, a, 0], [0, 0, h]], dtype=np.float64)


def stack_rise(lower: Size, upper: Size) -> float:
    """Height of `upper`'s base above `lower`'s base when `upper` is stacked over `lower`'s tip.

    Raises:
        ValueError: when `upper` is larger than `lower` (it would swallow it, not rest on it).
    """
    if upper > lower:
        raise ValueError(f"a {upper.name.lower()} cannot rest on a {lower.name.lower()}: it would cover it")
    inner = half_base(upper) - WALL_MM
    return HEIGHT_MM[lower] * (1 - inner / half_base(lower))


def nest_rise(host: Size, inner: Size) -> float:
    """Height of a nested piece's base above its host's base (a small inside a medium inside a large).

    Raises:
        ValueError: when `inner` is not smaller than `host`.
    """
    if inner >= host:
        raise ValueError(f"a {inner.name.lower()} does not nest inside a {host.name.lower()}")
    return HEIGHT_MM[host] * (1 - (half_base(inner) + WALL_MM) / half_base(host))


def translation(x: float, y: float, z: float) -> np.ndarray:
    m = np.eye(4)
    m[:3, 3] = (x, y, z)
    return m


def rotation_z(radians: float) -> np.ndarray:
    c, s = math.cos(radians), math.sin(radians)
    m = np.eye(4)
    m[:2, :2] = ((c, -s), (s, c))
    return m


def rotation_x(radians: float) -> np.ndarray:
    c, s = math.cos(radians), math.sin(radians)
    m = np.eye(4)
    m[1:3, 1:3] = ((c, -s), (s, c))
    return m


def scaling(sx: float, sy: float, sz: float) -> np.ndarray:
    return np.diag([sx, sy, sz, 1.0])


def heading_vector(heading_deg: float) -> tuple[float, float]:
    """Unit (x, y) of a compass heading: 0 is north (+y), 90 is east (+x)."""
    r = math.radians(heading_deg)
    return math.sin(r), math.cos(r)


def heading_of(dx: float, dy: float) -> float:
    """Compass heading in [0, 360) of a board-plane vector."""
    return math.degrees(math.atan2(dx, dy)) % 360


def upright_pose(x: float, y: float, z: float, yaw_deg: float) -> np.ndarray:
    """Standing on its base at (x, y, z), turned `yaw_deg` about the vertical."""
    return translation(x, y, z) @ rotation_z(math.radians(yaw_deg))


def _lying_local(size: Size) -> np.ndarray:
    """Lays the piece on its -y face with that face's base-edge midpoint at the origin, apex to +y."""
    a, h = half_base(size), HEIGHT_MM[size]
    normal_angle = math.atan2(a, -h)  # outward normal of the -y face is (0, -h, a)
    tilt = rotation_x(-math.pi / 2 - normal_angle)
    edge_mid = tilt @ np.array([0, -a, 0, 1.0])
    lifted = translation(-edge_mid[0], -edge_mid[1], -edge_mid[2]) @ tilt
    apex = lifted @ np.array([0, 0, h, 1.0])
    if apex[1] < 0:  # the face might have landed pointing -y: turn it round
        lifted = rotation_z(math.pi) @ lifted
    return lifted


def lying_pose(size: Size, x: float, y: float, z: float, heading_deg: float) -> np.ndarray:
    """Lying on a face, the middle of that face's base edge at (x, y, z), apex towards `heading_deg`."""
    return translation(x, y, z) @ rotation_z(-math.radians(heading_deg)) @ _lying_local(size)


def apply(matrix: np.ndarray, points: np.ndarray) -> np.ndarray:
    """Transforms an (n, 3) array of points by a 4x4 matrix."""
    pts = np.asarray(points, dtype=np.float64)
    return pts @ matrix[:3, :3].T + matrix[:3, 3]


def resting_corners(size: Size, lying: bool) -> np.ndarray:
    """The five vertices (four base corners, then the apex) of a piece resting on the table, in
    coordinates centred on its contact keypoint: an upright piece's base centre, or a lying
    piece's resting base-edge midpoint with its apex along +y."""
    local = _lying_local(size) if lying else np.eye(4)
    return apply(local, pyramid_corners(size))


def pyramid_keypoints(size: Size, lying: bool, pose: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """World (apex, contact): contact is the base centre, or the resting base edge's midpoint when lying."""
    a, h = half_base(size), HEIGHT_MM[size]
    local_contact = (0, -a, 0) if lying else (0, 0, 0)
    pts = apply(pose, np.array([[0, 0, h], local_contact]))
    return pts[0], pts[1]
