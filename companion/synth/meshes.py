"""Triangle meshes of the pieces, tokens and distractors, in local coordinates (base on z=0).

Each vertex row is (x, y, z, nx, ny, nz, u, v, code): (u, v) are millimetres on the face for
decals, and `code` says which decal the face carries (1-3: pyramid pips; 11-16: a d6 face value;
21-28: a d8 face's number).
"""

from __future__ import annotations

import math
from functools import cache

import numpy as np

from companion.pieces import HEIGHT_MM, Size
from companion import geometry as geo
from companion.synth.scene import (BEAD_DIAMETER_MM, BEAD_HEIGHT_MM, D6_MM, D8_FACE_VALUES, D8_MM, PAWN_BASE_MM,
                                   PAWN_HEIGHT_MM, d8_rest_turn)

FLOATS_PER_VERTEX = 9


def _flat_triangle(a, b, c, uv=((0, 0), (0, 0), (0, 0)), code=0.0) -> list[list[float]]:
    a, b, c = (np.asarray(p, float) for p in (a, b, c))
    n = np.cross(b - a, c - a)
    n /= np.linalg.norm(n)
    return [[*p, *n, *t, code] for p, t in zip((a, b, c), uv)]


@cache
def pyramid(size: Size) -> np.ndarray:
    """Four faces, no base: the pieces are hollow, and their insides show through the open base."""
    corners = geo.pyramid_corners(size)
    a, s = geo.half_base(size), geo.slant_height(size)
    rows = []
    for i in range(4):
        p, q = corners[i], corners[(i + 1) % 4]
        rows += _flat_triangle(p, q, corners[4], uv=((-a, 0), (a, 0), (0, s)), code=float(size))
    return np.array(rows, dtype=np.float32)


def _lathe(profile: list[tuple[float, float]], segments: int = 28) -> np.ndarray:
    """Surface of revolution of (radius, z) points about the z axis, with smooth normals."""
    prof = np.asarray(profile, float)
    tangents = np.gradient(prof, axis=0)
    rows = []
    for j in range(len(prof) - 1):
        for k in range(segments):
            quad = []
            for (idx, step) in ((j, k), (j, k + 1), (j + 1, k + 1), (j + 1, k)):
                ang = 2 * math.pi * step / segments
                r, z = prof[idx]
                dr, dz = tangents[idx]
                nr, nz = dz, -dr  # outward normal of the profile curve
                norm = math.hypot(nr, nz) or 1.0
                quad.append([r * math.cos(ang), r * math.sin(ang), z,
                             nr / norm * math.cos(ang), nr / norm * math.sin(ang), nz / norm, 0, 0, 0])
            rows += [quad[0], quad[1], quad[2], quad[0], quad[2], quad[3]]
    return np.array(rows, dtype=np.float32)


def _pawn_profile() -> list[tuple[float, float]]:
    r0 = PAWN_BASE_MM / 2
    h = PAWN_HEIGHT_MM
    body = [(0.0, 0.0), (r0, 0.0), (r0, 2.5), (r0 * 0.85, 4.5), (r0 * 0.55, 7), (r0 * 0.36, 14), (r0 * 0.32, h * 0.62),
            (r0 * 0.55, h * 0.65), (r0 * 0.32, h * 0.69)]
    head_r = h * 0.16
    centre = h - head_r
    start = math.asin(max(-1.0, min(1.0, (h * 0.69 - centre) / head_r)))
    for i in range(1, 9):
        ang = start + (math.pi / 2 - start) * i / 8
        body.append((head_r * math.cos(ang) + 1e-3, centre + head_r * math.sin(ang)))
    body[-1] = (0.0, h)
    return body


@cache
def pawn() -> np.ndarray:
    return _lathe(_pawn_profile())


@cache
def bead() -> np.ndarray:
    """A flattened glass dome (the glass stones used as bombs)."""
    r, h = BEAD_DIAMETER_MM / 2, BEAD_HEIGHT_MM
    profile = [(0.0, 0.0), (r * 0.9, 0.0)]
    for i in range(11):
        ang = math.pi / 2 * i / 10
        profile.append((r * math.cos(ang), h * 0.15 + h * 0.85 * math.sin(ang)))
    profile[-1] = (0.0, h)
    return _lathe(profile, segments=24)


@cache
def coin() -> np.ndarray:
    """Unit-radius disc 1 mm thick (scaled per coin)."""
    return _lathe([(0.0, 0.0), (1.0, 0.0), (1.0, 0.0), (1.0, 1.0), (1.0, 1.0), (0.0, 1.0)], segments=24)


