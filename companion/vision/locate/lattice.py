"""Lattice growing: the largest square or hexagonal lattice consistent with a set of cue points
(`grow_lattice`), grown from a seed cell ring by ring while a homography is refitted, so perspective
is followed without knowing it beforehand; and `_fit_h`, the least-squares homography the board
kinds fit with too.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import cv2
import numpy as np

from companion.vision.locate.config import LocateConfig
from companion.vision.locate.geometry import SQRT3, _apply_h


@dataclass(frozen=True)
class _Lattice:
    """A 2-D point lattice: integer indices -> plane coordinates in cell units."""

    basis: np.ndarray  # 2x2, columns are the plane vectors of index steps (1,0) and (0,1)
    steps: np.ndarray  # index steps to neighbours
    min_angle: float
    max_angle: float
    triangles: bool = False
    """Seed from three mutual neighbours (hex) instead of a whole cell of four points (square)."""

    def plane(self, idx: np.ndarray) -> np.ndarray:
        return idx @ self.basis.T


SQUARE_LATTICE = _Lattice(np.eye(2), np.array([(1, 0), (0, 1), (-1, 0), (0, -1), (1, 1), (-1, -1), (1, -1), (-1, 1)]),
                          55.0, 125.0)


HEX_LATTICE = _Lattice(np.array([[1.0, 0.5], [0.0, SQRT3 / 2]]),
                       np.array([(1, 0), (0, 1), (-1, 1), (-1, 0), (0, -1), (1, -1)]), 35.0, 85.0, True)


def _fit_h(src: np.ndarray, dst: np.ndarray) -> np.ndarray | None:
    """Least-squares homography by the normalised DLT (an affine map for three points).

    Called in the inner loop of lattice growing, where OpenCV's `findHomography` with its
    iterative refinement costs several times as much.
    """
    n = len(src)
    if n < 3:
        return None
    if n == 3:
        a, _ = cv2.estimateAffine2D(src, dst)
        return None if a is None else np.vstack([a, [0, 0, 1]])

    def normaliser(p: np.ndarray) -> np.ndarray:
        c = p.mean(0)
        d = np.sqrt(((p - c) ** 2).sum(1)).mean()
        k = math.sqrt(2) / d if d > 0 else 1.0
        return np.array([[k, 0, -k * c[0]], [0, k, -k * c[1]], [0, 0, 1]])

    ts, td = normaliser(src), normaliser(dst)
    a = src @ ts[:2, :2].T + ts[:2, 2]
    b = dst @ td[:2, :2].T + td[:2, 2]
    rows = np.zeros((2 * n, 9))
    rows[0::2, 0:2], rows[0::2, 2] = a, 1
    rows[0::2, 6:8], rows[0::2, 8] = -a * b[:, :1], -b[:, 0]
    rows[1::2, 3:5], rows[1::2, 5] = a, 1
    rows[1::2, 6:8], rows[1::2, 8] = -a * b[:, 1:], -b[:, 1]
    values, vectors = np.linalg.eigh(rows.T @ rows)
    if values[1] < 1e-12 * max(values[-1], 1e-300):
        return None  # the points are (nearly) collinear
    h = np.linalg.inv(td) @ vectors[:, 0].reshape(3, 3) @ ts
    return h / h[2, 2] if abs(h[2, 2]) > 1e-12 else None


class _CueMap:
    """The nearest cue to any point, looked up in a raster instead of measured to every cue.

    Scoring every cell guess against every cue costs (guesses x lattice points x cues)
    distances; a distance transform of the cue points answers each lookup by indexing.
    """

    SCALE = 0.5  # half resolution: the lookup only has to find the nearest cue, not measure it

    def __init__(self, pts: np.ndarray):
        self.pts = pts
        self.origin = pts.min(0) - 2
        xy = np.round((pts - self.origin) * self.SCALE).astype(int)
        w, h = xy.max(0) + 3
        seeds = np.ones((h, w), np.uint8)
        seeds[xy[:, 1], xy[:, 0]] = 0
        _, labels = cv2.distanceTransformWithLabels(seeds, cv2.DIST_L2, 5, labelType=cv2.DIST_LABEL_PIXEL)
        owner = np.zeros(labels.max() + 1, int)
        owner[labels[xy[:, 1], xy[:, 0]]] = np.arange(len(pts))  # cues on one pixel: one stands for all
        self.nearest_map = owner[labels]

    def nearest(self, q: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(index of the nearest cue, squared distance to it) for points q (... x 2). A point
        beyond the cues' extent is looked up at the raster's nearest edge: a cue near it is found
        (and its true distance given), though not always the nearest."""
        h, w = self.nearest_map.shape
        xy = np.round((q - self.origin) * self.SCALE).astype(int)
        index = self.nearest_map[np.clip(xy[..., 1], 0, h - 1), np.clip(xy[..., 0], 0, w - 1)]
        return index, ((self.pts[index] - q) ** 2).sum(-1)


