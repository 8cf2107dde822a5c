"""The board and where it is: what to look for (`BoardSpec`, the board kinds, the coasters' colours),
where it was found (`BoardLocation`, `CellGeometry`, `board_outline`), why it was not (`BoardNotFound`),
and what each board kind's search hands the localiser (`_Found`; `_Hidden`: where a hand covers the frame).

Board-plane coordinates are millimetres: square boards have their origin at the outer corner
of a1 (x towards later files, y towards higher ranks); hex boards at the centre cell; the table
at the centre of marker 0.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import cv2
import numpy as np

from companion.vision.locate.geometry import SQRT3, _apply_h, _hex_centre


BOARD_KINDS = ("chess", "coasters", "hex", "table")


IMAGE_CORNERS = ("bottom-left", "bottom-right", "top-right", "top-left")


class BoardNotFound(ValueError):
    """No board of the requested kind could be located in the frame.

    Attributes:
        reason: a short code: 'too-dark', 'low-contrast', 'no-board', 'wrong-board-kind',
            'cut-by-frame', 'no-markers'.
    """

    def __init__(self, reason: str, detail: str):
        super().__init__(f"board not found ({reason}): {detail}")
        self.reason = reason
        self.detail = detail


COASTER_HUES = {"red": 0, "orange": 12, "yellow": 28, "green": 62, "cyan": 90, "blue": 112, "purple": 140}


@dataclass(frozen=True)
class BoardSpec:
    """What board to look for and its physical size.

    Attributes:
        kind: 'chess', 'coasters', 'hex' or 'table'.
        area: chess playing area as FILESxRANKS: '8x8', '6x6' or a half board '8x4' / '4x8'.
        area_origin: 0-based (file, rank) of the area's a1 cell on the 8x8 board; by default
            centred (6x6 is b2-g7) for square areas and at the a1 corner for halves.
        cell_mm: side of a square cell (chess 1.75 in; coasters about 27 mm).
        coaster_gap_mm: the gap between neighbouring coasters.
        coaster_colours: coaster colours at (a1 side left, a1 side right, far left, far right).
        hex_radius: rings around the centre cell of a hexagonal hex board.
        hex_mm: hex cell size, centre to corner.
        marker_mm: side of the ArUco marker (bare table).
        a1_hint: at set-up, the image corner nearest which a1 lies.
        a1_dark: a1 is a dark square on this chessboard (as on every standard chessboard).
    """

    kind: str = "chess"
    area: str = "8x8"
    area_origin: tuple[int, int] | None = None
    cell_mm: float = 44.45
    coaster_gap_mm: float = 8.0
    coaster_colours: tuple[str, str, str, str] = ("red", "yellow", "blue", "green")
    hex_radius: int = 3
    hex_mm: float = 20.0
    marker_mm: float = 50.0
    a1_hint: str = "bottom-left"
    a1_dark: bool = True

    def __post_init__(self) -> None:
        if self.kind not in BOARD_KINDS:
            raise ValueError(f"unknown board kind {self.kind!r} (expected one of: {', '.join(BOARD_KINDS)})")
        self.area_box  # validates the area
        if self.a1_hint not in IMAGE_CORNERS:
            raise ValueError(f"unknown a1 corner {self.a1_hint!r} (expected one of: {', '.join(IMAGE_CORNERS)})")
        for c in self.coaster_colours:
            if c not in COASTER_HUES:
                raise ValueError(f"unknown coaster colour {c!r} (expected one of: {', '.join(COASTER_HUES)})")
        if len(set(self.coaster_colours)) != 4:
            raise ValueError(f"coaster colours must be four different colours, got {self.coaster_colours}")
        if not 1 <= self.hex_radius <= 12:
            raise ValueError(f"hex radius {self.hex_radius} out of range 1-12")
        if min(self.cell_mm, self.hex_mm, self.marker_mm) <= 0 or self.coaster_gap_mm < 0:
            raise ValueError("board sizes must be positive")

    # Board-plane geometry -------------------------------------------------------------------

    @property
    def area_box(self) -> tuple[int, int, int, int]:
        """(first file, first rank, files, ranks) of the chess playing area on the 8x8 board."""
        files, sep, ranks = self.area.lower().partition("x")
        if not sep or not files.isdigit() or not ranks.isdigit() or not (1 <= int(files) <= 8 and 1 <= int(ranks) <= 8):
            raise ValueError(f"bad chess area {self.area!r} (expected FILESxRANKS within 8x8, e.g. 6x6 or 8x4)")
        nf, nr = int(files), int(ranks)
        if self.area_origin is None:
            f0, r0 = ((8 - nf) // 2, (8 - nr) // 2) if nf == nr else (0, 0)
        else:
            f0, r0 = self.area_origin
        if not (0 <= f0 and 0 <= r0 and f0 + nf <= 8 and r0 + nr <= 8):
            raise ValueError(f"chess area {self.area} at file {f0}, rank {r0} does not fit on the 8x8 board")
        return f0, r0, nf, nr

    @property
    def coaster_side_mm(self) -> float:
        return 3 * self.cell_mm

    def coaster_origin(self, index: int) -> tuple[float, float]:
        """Outer a1-side corner of coaster `index` (0 near-left, 1 near-right, 2 far-left, 3 far-right)."""
        step = self.coaster_side_mm + self.coaster_gap_mm
        return (index % 2) * step, (index // 2) * step

    def outline(self) -> np.ndarray:
        """The board's outer corners (4 for square boards, 6 for hex), a1's corner first where there is one."""
        if self.kind == "chess":
            return np.array([(0, 0), (8, 0), (8, 8), (0, 8)], float) * self.cell_mm
        if self.kind == "coasters":
            s = 2 * self.coaster_side_mm + self.coaster_gap_mm
            return np.array([(0, 0), (s, 0), (s, s), (0, s)], float)
        if self.kind == "hex":
            n, h = self.hex_radius, self.hex_mm
            corners = [_hex_centre(q, r, h) for q, r in ((-n, 0), (0, -n), (n, -n), (n, 0), (0, n), (-n, n))]
            # The outline's sides touch the outer cells' corners, 1.5 h n + h from the centre.
            grow = (n * SQRT3 * h + 2 * h / SQRT3) / (n * SQRT3 * h)
            return np.array(corners) * grow
        m = self.marker_mm / 2
        return np.array([(-m, -m), (m, -m), (m, m), (-m, m)], float)

    def cells(self) -> list[tuple[str, np.ndarray]]:
        """Every playing cell: its name and its polygon on the board plane (mm)."""
        if self.kind == "chess":
            f0, r0, nf, nr = self.area_box
            c = self.cell_mm
            return [(f"{chr(97 + f)}{r + 1}", np.array([(f0 + f, r0 + r), (f0 + f + 1, r0 + r), (f0 + f + 1, r0 + r + 1),
                                                      (f0 + f, r0 + r + 1)], float) * c)
                    for r in range(nr) for f in range(nf)]
        if self.kind == "coasters":
            out = []
            step = self.coaster_side_mm + self.coaster_gap_mm
            c = self.cell_mm
            for r in range(6):
                for f in range(6):
                    x0 = (f // 3) * step + (f % 3) * c
                    y0 = (r // 3) * step + (r % 3) * c
                    out.append((f"{chr(97 + f)}{r + 1}", np.array([(x0, y0), (x0 + c, y0), (x0 + c, y0 + c), (x0, y0 + c)])))
            return out
        if self.kind == "hex":
            n, h = self.hex_radius, self.hex_mm
            out = []
            # Named and ordered as companion/boards/hexgrid.py does (its r grows southwards, the
            # plane's y northwards): game axial (q', r') is plane axial (q' + r', -r').
            for game_r in range(-n, n + 1):
                for game_q in range(-n, n + 1):
                    if abs(game_q + game_r) <= n:
                        cx, cy = _hex_centre(game_q + game_r, -game_r, h)
                        poly = [(cx + h * math.cos(math.radians(30 + 60 * i)), cy + h * math.sin(math.radians(30 + 60 * i)))
                                for i in range(6)]
                        out.append((f"{game_q},{game_r}", np.array(poly)))
            return out
        return []

    @property
    def playing_corners(self) -> np.ndarray:
        """Outer corners of the playing area (a1's corner first), board-plane mm."""
        if self.kind == "chess":
            f0, r0, nf, nr = self.area_box
            return np.array([(f0, r0), (f0 + nf, r0), (f0 + nf, r0 + nr), (f0, r0 + nr)], float) * self.cell_mm
        return self.outline()

    def to_json(self) -> dict:
        return {"kind": self.kind, "area": self.area, "area_origin": list(self.area_box[:2]), "cell_mm": self.cell_mm, "coaster_gap_mm": self.coaster_gap_mm,
                "coaster_colours": list(self.coaster_colours), "hex_radius": self.hex_radius, "hex_mm": self.hex_mm,
                "marker_mm": self.marker_mm, "a1_hint": self.a1_hint, "a1_dark": self.a1_dark}


@dataclass(frozen=True)
class CellGeometry:
    name: str
    centre: tuple[float, float]
    polygon: tuple[tuple[float, float], ...]


@dataclass(frozen=True)
class BoardLocation:
    """Where the board is in one frame.

    Attributes:
        spec: the board that was located.
        homography: 3x3 matrix, board-plane mm -> image pixels (of the undistorted frame when
            `undistorted`), row by row.
        image_size: (width, height) of the frame.
        confidence: 0..1, the share of the board's cues that agreed with the fit.
        method: which cues found it ('lattice', 'coasters', 'marker', 'corner-markers', ...).
        undistorted: the frame was undistorted with the camera's intrinsics first.
        pose: (rvec, tvec) of the board plane in camera coordinates (mm), when intrinsics exist.
        cues: how many cues supported the fit.
        elapsed_ms: time the localisation took.
    """

    spec: BoardSpec
    homography: tuple[tuple[float, float, float], ...]
    image_size: tuple[int, int]
    confidence: float
    method: str
    undistorted: bool = False
    pose: tuple[tuple[float, ...], tuple[float, ...]] | None = None
    cues: int = 0
    elapsed_ms: float = 0.0

    @property
    def H(self) -> np.ndarray:  # noqa: N802
        return np.array(self.homography, float)

    def board_to_image(self, points: np.ndarray) -> np.ndarray:
        """Board-plane mm (N x 2) -> image pixels (N x 2)."""
        return _apply_h(self.H, np.asarray(points, float))

    def image_to_board(self, points: np.ndarray) -> np.ndarray:
        """Image pixels (N x 2) -> board-plane mm (N x 2)."""
        return _apply_h(np.linalg.inv(self.H), np.asarray(points, float))

    @property
    def corners(self) -> np.ndarray:
        """Image positions of the playing area's outer corners, a1's corner first."""
        return self.board_to_image(self.spec.playing_corners)

    def cells(self) -> list[CellGeometry]:
        """Every playing cell's name, centre and outline in the image."""
        out = []
        for name, poly in self.spec.cells():
            img = self.board_to_image(poly)
            centre = self.board_to_image(poly.mean(axis=0, keepdims=True))[0]
            out.append(CellGeometry(name, (float(centre[0]), float(centre[1])),
                                    tuple((float(x), float(y)) for x, y in img)))
        return out

    def cell_at(self, point: tuple[float, float]) -> str | None:
        """The playing cell under an image point (on the board plane), or None off the playing area."""
        bx, by = self.image_to_board(np.array([point], float))[0]
        for name, poly in self.spec.cells():
            if cv2.pointPolygonTest(poly.astype(np.float32), (float(bx), float(by)), False) >= 0:
                return name
        return None

    def to_json(self) -> dict:
        return {"board": self.spec.to_json(), "image_size": list(self.image_size),
                "homography": [list(r) for r in self.homography], "confidence": round(self.confidence, 4),
                "method": self.method, "undistorted": self.undistorted, "cues": self.cues,
                "elapsed_ms": round(self.elapsed_ms, 2),
                "corners": [[round(float(x), 2), round(float(y), 2)] for x, y in self.corners],
                "pose": None if self.pose is None else {"rvec": list(self.pose[0]), "tvec_mm": list(self.pose[1])},
                "cells": [{"name": c.name, "centre": [round(c.centre[0], 2), round(c.centre[1], 2)]} for c in self.cells()]}


def board_outline(location: BoardLocation) -> np.ndarray | None:
    """The board's outline in image pixels, or None for a bare table (whose "board" is a marker)."""
    if location.spec.kind == "table":
        return None
    return location.board_to_image(location.spec.outline())


@dataclass(frozen=True)
class _Found:
    confidence: float
    method: str
    cues: int
    candidates: list[np.ndarray]  # board mm -> full-frame px, one per orientation the board allows


@dataclass(frozen=True)
class _Hidden:
    """Where a hand covers the frame: `mask` holds the frame's pixels scaled by `scale`."""

    mask: np.ndarray
    scale: float

    def at(self, points: np.ndarray) -> np.ndarray:
        """Whether each of the frame's (x, y) pixels (N x 2) is covered; points off the frame are not."""
        xy = np.round(np.asarray(points, float) * self.scale).astype(int)
        h, w = self.mask.shape
        ok = (xy[:, 0] >= 0) & (xy[:, 0] < w) & (xy[:, 1] >= 0) & (xy[:, 1] < h)
        out = np.zeros(len(xy), bool)
        out[ok] = self.mask[xy[ok, 1], xy[ok, 0]]
        return out