def _box(sx: float, sy: float, sz: float, codes: tuple[float, ...] = (0,) * 6) -> np.ndarray:
    """Axis-aligned box on z=0; faces in order +z, -z, +x, -x, +y, -y."""
    hx, hy = sx / 2, sy / 2
    corners = {(i, j, k): (i * hx, j * hy, (k + 1) / 2 * sz) for i in (-1, 1) for j in (-1, 1) for k in (-1, 1)}
    faces = [((-1, -1, 1), (1, -1, 1), (1, 1, 1), (-1, 1, 1)), ((-1, 1, -1), (1, 1, -1), (1, -1, -1), (-1, -1, -1)),
             ((1, -1, -1), (1, 1, -1), (1, 1, 1), (1, -1, 1)), ((-1, 1, -1), (-1, -1, -1), (-1, -1, 1), (-1, 1, 1)),
             ((1, 1, -1), (-1, 1, -1), (-1, 1, 1), (1, 1, 1)), ((-1, -1, -1), (1, -1, -1), (1, -1, 1), (-1, -1, 1))]
    rows = []
    for face, code in zip(faces, codes):
        p = [corners[c] for c in face]
        half = min(sx, sy, sz) / 2
        uv = ((-half, -half), (half, -half), (half, half), (-half, half))
        rows += _flat_triangle(p[0], p[1], p[2], (uv[0], uv[1], uv[2]), code)
        rows += _flat_triangle(p[0], p[2], p[3], (uv[0], uv[2], uv[3]), code)
    return np.array(rows, dtype=np.float32)


@cache
def d6() -> np.ndarray:
    # Opposite faces sum to seven.
    return _box(D6_MM, D6_MM, D6_MM, codes=(11, 16, 12, 15, 13, 14))


@cache
def d8() -> np.ndarray:
    """A regular octahedron resting on a face (8 on top), each face carrying its number (codes 21-28).

    A face's (u, v) are millimetres from its middle, v pointing to its first corner: the
    number's top points at a corner and its foot lies along the opposite edge, as on dice sold."""
    r = D8_MM / 2
    verts = np.array([[r, 0, 0], [-r, 0, 0], [0, r, 0], [0, -r, 0], [0, 0, r], [0, 0, -r]], float)
    verts = verts @ d8_rest_turn().T
    verts[:, 2] -= verts[:, 2].min()
    middle = verts.mean(axis=0)
    rows = []
    for sx in (0, 1):
        for sy in (2, 3):
            for sz in (4, 5):
                a, b, c = verts[sx], verts[sy], verts[sz]
                centre = (a + b + c) / 3
                normal = np.cross(b - a, c - a)
                if np.dot(normal, centre - middle) < 0:
                    b, c = c, b
                    normal = -normal
                up = (a - centre) / np.linalg.norm(a - centre)
                right = np.cross(up, normal / np.linalg.norm(normal))
                uv = tuple((float(np.dot(p - centre, right)), float(np.dot(p - centre, up))) for p in (a, b, c))
                signs = (1 if sx == 0 else -1, 1 if sy == 2 else -1, 1 if sz == 4 else -1)
                rows += _flat_triangle(a, b, c, uv, 20 + D8_FACE_VALUES[signs])
    return np.array(rows, dtype=np.float32)


@cache
def card() -> np.ndarray:
    return _box(63.0, 88.0, 0.4)


def _ellipsoid(centre, radii, segments: int = 14) -> np.ndarray:
    rows = []
    rings = segments // 2
    cx, cy, cz = centre
    rx, ry, rz = radii

    def point(i: int, j: int) -> list[float]:
        th, ph = math.pi * i / rings, 2 * math.pi * j / segments
        ux, uy, uz = math.sin(th) * math.cos(ph), math.sin(th) * math.sin(ph), math.cos(th)
        n = np.array([ux / rx, uy / ry, uz / rz])
        n /= np.linalg.norm(n)
        return [cx + rx * ux, cy + ry * uy, cz + rz * uz, *n, 0, 0, 0]

    for i in range(rings):
        for j in range(segments):
            a, b, c, d = point(i, j), point(i + 1, j), point(i + 1, j + 1), point(i, j + 1)
            rows += [a, b, c, a, c, d]
    return np.array(rows, dtype=np.float32)


@cache
def hand() -> np.ndarray:
    """A stylised hand and forearm reaching along +y, palm centred on the origin, 0-30 mm thick."""
    parts = [_ellipsoid((0, 0, 0), (42, 48, 14)), _ellipsoid((0, -150, 8), (38, 120, 30))]
    for k, (dx, length) in enumerate(((-27, 38), (-9, 46), (9, 48), (26, 42))):
        parts.append(_ellipsoid((dx, 44 + length / 2, -2 - k % 2 * 2), (8, length / 2 + 4, 7)))
    parts.append(_ellipsoid((-48, 10, -3), (9, 30, 8)))
    return np.concatenate(parts)


MESHES = {"pawn": pawn, "bead": bead, "coin": coin, "d6": d6, "d8": d8, "card": card, "hand": hand}


def mesh_for(kind: str, size: Size | None = None) -> np.ndarray:
    if kind == "pyramid":
        return pyramid(size)
    return MESHES[kind]()


@cache
def _hull(kind: str) -> np.ndarray:
    return np.unique(mesh_for(kind)[:, :3].astype(np.float64), axis=0)


def hull_for(kind: str) -> np.ndarray:
    """Local points spanning a token's shape (its mesh vertices)."""
    return _hull(kind)


def pyramid_height(size: Size) -> float:
    return HEIGHT_MM[size]