def grow_lattice(pts: np.ndarray, lattice: _Lattice, config: LocateConfig, max_extent: int,
                 target: int) -> tuple[np.ndarray, np.ndarray] | None:
    """The largest lattice consistent with the cue points.

    A seed and two neighbours making a plausible cell (and, on squares, the cell's fourth point)
    give an affine guess of the lattice: on squares the strongest corners' guesses are tried
    first, on hexes those whose affine lattice puts cues on most of the nearby lattice points.
    Each grows ring by ring, refitting a homography each time, so perspective is followed without
    knowing it beforehand. Trying stops once a lattice holds `enough_fraction` of the target.

    Returns:
        (indices N x 2, matched image points N x 2), or None.
    """
    n = len(pts)
    if n < 4:
        return None
    d2 = ((pts[:, None, :] - pts[None, :, :]) ** 2).sum(-1)
    np.fill_diagonal(d2, np.inf)
    knn = np.argsort(d2, axis=1)[:, : config.neighbours]
    cues = _CueMap(pts)
    hyps = _seed_hypotheses(pts, knn, lattice, config, cues)
    if not hyps:
        return None
    order = np.arange(len(hyps))
    if lattice.triangles:
        # Hex cues are ordered by how typical a cell they are, which says little about a guess:
        # the guesses best supported by their neighbourhood go first. X-corners come strongest
        # first, and on squares the strongest corners' guesses stay first: the best supported
        # ones there are as often at the board's edge, where the border's corners join the lattice.
        support = _local_support(cues, np.array([ids[:3] for ids in hyps]), lattice, config.grow_tolerance)
        order = np.argsort(-support, kind="stable")
    best: tuple[np.ndarray, np.ndarray] | None = None
    in_best = np.zeros(n, bool)
    grown: list[dict[int, tuple[int, int]]] = []  # each lattice grown so far: cue -> its index
    steps = {(int(i), int(j)) for i, j in lattice.steps}
    tried = 0
    last_seed, skip_seed = -1, False
    for k in order:
        ids = hyps[k]
        if tried >= config.max_seeds:
            break
        if ids[0] != last_seed:  # a seed's guesses are all grown, or none (its second may grow fuller)
            if best is not None and len(best[0]) >= config.enough_fraction * target:
                break
            skip_seed = in_best[ids[0]] and len(best[0]) >= config.settled_fraction * target
            last_seed = ids[0]
        if skip_seed:
            continue  # a seed inside a large lattice grows the same lattice again
        if lattice.triangles and any(_neighbours_in(lattice_cues, ids, steps) for lattice_cues in grown):
            # The best supported guesses crowd where cues are dense, and a dense patch of the wrong
            # lattice (a grainy table) can outscore the board's own cells: each guess grown must
            # start a lattice not grown yet.
            continue
        tried += 1
        got = _grow(pts, lattice, config, max_extent, ids)
        if got is not None and len(got[0]) >= config.min_lattice_points:
            grown.append({int(pid): (int(i), int(j)) for (i, j), pid in zip(got[0], got[1])})
        if got is None or (best is not None and len(got[0]) <= len(best[0])):
            continue  # the tight fit below only removes points: it cannot win
        got = _tight(pts, lattice, config, got)
        if got is not None:
            got = _reduce_basis(pts, lattice, got)
        if got is not None and not lattice.triangles:
            got = _densify(pts, lattice, config, max_extent, got)
        if got is not None and (best is None or len(got[0]) > len(best[0])):
            best = got
            in_best[:] = False
            in_best[best[1]] = True
    return None if best is None else (best[0], pts[best[1]])


