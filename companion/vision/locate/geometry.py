"""Small plane-geometry helpers of board localisation: mapping points through a homography, turning a
board about its centre, a cell's size in pixels, whether an outline runs past the picture, and the
polygon of a few sides that outlines a region's contour (a coaster, a hex board's edge)."""

from __future__ import annotations

import math

import cv2
import numpy as np


SQRT3 = math.sqrt(3.0)


def _hex_centre(q: float, r: float, h: float) -> tuple[float, float]:
    return h * SQRT3 * (q + r / 2), h * 1.5 * r


def _apply_h(h: np.ndarray, pts: np.ndarray) -> np.ndarray:
    p = pts.reshape(-1, 2) @ h[:, :2].T + h[:, 2]
    # A wild trial homography (seeded on clutter) may send points to infinity: they come back
    # inf or nan and match no cue, which is the right outcome, so numpy need not warn.
    with np.errstate(divide="ignore", invalid="ignore"):
        return p[:, :2] / p[:, 2:3]


def _rows(m: np.ndarray) -> tuple[tuple[float, float, float], ...]:
    return tuple(tuple(float(v) for v in row) for row in m)


def _board_rotation(quarter: int, side: float) -> np.ndarray:
    """Board-plane map that turns the board `quarter` quarter-turns about its centre (composed on the right)."""
    c = side / 2
    a = math.radians(90 * quarter)
    r = np.array([[round(math.cos(a)), -round(math.sin(a))], [round(math.sin(a)), round(math.cos(a))]], float)
    m = np.eye(3)
    m[:2, :2] = r
    m[:2, 2] = np.array([c, c]) - r @ np.array([c, c])
    return m


def _hex_rotation(sixth: int) -> np.ndarray:
    a = math.radians(60 * sixth)
    m = np.eye(3)
    m[:2, :2] = [[math.cos(a), -math.sin(a)], [math.sin(a), math.cos(a)]]
    return m


def _scale_h(h: np.ndarray, scale: float) -> np.ndarray:
    """A board->full-image homography expressed for the work image (or back with 1/scale)."""
    return np.diag([scale, scale, 1.0]) @ h


def _jacobian_det(h: np.ndarray, at: np.ndarray) -> float:
    p = np.array([at[0], at[1], 1.0])
    w = h[2] @ p
    j = (h[:2, :2] * w - np.outer(h[:2] @ p, h[2, :2])) / (w * w)
    return float(np.linalg.det(j))


def _cell_px(h: np.ndarray) -> float:
    p = _apply_h(h, np.array([[3.0, 3.0], [4.0, 3.0], [3.0, 4.0]]))
    return float(min(np.hypot(*(p[1] - p[0])), np.hypot(*(p[2] - p[0]))))


def _mean_side(polygon: np.ndarray) -> float:
    """Mean length of a closed polygon's sides (pixels)."""
    return float(np.mean(np.hypot(*(np.roll(polygon, -1, axis=0) - polygon).T)))


def _outside(corners: np.ndarray, shape: tuple[int, ...], margin: float) -> bool:
    h, w = shape[:2]
    return bool(np.any(corners[:, 0] < -margin) or np.any(corners[:, 1] < -margin)
                or np.any(corners[:, 0] > w - 1 + margin) or np.any(corners[:, 1] > h - 1 + margin))


def _polygon_from_contour(contour: np.ndarray, corners: int = 4) -> np.ndarray | None:
    """The convex polygon of `corners` sides that outlines a region's contour (a board's edge)."""
    hull = cv2.convexHull(contour.astype(np.float32)).reshape(-1, 2).astype(np.float64)
    peri = cv2.arcLength(hull.astype(np.float32), True)
    poly = cv2.approxPolyDP(hull.astype(np.float32), 0.012 * peri, True).reshape(-1, 2).astype(np.float64)
    # A hand or piece over a corner cuts it off: the hull then has a short extra side. Keep the
    # longest sides (after joining nearly collinear ones) and intersect them.
    sides = [(poly[i], poly[(i + 1) % len(poly)]) for i in range(len(poly))]
    merged: list[list[np.ndarray]] = []
    for a, b in sides:
        if merged:
            pa, pb = merged[-1]
            d1, d2 = pb - pa, b - a
            cos = float(d1 @ d2) / (np.hypot(*d1) * np.hypot(*d2) + 1e-9)
            if cos > math.cos(math.radians(12)):
                merged[-1] = [pa, b]
                continue
        merged.append([a, b])
    if len(merged) > 1:
        pa, pb = merged[0]
        qa, qb = merged[-1]
        d1, d2 = pb - pa, qb - qa
        if float(d1 @ d2) / (np.hypot(*d1) * np.hypot(*d2) + 1e-9) > math.cos(math.radians(12)):
            merged[0] = [qa, pb]
            merged.pop()
    if len(merged) < corners:
        return None
    lengths = [float(np.hypot(*(b - a))) for a, b in merged]
    keep = sorted(np.argsort(lengths)[-corners:])
    approx = []
    for k in range(corners):
        (a1, b1), (a2, b2) = merged[keep[k - 1]], merged[keep[k]]
        m = np.array([b1 - a1, -(b2 - a2)]).T
        if abs(np.linalg.det(m)) < 1e-6:
            return None
        t = np.linalg.solve(m, a2 - a1)
        approx.append(a1 + t[0] * (b1 - a1))
    approx = np.array(approx)
    # Fit each side to the contour points near it: robust to bites out of the edge and to bumps.
    lines = []
    for i in range(corners):
        p, q = approx[i], approx[(i + 1) % corners]
        d = q - p
        length = float(np.hypot(*d))
        nrm = np.array([-d[1], d[0]]) / length
        t = (contour - p) @ d / (length * length)
        dist = np.abs((contour - p) @ nrm)
        near = contour[(t > 0.12) & (t < 0.88) & (dist < max(2.0, 0.03 * length))]
        if len(near) < 8:
            lines.append((p, d / length))
            continue
        vx, vy, x0, y0 = cv2.fitLine(near.astype(np.float32), cv2.DIST_HUBER, 0, 0.01, 0.01).ravel()
        lines.append((np.array([x0, y0], float), np.array([vx, vy], float)))
    out = []
    for i in range(corners):
        (p1, d1), (p2, d2) = lines[i - 1], lines[i]
        m = np.array([d1, -d2]).T
        if abs(np.linalg.det(m)) < 1e-6:
            return None
        t = np.linalg.solve(m, p2 - p1)
        out.append(p1 + t[0] * d1)
    return np.array(out)
