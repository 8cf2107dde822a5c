"""The hex grid: the cells between the grid's lines (dark or light lines, found by a ridge filter),
grown as a triangular lattice; light cells on dark gaps as a second cue; the board's outline as the
last resort. The radius-n board is placed on the lattice positions that look most like cells.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable
from dataclasses import replace

import cv2
import numpy as np

from companion.vision.locate.board import BoardNotFound, BoardSpec, _Found, _Hidden
from companion.vision.locate.config import LocateConfig
from companion.vision.locate.cues import hex_centre_cues, light_cell_cues, line_responses
from companion.vision.locate.geometry import (SQRT3, _apply_h, _hex_centre, _hex_rotation, _jacobian_det, _outside,
                                              _polygon_from_contour, _scale_h)
from companion.vision.locate.lattice import HEX_LATTICE, _fit_h, grow_lattice


class _NoHexLattice(BoardNotFound):
    """The cell cues grew no lattice at all (as against a lattice too small, or a board cut by the
    picture's edge)."""

    def __init__(self, detail: str):
        super().__init__("no-board", detail)


def _locate_hex(gray: np.ndarray, scale: float, spec: BoardSpec, config: LocateConfig,
                hidden: _Hidden | None = None, colour: np.ndarray | None = None) -> _Found:
    """The hex board (`_locate_hex_in`); where its cells grew no lattice at all and nothing else
    placed it, looked for once more in the picture with its local contrast equalised (CLAHE): on an
    overexposed white board, or white paper on a white table, the hairlines are a few grey levels
    deep, too faint for the ridge filter and the cells' shapes, and equalising deepens them. A
    lattice so found must explain `hex_equalised_min_confidence` of the cells: equalising deepens
    the table's grain too. The first search's reason is the one reported."""
    try:
        return _locate_hex_in(gray, scale, spec, config, hidden, colour)
    except _NoHexLattice as first:
        if config.hex_equalised_clip <= 0:
            raise
        clahe = cv2.createCLAHE(clipLimit=config.hex_equalised_clip, tileGridSize=(8, 8))
        try:
            found = _locate_hex_in(clahe.apply(gray), scale, spec, config, hidden, colour)
        except BoardNotFound:
            raise first from None
        if found.method != "outline" and found.confidence < config.hex_equalised_min_confidence:
            raise first from None
        return found


def _locate_hex_in(gray: np.ndarray, scale: float, spec: BoardSpec, config: LocateConfig,
                   hidden: _Hidden | None = None, colour: np.ndarray | None = None) -> _Found:
    """The hex board from its lines (either polarity, at full and then half resolution); when
    that finds little, also from light cells ringed by darker lines (boards drawn with wide dark
    gaps between the cells); when neither finds a lattice, from the board's outline. `hidden`:
    where a hand covers the frame (see `_place_hex_board`); `colour`: the BGR frame, when there is
    one, for outlines that show in colour only."""

    def at(factor: float) -> Callable[[], _Found]:
        small = gray if factor == 1 else cv2.resize(gray, None, fx=factor, fy=factor, interpolation=cv2.INTER_AREA)
        return lambda: _locate_hex_by_lines(small, scale * factor, spec, config, hidden)

    found, error = _first_good_enough((at(f) for f in config.hex_line_scales), config.hex_retry_below)
    if found is not None and found.confidence >= config.hex_fallback_below:
        return found
    # Light cells are wide regions: a coarser copy finds them as well, in less time.
    coarse = min(1.0, config.hex_light_cell_width / gray.shape[1])
    small = cv2.resize(gray, None, fx=coarse, fy=coarse, interpolation=cv2.INTER_AREA) if coarse < 1 else gray
    try:
        other = _locate_hex_by_light_cells(small, scale * coarse, spec, config, hidden)
    except BoardNotFound:
        if found is not None:
            return found
        # No lattice at all: lines too faint to close the cells (hairlines on white paper). The
        # board's own outline, a hexagon standing out from the table, places it instead.
        try:
            return _locate_hex_by_outline(gray, scale, spec, config, colour)
        except BoardNotFound:
            raise error from None
    return other if found is None or other.confidence > found.confidence else found


def _locate_hex_by_outline(gray: np.ndarray, scale: float, spec: BoardSpec, config: LocateConfig,
                           colour: np.ndarray | None = None) -> _Found:
    """The hex board from its outline: a six-sided region standing out from the table, its corners
    in the directions of the corner cells (a hexagon of hexes). The margin between the outline and
    the cells is unknown, so the cells are placed by trying each margin and keeping the one whose
    cell sides fall on the picture's lines (and whose cell middles do not).

    The region is looked for in the grey picture and, when no outline there places the cells and
    the colour frame is given, in its plainness (255 - saturation): white paper on a lamp-lit beige
    table is no lighter than the table's brightest patch, but it is much less coloured (Ice Arena
    render 5097). Only then: offered beside the grey outlines, a plainness outline won render 5053
    on wrong cells."""
    responses = line_responses(gray, config.hex_line_sigma)
    line_masks = [_near_a_line(resp, config) for resp in responses]
    hexagons = _board_hexagons(gray, config)
    best = _best_outline_fit(hexagons, line_masks, spec, config)
    if (best is None or best[0] < config.hex_outline_min_score) and colour is not None and colour.ndim == 3:
        small = cv2.resize(colour, (gray.shape[1], gray.shape[0]), interpolation=cv2.INTER_AREA)
        plain = _board_hexagons(255 - cv2.cvtColor(small, cv2.COLOR_BGR2HSV)[..., 1], config)
        best = _best_outline_fit(plain, line_masks, spec, config) or best
    if best is None or best[0] < config.hex_outline_min_score:
        faint = [cv2.dilate((resp > config.hex_outline_faint_line_strength).astype(np.uint8), np.ones((3, 3), np.uint8))
                 .astype(bool) for resp in responses]
        best = _best_outline_fit(hexagons, faint, spec, config) or best
    if best is None or best[0] < config.hex_outline_min_score:
        raise BoardNotFound("no-board", "no hex lattice, and no board outline whose cells match the picture's lines")
    n = spec.hex_radius
    hf = _scale_h(best[1], 1 / scale)
    return _Found(min(1.0, best[0]), "outline", 3 * n * (n + 1) + 1, [hf @ _hex_rotation(k6) for k6 in range(6)])


def _outline_view(outline_mm: np.ndarray, hexagon: np.ndarray,
                  max_residual: float) -> tuple[np.ndarray, np.ndarray] | None:
    """(the hexagon's corners in the board outline's order, board mm -> pixels) when the hexagon is a
    view of the board's outline: a regular hexagon in perspective, seen from above, its corners within
    `max_residual` of its size of that view's; else None."""
    size = math.sqrt(max(cv2.contourArea(hexagon.astype(np.float32)), 1.0))
    for ordered in (hexagon, hexagon[::-1]):
        h0 = _fit_h(outline_mm, ordered)
        if h0 is None or _jacobian_det(h0, np.zeros(2)) > 0:
            continue  # the camera sees the board from above: the mirror order is not a view
        if np.abs(_apply_h(h0, outline_mm) - ordered).max() <= max_residual * size:
            return ordered, h0
    return None  # not a regular hexagon in perspective: not the board's outline


def _best_outline_fit(hexagons: list[np.ndarray], line_masks: list[np.ndarray], spec: BoardSpec,
                      config: LocateConfig) -> tuple[float, np.ndarray] | None:
    """(score, board mm -> work pixels) of the best placement of the cells inside any of the
    outlines, over the margins tried; None when no outline is a hexagon in perspective."""
    n = spec.hex_radius
    cells = np.array([_hex_centre(q, r, spec.hex_mm) for q in range(-n, n + 1) for r in range(-n, n + 1)
                      if abs(q + r) <= n])
    angles = np.radians(30 + 60 * np.arange(7))
    corners = spec.hex_mm * np.stack([np.cos(angles), np.sin(angles)], 1)
    t = np.array([0.3, 0.5, 0.7])[:, None, None]
    on_sides = (cells[None, None] + (corners[None, :-1] + t * (corners[None, 1:] - corners[None, :-1]))[:, :, None]
                ).reshape(-1, 2)
    inside = (cells[None] + 0.45 * corners[:-1, None]).reshape(-1, 2)
    outline_mm = spec.outline()
    best = None
    for hexagon in hexagons:
        view = _outline_view(outline_mm, hexagon, config.hex_outline_max_residual)
        if view is None:
            continue
        ordered = view[0]
        for on_line in line_masks:
            for grow in np.arange(1.0, config.hex_outline_max_margin, 0.005):
                h = _fit_h(outline_mm * grow, ordered)
                score = _share_on(on_line, _apply_h(h, on_sides)) - _share_on(on_line, _apply_h(h, inside))
                if best is None or score > best[0]:
                    best = (score, h)
    return best


def _near_a_line(line_strength: np.ndarray, config: LocateConfig) -> np.ndarray:
    """Pixels within one of a line: stronger than `hex_line_fraction` of the frame's strongest lines."""
    peak = float(np.percentile(line_strength[::3, ::3], 99.7))  # a sample is enough, and much cheaper
    on_line = line_strength > max(config.hex_min_line_strength, config.hex_line_fraction * peak)
    return cv2.dilate(on_line.astype(np.uint8), np.ones((3, 3), np.uint8)).astype(bool)


def _share_on(mask: np.ndarray, points: np.ndarray) -> float:
    xy = np.round(points).astype(int)
    h, w = mask.shape
    ok = (xy[:, 0] >= 0) & (xy[:, 0] < w) & (xy[:, 1] >= 0) & (xy[:, 1] < h)
    return float(mask[xy[ok, 1], xy[ok, 0]].sum()) / max(1, len(xy))


def _board_hexagons(gray: np.ndarray, config: LocateConfig) -> list[np.ndarray]:
    """Six-cornered convex regions, lighter or darker than what surrounds them, a sizeable share of
    the picture: candidate board outlines (corners in work-image pixels, in contour order)."""
    f = min(1.0, config.hex_outline_width / gray.shape[1])
    small = cv2.resize(gray, None, fx=f, fy=f, interpolation=cv2.INTER_AREA) if f < 1 else gray
    blur = cv2.GaussianBlur(small, (5, 5), 0)
    _, light = cv2.threshold(blur, 0, 255, cv2.THRESH_BINARY + cv2.THRESH_OTSU)
    out = []
    for mask in (light, 255 - light):
        # Close over the lines and the pieces standing on the board.
        mask = cv2.morphologyEx(mask, cv2.MORPH_CLOSE, cv2.getStructuringElement(cv2.MORPH_ELLIPSE, (9, 9)))
        for contour in cv2.findContours(mask, cv2.RETR_EXTERNAL, cv2.CHAIN_APPROX_NONE)[0]:
            area = cv2.contourArea(contour)
            if not config.hex_outline_min_area * mask.size <= area <= 0.9 * mask.size:
                continue
            if area < 0.8 * cv2.contourArea(cv2.convexHull(contour)):
                continue
            hexagon = _polygon_from_contour(contour.reshape(-1, 2).astype(np.float64), corners=6)
            if hexagon is not None:
                out.append(hexagon / f)
    return out


def _hex_lattice(pts: np.ndarray, n: int, config: LocateConfig,
                 target: int) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Grows a hex lattice over cell cues for a radius-n board.

    Returns (lattice indices, their image points, the lattice-plane -> image homography, every
    lattice position within n + 1 of the cues, as candidates for the board's cells).
    """
    total = 3 * n * (n + 1) + 1
    got = grow_lattice(pts, HEX_LATTICE, replace(config, max_seeds=config.hex_max_seeds), max_extent=2 * n, target=target)
    if got is None or len(got[0]) < max(config.min_lattice_points, total // 4):
        found = 0 if got is None else len(got[0])
        raise _NoHexLattice(f"no hex lattice: {len(pts)} cell cues, at most {found} in a lattice")
    idx, img = got
    h = _fit_h(HEX_LATTICE.plane(idx.astype(float)), img)
    if _jacobian_det(h, HEX_LATTICE.plane(idx.mean(0, keepdims=True))[0]) > 0:
        idx = idx[:, ::-1].copy()
    h = _fit_h(HEX_LATTICE.plane(idx.astype(float)), img)
    qs, rs = idx[:, 0], idx[:, 1]
    gq, gr = np.meshgrid(np.arange(qs.min() - n - 1, qs.max() + n + 2), np.arange(rs.min() - n - 1, rs.max() + n + 2),
                         indexing="ij")
    return idx, img, h, np.stack([gq.ravel(), gr.ravel()], 1).astype(float)


def _place_hex_board(gray: np.ndarray, scale: float, spec: BoardSpec, config: LocateConfig, idx: np.ndarray,
                     img: np.ndarray, pos: np.ndarray, cellness: np.ndarray, total: int,
                     hidden: _Hidden | None = None) -> _Found:
    """Places the radius-n board on the lattice positions with the most cellness and fits its view.

    Both hex cues (grid lines, light cells) end here; they differ only in how they score cellness.
    A hand over an edge row makes the true board and one moved a row away from the hand score
    alike (the moved one takes in the board's dark rim, which shows lines too); placements that
    close are told apart by the board's outline, which is an edge in the picture only where the
    board really ends (`_hex_placement_by_outline`); else the one centred on what was seen wins.
    """
    n = spec.hex_radius
    qs, rs = idx[:, 0], idx[:, 1]
    cellness = cellness.copy()
    cellness[(pos.astype(int)[:, None, :] == idx[None, :, :]).all(2).any(1)] = 1.0  # the lattice's own cells
    mid = idx.mean(0)
    # Every centre (cq, cr) near the lattice, scored by the cellness of the radius-n hexagon round it.
    cq, cr = np.meshgrid(np.arange(qs.min() - n, qs.max() + n + 1), np.arange(rs.min() - n, rs.max() + n + 1),
                         indexing="ij")
    centres = np.stack([cq.ravel(), cr.ravel()], 1)
    dq, dr = pos[None, :, 0] - centres[:, :1], pos[None, :, 1] - centres[:, 1:]
    within = np.maximum(np.maximum(abs(dq), abs(dr)), abs(dq + dr)) <= n
    sums = np.where(within, cellness[None, :], 0.0).sum(1)
    offs = ((centres - mid) ** 2).sum(1)
    scored = sorted(((round(float(v), 1), -float(o), int(q), int(r)) for v, o, (q, r) in zip(sums, offs, centres)),
                    reverse=True)
    best = scored[0]
    close = [c for c in scored[:6] if c[0] >= best[0] - config.hex_placement_tie]
    if len(close) > 1:
        best = (_hex_placement_by_centre(gray, spec, config, idx, img, close)
                or _hex_placement_by_outline(gray, scale, spec, config, idx, img, close, hidden)
                or best)
    cq, cr = best[2], best[3]
    dq, dr = qs - cq, rs - cr
    inside = np.maximum(np.maximum(abs(dq), abs(dr)), abs(dq + dr)) <= n
    k = int(inside.sum())
    if k < 4:
        raise BoardNotFound("no-board", f"only {k} hex cells on the board")
    board_idx = (idx - [cq, cr])[inside].astype(float)
    src = np.array([_hex_centre(q, r, spec.hex_mm) for q, r in board_idx])
    hf, mask = cv2.findHomography(src, img[inside] / scale, cv2.RANSAC, 2.0 / scale)
    if hf is None:
        raise BoardNotFound("no-board", "the hex lattice could not be fitted")
    inl = mask.ravel().astype(bool)
    if inl.sum() < 4:
        raise BoardNotFound("no-board", f"only {int(inl.sum())} hex cells agree on one view")
    hexagon = np.array([(spec.hex_mm * 0.93 * math.cos(math.radians(30 + 60 * i)),
                         spec.hex_mm * 0.93 * math.sin(math.radians(30 + 60 * i))) for i in range(6)])
    cue_img = img[inside][inl] / scale
    src = src[inl]
    hf, _ = cv2.findHomography(src, cue_img, 0)
    # A blob's centroid is not the image of the cell's centre under perspective (the near half
    # looks bigger): predict that offset from the fitted view and take it out, then refit.
    for _ in range(2):
        seen = _apply_h(hf, (hexagon[None] + src[:, None, :]).reshape(-1, 2)).reshape(len(src), len(hexagon), 2)
        bias = _polygon_centroids(seen) - _apply_h(hf, src)
        hf, _ = cv2.findHomography(src, cue_img - bias, 0)
    outline = _apply_h(hf, spec.outline()) * scale
    if _outside(outline, gray.shape, config.frame_margin_px):
        if inl.sum() < total / 2:
            # Few cells, extrapolated past the picture: more likely not a hex board at all.
            raise BoardNotFound("no-board", f"only {int(inl.sum())} of {total} hex cells seen, and a board "
                                            "fitted to them would run past the picture's edge")
        raise BoardNotFound("cut-by-frame", "the hex board runs past the edge of the picture")
    cands = [hf @ _hex_rotation(k6) for k6 in range(6)]
    return _Found(min(1.0, inl.sum() / total), "lattice", int(inl.sum()), cands)


def _first_good_enough(attempts: Iterable[Callable[[], _Found]],
                       enough: float) -> tuple[_Found | None, BoardNotFound | None]:
    """Runs the attempts in order until one reaches `enough` confidence; (the most confident
    fit, the first failure's reason). Later attempts are costlier or less likely: they run only
    when the ones before them fell short."""
    best, error = None, None
    for attempt in attempts:
        try:
            found = attempt()
        except BoardNotFound as exc:
            error = error or exc
            continue
        if best is None or found.confidence > best.confidence:
            best = found
        if best.confidence >= enough:
            break
    return best, error


def _hex_placement_by_centre(gray: np.ndarray, spec: BoardSpec, config: LocateConfig, idx: np.ndarray,
                             img: np.ndarray, candidates: list[tuple]) -> tuple | None:
    """Of near-equal placements (cellness, centring, cq, cr), the one centred where a hexagonal
    region of the picture the board's size (its paper or print round the cells) has its centre:
    the board is printed in the middle of it. None when no such region is in view (a hand over
    its edge, paper of another shape) or its centre is on no candidate.

    Pieces and their shadows leave placements a ring apart within a fraction of a cell's cellness
    (Ice Arena referee render 5050: 31.0, 31.0 and 30.8 for the true one), while the outline of the
    board's dark surround is plain to see and its centre lands on the board's to a pixel."""
    to_image, _ = cv2.findHomography(HEX_LATTICE.plane(idx.astype(float)), img, 0)
    if to_image is None:
        return None
    to_lattice = np.linalg.inv(to_image)
    n = spec.hex_radius
    # The board's own outline has its corners n + 1/sqrt(3) cell spacings from the centre.
    reach = n + 1 / SQRT3
    outline_mm = spec.outline()
    for hexagon in _board_hexagons(gray, config):
        view = _outline_view(outline_mm, hexagon, config.hex_centre_outline_max_residual)
        if view is None:
            continue
        h0 = view[1]
        corners = _apply_h(to_lattice, hexagon)
        centre = _apply_h(to_lattice, _apply_h(h0, np.zeros((1, 2))))[0]
        spread = float(np.hypot(*(corners - centre).T).mean())
        if not 0.9 * reach <= spread <= config.hex_outline_max_margin * reach * 1.1:
            continue
        for candidate in candidates:
            middle = HEX_LATTICE.plane(np.array([candidate[2:4]], float))[0]
            if np.hypot(*(middle - centre)) <= config.hex_centre_tolerance:
                return candidate
    return None


def _hex_placement_by_outline(gray: np.ndarray, scale: float, spec: BoardSpec, config: LocateConfig, idx: np.ndarray,
                              img: np.ndarray, candidates: list[tuple], hidden: _Hidden | None,
                              switch_ratio: float = 1.5) -> tuple | None:
    """Of near-equal placements (cellness, centring, cq, cr; the best first), one whose board
    outline runs along clearly stronger edges of the picture than the first's; None when the first stands.

    A placement's outline is its cells' own outline or the edge of the plate they are printed on, a
    margin out (up to `hex_outline_max_margin`): each placement is judged at the margin where its
    outline lies on the strongest edges (the median of a smoothed Sobel magnitude along it, points under
    a hand left out). At the cells' own outline only, a board plate a cell wider than the grid misled:
    the placement a row off had its outline on the plate's edge on one side (Ice Arena renders 7063,
    7148), while the true board's plate edge all round was never looked at (referee 6074, 6096, 6153)."""
    to_image, _ = cv2.findHomography(HEX_LATTICE.plane(idx.astype(float)), img, 0)
    if to_image is None:
        return None
    blur = cv2.GaussianBlur(gray, (0, 0), 1.0).astype(np.float32)
    edges = cv2.magnitude(cv2.Sobel(blur, cv2.CV_32F, 1, 0), cv2.Sobel(blur, cv2.CV_32F, 0, 1))
    # The strongest edge within a pixel or two of each point: the fitted lattice is not exact.
    near = cv2.dilate(edges, np.ones((5, 5), np.uint8))
    corners = spec.outline()
    t = (np.arange(12) + 0.5) / 12
    ring = np.concatenate([a + t[:, None] * (b - a) for a, b in zip(corners, np.roll(corners, -1, axis=0))])
    ring = ring / (spec.hex_mm * SQRT3)  # in lattice units round the board's centre
    margins = np.arange(1.0, config.hex_outline_max_margin + 1e-9, config.hex_outline_margin_step)
    centres = HEX_LATTICE.plane(np.array([c[2:4] for c in candidates], float))
    # Every candidate's outline at every margin: candidates x margins x points.
    lattice = margins[None, :, None, None] * ring[None, None] + centres[:, None, None, :]
    px = _apply_h(to_image, lattice.reshape(-1, 2))
    xy = np.round(px).astype(int)
    gh, gw = gray.shape
    seen = (xy[:, 0] >= 0) & (xy[:, 0] < gw) & (xy[:, 1] >= 0) & (xy[:, 1] < gh)
    if hidden is not None:
        covered = hidden.at(px / scale)
        # A board or table of skin's colour (wood, beige card) fills the hand mask: then it says nothing
        # (Ice Arena referee render 6098, no hand, 70 % of the board "under a hand").
        if not seen.any() or covered[seen].mean() <= config.hex_hand_mask_max_share:
            seen &= ~covered
    edge = np.zeros(len(xy), np.float32)
    edge[seen] = near[xy[seen, 1], xy[seen, 0]]
    seen, edge = seen.reshape(lattice.shape[:3]), edge.reshape(lattice.shape[:3])
    medians = _masked_medians(edge, seen)
    # Outlines too little in view to judge by are passed over.
    judged = seen.sum(2) >= len(ring) // 3
    if not judged.any(1).all():
        return None
    scores = [float(m[j].max()) for m, j in zip(medians, judged)]
    # The most cellness stays unless another outline is clearly on an edge and clearly more so
    # (early attempts on a poor lattice put every outline on nothing in particular).
    k = int(np.argmax(scores))
    if scores[k] >= max(config.hex_outline_min_edge, switch_ratio * scores[0]):
        return candidates[k]
    return None


def _masked_medians(values: np.ndarray, mask: np.ndarray) -> np.ndarray:
    """The median of each row's values where `mask` holds, along the last axis (NaN where none
    does): np.median row by row, in one sort."""
    ordered = np.sort(np.where(mask, values, np.inf), axis=-1)
    count = mask.sum(-1)
    low = np.take_along_axis(ordered, np.maximum((count - 1) // 2, 0)[..., None], -1)[..., 0]
    high = np.take_along_axis(ordered, np.maximum(count // 2, 0)[..., None], -1)[..., 0]
    return np.where(count > 0, (low + high) / 2, np.nan)


def _locate_hex_by_lines(gray: np.ndarray, scale: float, spec: BoardSpec, config: LocateConfig,
                         hidden: _Hidden | None = None) -> _Found:
    def fit(pts: np.ndarray, line_strength: np.ndarray) -> Callable[[], _Found]:
        return lambda: _hex_board_from_line_cues(gray, scale, spec, config, pts, line_strength, hidden)

    best, error = _first_good_enough((fit(pts, strength) for pts, strength, _ in hex_centre_cues(gray, config)),
                                     config.hex_retry_below)
    if best is None:
        raise error or BoardNotFound("no-board", "no hex grid lines found")
    return best


def _hex_board_from_line_cues(gray: np.ndarray, scale: float, spec: BoardSpec, config: LocateConfig,
                              pts: np.ndarray, line_strength: np.ndarray, hidden: _Hidden | None = None) -> _Found:
    n = spec.hex_radius
    total = 3 * n * (n + 1) + 1
    # Pieces hide cells: a lattice that explains nearly every cue found is good enough to stop at.
    idx, img, h, pos = _hex_lattice(pts, n, config, min(total, len(pts)))
    # Every lattice position near the lattice gets a "cellness": the share of its six sides that
    # show a line (a cell inside the board ~ 1; beyond its edge at most the one or two sides
    # shared with the outer cells). The board is the radius-n hexagon of positions with the most
    # cellness, which also counts cells whose region was torn by a piece.
    plane = HEX_LATTICE.plane(pos)
    neighbours = HEX_LATTICE.plane(HEX_LATTICE.steps.astype(float))
    along = np.stack([-neighbours[:, 1], neighbours[:, 0]], 1) / SQRT3
    # Three points along each side (its middle and either side of it), half-way to each neighbour;
    # the side shows a line when `hex_side_points` of them are on one.
    offsets = (0.5 * neighbours[:, None, :] + np.array([-0.3, 0.0, 0.3])[None, :, None] * along[:, None, :])
    side_px = _apply_h(h, (plane[:, None, :] + offsets.reshape(1, -1, 2)).reshape(-1, 2))
    on_line = _near_a_line(line_strength, config)
    gh, gw = gray.shape
    xy = np.round(side_px).astype(int)
    ok = (xy[:, 0] >= 0) & (xy[:, 0] < gw) & (xy[:, 1] >= 0) & (xy[:, 1] < gh)
    hit = np.zeros(len(xy), bool)
    hit[ok] = on_line[xy[ok, 1], xy[ok, 0]]
    sides = (hit.reshape(len(pos), 6, 3).sum(2) >= config.hex_side_points).mean(1)
    cellness = np.where(sides >= config.hex_min_cellness, sides, 0.0)
    return _place_hex_board(gray, scale, spec, config, idx, img, pos, cellness, total, hidden)


def _locate_hex_by_light_cells(gray: np.ndarray, scale: float, spec: BoardSpec, config: LocateConfig,
                               hidden: _Hidden | None = None) -> _Found:
    pts = light_cell_cues(gray, config)
    n = spec.hex_radius
    total = 3 * n * (n + 1) + 1
    idx, img, h, pos = _hex_lattice(pts, n, config, total)
    # Every lattice position near the lattice gets a "cellness": light centre against the dark
    # lines at its corners (paper ~ +1, table or a hand ~ 0). The board is the radius-n hexagon
    # of positions with the most cellness, which also counts cells whose blob was torn by a piece.
    centres = _apply_h(h, HEX_LATTICE.plane(pos))
    ring = np.array([(math.cos(math.radians(30 + 60 * i)), math.sin(math.radians(30 + 60 * i))) for i in range(6)])
    ring *= 1 / SQRT3  # cell corners in lattice units (centre spacing 1)
    corner_px = _apply_h(h, (HEX_LATTICE.plane(pos)[:, None, :] + ring[None] * 0.92).reshape(-1, 2))
    blur = cv2.GaussianBlur(gray, (0, 0), 1.5).astype(np.float32)
    gh, gw = gray.shape

    def sample(p: np.ndarray) -> np.ndarray:
        xy = np.round(p).astype(int)
        ok = (xy[:, 0] >= 0) & (xy[:, 0] < gw) & (xy[:, 1] >= 0) & (xy[:, 1] < gh)
        out = np.full(len(p), np.nan, np.float32)
        out[ok] = blur[xy[ok, 1], xy[ok, 0]]
        return out

    corner_vals = sample(corner_px).reshape(-1, 6)
    seen = ~np.isnan(corner_vals)
    # Positions whose corners are all off the picture get NaN and count as no evidence.
    corner_mean = np.where(seen.any(1), np.nansum(corner_vals, 1) / np.maximum(seen.sum(1), 1), np.nan)
    contrast = sample(centres) - corner_mean
    matched_set = {tuple(k) for k in idx}
    is_matched = np.array([tuple(k) in matched_set for k in pos.astype(int)])
    scale_c = float(np.nanmedian(contrast[is_matched])) if is_matched.any() else 1.0
    # A piece over a cell darkens its centre: that is no evidence against a cell, so no negatives.
    cellness = np.nan_to_num(np.clip(contrast / max(scale_c, 1e-3), 0, 1), nan=0.0)
    return _place_hex_board(gray, scale, spec, config, idx, img, pos, cellness, total, hidden)


def _polygon_centroids(polys: np.ndarray) -> np.ndarray:
    """Area centroids of polygons (N x corners x 2)."""
    x, y = polys[..., 0], polys[..., 1]
    xn, yn = np.roll(x, -1, axis=1), np.roll(y, -1, axis=1)
    cross = x * yn - xn * y
    area = cross.sum(1) / 2
    flat = np.abs(area) < 1e-12  # a degenerate view of a cell: no better centre to offer than the corners' mean
    safe = np.where(flat, 1.0, area)
    centroid = np.stack([((x + xn) * cross).sum(1), ((y + yn) * cross).sum(1)], 1) / (6 * safe[:, None])
    return np.where(flat[:, None], polys.mean(1), centroid)