def _neighbours_in(lattice_cues: dict[int, tuple[int, int]], ids: list[int], steps: set[tuple[int, int]]) -> bool:
    """Whether a guess's seed and its two neighbours lie in a grown lattice, one step apart there."""
    if not all(pid in lattice_cues for pid in ids[:3]):
        return False
    i0, j0 = lattice_cues[ids[0]]
    return all((lattice_cues[pid][0] - i0, lattice_cues[pid][1] - j0) in steps for pid in ids[1:3])


def _seed_hypotheses(pts: np.ndarray, knn: np.ndarray, lattice: _Lattice, config: LocateConfig,
                     cues: _CueMap) -> list[list[int]]:
    """Each cue's two most cell-like guesses, in the cues' order: [seed, a, b] (hex: three mutual
    neighbours, an equilateral triangle in the plane) or [seed, a, b, a + b] (squares: a whole
    cell), the seed at index (0, 0), a at (1, 0), b at (0, 1)."""
    seeds = len(pts)
    lo, hi = math.cos(math.radians(lattice.max_angle)), math.cos(math.radians(lattice.min_angle))
    first, second = np.triu_indices(knn.shape[1], 1)
    seed = np.repeat(np.arange(seeds), len(first))
    a, b = knn[:seeds, first].ravel(), knn[:seeds, second].ravel()
    va, vb = pts[a] - pts[seed], pts[b] - pts[seed]
    la, lb = np.hypot(va[:, 0], va[:, 1]), np.hypot(vb[:, 0], vb[:, 1])
    with np.errstate(divide="ignore", invalid="ignore"):
        cos = (va * vb).sum(1) / (la * lb)
        ok = (la >= 3) & (lb >= 3) & (la / lb > 0.55) & (la / lb < 1.8) & (cos > lo) & (cos < hi)
        if lattice.triangles:
            third = 2 * np.hypot(*(va - vb).T) / (la + lb)
            ok &= (third > 0.7) & (third < 1.4)
    if lattice.triangles:
        badness, fourth = np.abs(cos - 0.5), None
    else:
        j, dd = cues.nearest(pts[seed[ok]] + va[ok] + vb[ok])
        close = dd <= (config.grow_tolerance * np.minimum(la[ok], lb[ok])) ** 2
        close &= (j != seed[ok]) & (j != a[ok]) & (j != b[ok])
        fourth = np.full(len(seed), -1)
        fourth[np.flatnonzero(ok)] = np.where(close, j, -1)
        ok &= fourth >= 0
        badness = np.abs(cos)
    out = []
    pairs = len(first)
    for s in range(seeds):
        rows = np.flatnonzero(ok[s * pairs:(s + 1) * pairs]) + s * pairs
        for r in rows[np.argsort(badness[rows], kind="stable")][:2]:
            ids = [s, int(a[r]), int(b[r])]
            out.append(ids if fourth is None else ids + [int(fourth[r])])
    return out


# Index steps within two of a lattice point: where an affine guess is still close to the truth,
# and where the shortest image steps of a grown lattice are looked for.
_STEPS = np.array([(i, j) for i in range(-2, 3) for j in range(-2, 3) if (i, j) != (0, 0)], float)


def _local_support(cues: _CueMap, triples: np.ndarray, lattice: _Lattice, tolerance: float) -> np.ndarray:
    """For each guess (seed, a, b), how many lattice points near the seed have a cue where its
    affine lattice puts them: a guess from a real cell of the board finds most of them."""
    steps = _STEPS
    if lattice.triangles:  # hex: only points within two steps (i, j, -i-j all small)
        steps = steps[np.abs(steps.sum(1)) <= 2]
    pts = cues.pts
    p = pts[triples[:, 0]]
    u, v = pts[triples[:, 1]] - p, pts[triples[:, 2]] - p
    pred = p[:, None, :] + steps[None, :, 0, None] * u[:, None, :] + steps[None, :, 1, None] * v[:, None, :]
    cell = np.minimum(np.hypot(u[:, 0], u[:, 1]), np.hypot(v[:, 0], v[:, 1]))
    _, d2 = cues.nearest(pred)
    return (d2 < (tolerance * cell[:, None]) ** 2).sum(1)


