"""A table scene: a board, the objects on it, a camera, and the look (lights, materials, finish).

Scenes are plain data: samplers in `companion.synth.scenes` build them, the renderer draws them,
and the labels are computed from them by geometry alone.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from companion.pieces import Colour, Pose, Size
from companion import geometry as geo
from companion.synth.boards import Board
from companion.synth.camera import Camera

# Object kinds. The first five are what the detector learns; the rest are distractors.
PYRAMID, PAWN, BEAD, D6, D8 = "pyramid", "pawn", "bead", "d6", "d8"
HAND, COIN, CARD = "hand", "coin", "card"
LABELLED_KINDS = (PYRAMID, PAWN, BEAD, D6, D8)

# Token dimensions in millimetres (typical, not standardised: the renderer varies them a little).
PAWN_HEIGHT_MM = 32.0
PAWN_BASE_MM = 22.0
BEAD_DIAMETER_MM = 17.0
BEAD_HEIGHT_MM = 7.0
D6_MM = 15.0
D8_MM = 18.0  # distance between opposite vertices

# Height of the top point of each token above its contact point (the apex keypoint).
# A regular octahedron resting on a face is (vertex distance) / sqrt(3) tall.
TOKEN_HEIGHT_MM = {PAWN: PAWN_HEIGHT_MM, BEAD: BEAD_HEIGHT_MM, D6: D6_MM, D8: D8_MM / 3 ** 0.5}


@dataclass
class SceneObject:
    """One physical thing on the table.

    `pose` maps the shape's local frame to the world; `scale` (x, y, z) is applied first, for the
    tokens and distractors whose dimensions vary. Game-level truth (cell, direction, stack, level)
    is what the game state says about it; the labels check it against the geometry.
    """

    kind: str
    pose: np.ndarray
    colour: Colour | None = None
    size: Size | None = None
    piece_pose: Pose | None = None
    direction: str | None = None
    heading_deg: float | None = None
    cell: str | None = None
    zone: str | None = None
    stack: int | None = None
    level: int | None = None
    nested_in: int | None = None
    owner: str | None = None
    tint: tuple[float, float, float] = (1.0, 1.0, 1.0)
    scale: tuple[float, float, float] = (1.0, 1.0, 1.0)
    translucent: bool = False
    value: int | None = None  # a d6's or d8's top face (its pose turns that face up)

    @property
    def matrix(self) -> np.ndarray:
        """Local-to-world transform including the scale."""
        return self.pose @ geo.scaling(*self.scale)

    def keypoints(self) -> tuple[np.ndarray, np.ndarray]:
        """World (apex, contact) points."""
        if self.kind == PYRAMID:
            return geo.pyramid_keypoints(self.size, self.piece_pose is Pose.LYING, self.pose)
        height = TOKEN_HEIGHT_MM.get(self.kind, 0.0)
        if self.value is not None:
            # A die turned about its middle to show another face: top and bottom are still above
            # and below that middle.
            middle = geo.apply(self.matrix, np.array([[0, 0, height / 2]]))[0]
            half = np.array([0, 0, height * self.scale[2] / 2])
            return middle + half, middle - half
        pts = geo.apply(self.matrix, np.array([[0, 0, height], [0, 0, 0]]))
        return pts[0], pts[1]

    def hull_points(self) -> np.ndarray:
        """World points whose convex hull contains the whole object (for its box and silhouette)."""
        if self.kind == PYRAMID:
            return geo.apply(self.pose, geo.pyramid_corners(self.size))
        from companion.synth.meshes import hull_for  # the meshes module knows each token's shape

        return geo.apply(self.matrix, hull_for(self.kind))

    def truth(self) -> dict:
        apex, contact = self.keypoints()
        out = {"kind": self.kind}
        if self.colour is not None:
            out["colour"] = self.colour.value
        if self.size is not None:
            out["size"] = self.size.letter
        if self.piece_pose is not None:
            out["pose"] = self.piece_pose.value
        for key in ("direction", "cell", "zone", "stack", "level", "nested_in", "owner", "value"):
            value = getattr(self, key)
            if value is not None:
                out[key] = value
        if self.heading_deg is not None:
            out["heading_deg"] = round(float(self.heading_deg), 2)
        if self.kind not in (PYRAMID,):
            out["tint"] = [round(float(c), 3) for c in self.tint]
        out["apex_mm"] = [round(float(v), 3) for v in apex]
        out["contact_mm"] = [round(float(v), 3) for v in contact]
        out["matrix"] = [round(float(v), 5) for v in self.matrix.flatten()]
        return out


# The d6 mesh's faces (companion/synth/meshes.py: +z 1, -z 6, +x 2, -x 5, +y 3, -y 4) and the turn
# about the die's middle that brings each one up.
_D6_FACE_UP = {1: (), 6: ((geo.rotation_x, 180),), 3: ((geo.rotation_x, 90),), 4: ((geo.rotation_x, -90),),
               2: ((geo.rotation_z, 90), (geo.rotation_x, 90)), 5: ((geo.rotation_z, -90), (geo.rotation_x, 90))}


def d6_face_up(value: int, side_mm: float = D6_MM) -> np.ndarray:
    """The 4x4 turn of a d6 (resting on z = 0, `side_mm` high) that shows `value` on top, about its middle."""
    if value not in _D6_FACE_UP:
        raise ValueError(f"a d6 shows 1 to 6, not {value}")
    turn = np.eye(4)
    for rotation, degrees in _D6_FACE_UP[value]:
        turn = rotation(np.radians(degrees)) @ turn
    middle = side_mm / 2
    return geo.translation(0, 0, middle) @ turn @ geo.translation(0, 0, -middle)


# A d8 is a regular octahedron; a face is named by the signs of its normal (x, y, z) in the
# octahedron's own frame, whose vertices lie on the axes. Opposite faces sum to nine, as on dice sold.
D8_FACE_VALUES = {(1, 1, 1): 1, (-1, -1, -1): 8, (1, 1, -1): 2, (-1, -1, 1): 7,
                  (1, -1, 1): 3, (-1, 1, -1): 6, (-1, 1, 1): 4, (1, -1, -1): 5}


def d8_rest_turn() -> np.ndarray:
    """The 3x3 turn from the octahedron's own frame to the mesh's, which rests on face (+, +, +)."""
    n = np.array([1.0, 1.0, 1.0]) / np.sqrt(3)
    down = np.array([0.0, 0.0, -1.0])
    axis = np.cross(n, down)
    axis /= np.linalg.norm(axis)
    angle = np.arccos(float(np.dot(n, down)))
    k = np.array([[0, -axis[2], axis[1]], [axis[2], 0, -axis[0]], [-axis[1], axis[0], 0]])
    return np.eye(3) + np.sin(angle) * k + (1 - np.cos(angle)) * k @ k


def _octahedral_turns() -> list[np.ndarray]:
    """The 24 turns that map the octahedron onto itself: signed permutation matrices of determinant 1."""
    from itertools import permutations, product

    turns = []
    for order in permutations(range(3)):
        for signs in product((1, -1), repeat=3):
            m = np.zeros((3, 3))
            for row, (col, sign) in enumerate(zip(order, signs)):
                m[row, col] = sign
            if np.linalg.det(m) > 0:
                turns.append(m)
    return turns


def d8_face_up(value: int, height_mm: float) -> np.ndarray:
    """The 4x4 turn of a d8 (resting on z = 0, `height_mm` tall) that shows `value` on top, about its middle.

    At rest the mesh shows 8 (face (-, -, -)); a symmetry of the octahedron that carries face
    `value` there keeps the solid where it was and only moves the numbers."""
    faces = {v: np.array(s, float) for s, v in D8_FACE_VALUES.items()}
    if value not in faces:
        raise ValueError(f"a d8 shows 1 to 8, not {value}")
    turn = next(t for t in _octahedral_turns() if np.allclose(t @ faces[value], faces[8]))
    rest = d8_rest_turn()
    m = np.eye(4)
    m[:3, :3] = rest @ turn @ rest.T
    middle = height_mm / 2
    return geo.translation(0, 0, middle) @ m @ geo.translation(0, 0, -middle)


@dataclass
class Look:
    """Everything about appearance that is not geometry; sampled once per scene."""

    light_dir: tuple[float, float, float]
    light_colour: tuple[float, float, float]
    ambient: float
    shadow_softness: float
    table_texture: int
    table_kind: str
    table_tint: tuple[float, float, float]
    board_style: int
    piece_alpha: float
    exposure: float
    white_balance: tuple[float, float, float]
    blur_sigma: float
    noise_sigma: float
    jpeg_quality: int
    vignette: float
    extra: dict = field(default_factory=dict)

    def to_json(self) -> dict:
        out = {}
        for key, value in self.__dict__.items():
            if isinstance(value, tuple):
                value = [round(float(v), 4) for v in value]
            elif isinstance(value, float):
                value = round(value, 4)
            out[key] = value
        return out


@dataclass
class Scene:
    game: str
    seed: int
    board: Board | None
    objects: list[SceneObject]
    camera: Camera
    look: Look
    state: dict = field(default_factory=dict)

    @property
    def board_top(self) -> float:
        return self.board.thickness_mm if self.board is not None else 0.0