def _reduce_basis(pts: np.ndarray, lattice: _Lattice, got: tuple[np.ndarray, np.ndarray]) -> tuple[np.ndarray, np.ndarray]:
    """Re-indexes a lattice whose index steps are not the shortest cell steps in the image.

    Any two lattice vectors with determinant 1 index every point, and a homography absorbs the
    shear, so a seed on a long diagonal still grows a consistent lattice; its cell names would be
    wrong. The shortest steps seen in the image are the true neighbours.
    """
    idx, ids = got
    if len(idx) < 6:
        return got
    h = _fit_h(lattice.plane(idx.astype(float)), pts[ids])
    if h is None:
        return got
    centre = lattice.plane(idx.mean(0, keepdims=True))
    base = _apply_h(h, centre)[0]
    vecs = _apply_h(h, centre + lattice.plane(_STEPS)) - base
    lengths = np.hypot(vecs[:, 0], vecs[:, 1])
    order = np.argsort(lengths)
    u = _STEPS[order[0]]
    for k in order[1:]:
        v = _STEPS[k]
        if abs(u[0] * v[1] - u[1] * v[0]) == 1:
            if float(vecs[order[0]] @ vecs[k]) < 0:
                v = -v
            break
    else:
        return got
    m = np.array([u, v]).T
    if np.allclose(m, np.eye(2)):
        return got
    new = np.rint(idx @ np.linalg.inv(m).T).astype(int)
    return new, ids


def _densify(pts: np.ndarray, lattice: _Lattice, config: LocateConfig, max_extent: int,
             got: tuple[np.ndarray, np.ndarray]) -> tuple[np.ndarray, np.ndarray]:
    """A lattice that took every other row (or column) for its step is refined to the full one."""
    idx, ids = got
    for axis in (0, 1):
        # Nearly all points on one parity of an index: the lattice's step there was half a cell
        # (a stray cue from a piece may sit on the other parity).
        odd = idx[:, axis] % 2 == 1
        if len(idx) >= 6 and min(odd.mean(), 1 - odd.mean()) <= 0.1:
            keep = odd if odd.mean() > 0.5 else ~odd
            idx, ids = idx[keep], ids[keep]
            idx[:, axis] = (idx[:, axis] - idx[:, axis].min()) // 2
    for axis in (0, 1):
        if len(idx) < 6:
            break
        plane = lattice.plane(idx.astype(float))
        h = _fit_h(plane, pts[ids])
        if h is None:
            break  # the points kept are all in one row: no plane to refine them on
        off = np.zeros(2)
        off[axis] = 0.5
        pred = _apply_h(h, lattice.plane(idx + off))
        half = np.hypot(*(pred - _apply_h(h, plane)).T)
        dd = ((pred[:, None, :] - pts[None, :, :]) ** 2).sum(-1)
        dd[:, ids] = np.inf
        near = np.argmin(dd, axis=1)
        ok = dd[np.arange(len(idx)), near] < (config.grow_tolerance * half) ** 2
        if ok.sum() < 0.7 * len(idx):
            continue
        seed = {}
        for k, pid in zip(idx, ids):
            kk = k.copy()
            kk[axis] *= 2
            seed[tuple(kk)] = int(pid)
        for k, pid, good in zip(idx, near, ok):
            if good and int(pid) not in seed.values():
                kk = k.copy()
                kk[axis] = 2 * kk[axis] + 1
                seed[tuple(kk)] = int(pid)
        keys = np.array(list(seed))
        span = keys.max(0) - keys.min(0)
        if span.max() > max_extent:
            continue
        regrown = _grow(pts, lattice, config, max_extent, seed)
        if regrown is not None:
            regrown = _tight(pts, lattice, config, regrown)
        if regrown is not None and len(regrown[0]) > 1.3 * len(idx):
            idx, ids = regrown
    return idx, ids


def _grow(pts: np.ndarray, lattice: _Lattice, config: LocateConfig, max_extent: int,
          seed: list[int] | dict[tuple[int, int], int]) -> tuple[np.ndarray, np.ndarray] | None:
    # Index space is a (2E+1)^2 grid around the seed; a list seed is p=(0,0), a=(1,0), b=(0,1)
    # and a+b=(1,1). Candidates are the lattice points next to matched ones (or two steps away
    # when none is found), so the lattice also grows past a covered cell (a hand, a pyramid).
    e = max_extent + 1
    if not isinstance(seed, dict):
        seed = dict(zip(((0, 0), (1, 0), (0, 1), (1, 1)), seed))
    base = np.array(list(seed)).min(0)
    owner = np.full((2 * e + 1, 2 * e + 1), -1, np.int32)
    for (i, j), pid in seed.items():
        owner[i - base[0] + e, j - base[1] + e] = pid
    used = np.zeros(len(pts), bool)
    used[list(seed.values())] = True
    grid_i, grid_j = np.meshgrid(np.arange(-e, e + 1), np.arange(-e, e + 1), indexing="ij")
    reach = 1
    for _ in range(6 * max_extent):
        matched = owner >= 0
        ii, jj = np.nonzero(matched)
        keys = np.stack([ii - e, jj - e], 1).astype(float)
        h = _fit_h(lattice.plane(keys), pts[owner[ii, jj]])
        if h is None:
            return None
        # Step by one lattice point while that finds cues; jump two only when it does not, so a
        # jump is predicted by a homography already fitted to many points.
        kernel = np.ones((2 * reach + 1, 2 * reach + 1), np.uint8)
        near = cv2.dilate(matched.astype(np.uint8), kernel).astype(bool) & ~matched
        lo, hi = keys.max(0) - max_extent, keys.min(0) + max_extent
        near &= (grid_i >= lo[0]) & (grid_i <= hi[0]) & (grid_j >= lo[1]) & (grid_j <= hi[1])
        ci, cj = np.nonzero(near)
        ok = np.zeros(0, bool)
        if len(ci):
            cand = np.stack([ci - e, cj - e], 1).astype(float)
            pred = _apply_h(h, lattice.plane(cand))
            step = _apply_h(h, lattice.plane(cand + [1.0, 0.0])) - pred
            cell = np.hypot(step[:, 0], step[:, 1])
            dd = ((pred[:, None, :] - pts[None, :, :]) ** 2).sum(-1)
            dd[:, used] = np.inf
            best = np.argmin(dd, axis=1)
            dist = dd[np.arange(len(cand)), best]
            ok = dist < (config.grow_tolerance * cell) ** 2
        if not ok.any():
            if reach == 1 and len(keys) >= 5:
                reach = 2
                continue
            break
        reach = 1
        # Two lattice points may claim one cue: the nearer wins.
        taken = set()
        for k in np.argsort(dist):
            if ok[k] and best[k] not in taken:
                taken.add(int(best[k]))
                owner[ci[k], cj[k]] = best[k]
        used[list(taken)] = True
    ii, jj = np.nonzero(owner >= 0)
    return np.stack([ii - e, jj - e], 1).astype(int), owner[ii, jj]


def _tight(pts: np.ndarray, lattice: _Lattice, config: LocateConfig,
           got: tuple[np.ndarray, np.ndarray]) -> tuple[np.ndarray, np.ndarray] | None:
    idx, ids = got
    img = pts[ids]
    if len(idx) < 6:
        return idx, ids
    # A lattice grown from a bad seed collects cues loosely; only points that one homography
    # explains tightly count, so a wrong lattice scores low however many cues it touched.
    plane = lattice.plane(idx.astype(float))
    h = _fit_h(plane, img)
    if h is None:
        return None
    step = _apply_h(h, plane + lattice.basis[:, 0]) - _apply_h(h, plane)
    cell = float(np.median(np.hypot(step[:, 0], step[:, 1])))
    h, mask = cv2.findHomography(plane, img, cv2.RANSAC, max(1.0, config.lattice_fit_cells * cell),
                                 maxIters=config.lattice_fit_iterations)
    if h is None:
        return None
    keep = mask.ravel().astype(bool)
    return idx[keep], ids[keep]
