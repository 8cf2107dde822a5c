"""Martian Coasters: the four coloured coasters, each a quadrilateral whose sides are fitted robustly;
sixteen labelled corners give the homography, the coasters' colours judge it, and their sides are
looked for again at full resolution. Also the hand mask (skin not of the table's colour) that leaves
a hand's pixels out of judging a board (the hex search uses it too).
"""

from __future__ import annotations

import itertools
import math

import cv2
import numpy as np

from companion.vision.locate.board import COASTER_HUES, BoardNotFound, BoardSpec, _Found
from companion.vision.locate.config import LocateConfig
from companion.vision.locate.geometry import _apply_h, _outside, _polygon_from_contour, _scale_h
from companion.vision.locate.lattice import _fit_h
from companion.vision.sizing import view_misfit
from companion.vision.tracker import skin_mask


class _CoastersApart(BoardNotFound):
    """Two or more coaster-coloured squares were found, but they make no board."""

    def __init__(self, detail: str):
        super().__init__("no-board", detail)


def _coaster_masks(image: np.ndarray, spec: BoardSpec, config: LocateConfig) -> list[list[np.ndarray]]:
    """Per coaster position, masks of pixels of that coaster's colour: the whole hue band, and
    (when its saturations spread widely) the band's more saturated part only."""
    hsv = cv2.cvtColor(image, cv2.COLOR_BGR2HSV)
    hue, sat, val = cv2.split(hsv)
    lit = (sat >= config.coaster_min_saturation) & (val >= config.coaster_min_value)
    close = np.ones((5, 5), np.uint8)
    table_hue = _table_hue(hue, lit, config)
    masks = []
    for colour in spec.coaster_colours:
        dh = _hue_distance(hue, COASTER_HUES[colour])
        candidates = lit & (dh <= config.coaster_hue_tolerance)
        variants = [cv2.morphologyEx(candidates.astype(np.uint8) * 255, cv2.MORPH_CLOSE, close)]
        if table_hue is not None and _hue_distance(np.array(table_hue), COASTER_HUES[colour]) \
                <= config.coaster_hue_tolerance + config.coaster_table_hue_width:
            # The table's grain merges with the coaster into one region reaching the picture's edges,
            # which is no coaster: without the table's own hues the coaster stands apart.
            apart = candidates & (_hue_distance(hue, table_hue) > config.coaster_table_hue_width)
            variants.append(cv2.morphologyEx(apart.astype(np.uint8) * 255, cv2.MORPH_CLOSE, close))
        # Skin, wood or a pale print of the same hue is usually less saturated than the coaster,
        # but a printed coaster's own lines and pieces of its colour are more saturated than its
        # faces: both splits are offered and each coaster keeps the one that outlines a square.
        if candidates.sum() > 50:
            otsu, _ = cv2.threshold(sat[candidates].reshape(-1, 1), 0, 255, cv2.THRESH_BINARY + cv2.THRESH_OTSU)
            spread = float(np.percentile(sat[candidates], 95) - np.percentile(sat[candidates], 5))
            if spread > config.coaster_saturation_split:
                split = (candidates & (sat >= otsu)).astype(np.uint8) * 255
                variants.append(cv2.morphologyEx(split, cv2.MORPH_CLOSE, close))
        masks.append(variants)
    return masks


def _hue_distance(hue: np.ndarray, centre: int) -> np.ndarray:
    d = np.abs(hue.astype(np.int16) - centre)
    return np.minimum(d, 180 - d)


def _table_hue(hue: np.ndarray, lit: np.ndarray, config: LocateConfig) -> int | None:
    """The hue most of the frame shows (a coloured table's), or None when no hue is that common."""
    counts = np.bincount(hue[lit], minlength=180).astype(float)
    width = config.coaster_table_hue_width
    near = sum(np.roll(counts, k) for k in range(-width, width + 1))
    mode = int(np.argmax(near))
    return mode if near[mode] >= config.coaster_table_hue_share * hue.size else None


def _coaster_quads(masks: list[list[np.ndarray]], config: LocateConfig,
                   others: dict[int, list[np.ndarray]] | None = None) -> dict[int, np.ndarray]:
    """Image corners of each coaster found, keyed by its position index (0-3); `others` receives
    the other outlines its colour offers (a card or a piece of the same colour beside the board,
    or the coaster itself when a saturated piece of its colour was taken for it), for the
    caller to weigh."""
    others = {} if others is None else others
    min_area = config.coaster_min_area_fraction * masks[0][0].size
    quads = {}
    for pos, variants in enumerate(masks):
        passing = []
        for order, mask in enumerate(variants):
            for rank, quad in enumerate(_coaster_candidates(mask, min_area)):
                # A coaster fills its outline; a table of the same hue, or only the lines, does not.
                if abs(cv2.contourArea(quad.astype(np.float32))) < min_area:
                    continue
                poly = np.zeros_like(mask)
                cv2.fillConvexPoly(poly, np.round(quad).astype(np.int32), 255)
                fill = float(cv2.countNonZero(cv2.bitwise_and(mask, poly))) / max(1.0, float(cv2.countNonZero(poly)))
                if fill >= config.coaster_min_fill:
                    passing.append((rank > 0, -order, quad))
        if not passing:
            continue
        # All regions together first. Then the saturated split (offered second) whenever it fills
        # its outline: the whole band then holds skin or wood as well. When it does not, it kept
        # only the coaster's printed lines (or pieces), and the whole band is the coaster.
        passing.sort(key=lambda c: c[:2])
        quads[pos] = passing[0][2]
        others[pos] = [c[2] for c in passing[1:1 + config.coaster_max_alternatives]]
    return quads


def _second_look_views(masks: list[list[np.ndarray]], quads: dict[int, np.ndarray], trusted: dict[int, np.ndarray],
                       others: dict[int, list[np.ndarray]], spec: BoardSpec, config: LocateConfig,
                       shape: tuple[int, ...]) -> list[np.ndarray]:
    """More views, from the outlines the coasters' colours give once their regions are cut apart or
    filled in (`_parted_outlines`): each pair of outlines with at least one offered or so taken,
    and the consensus with one coaster's outline swapped for one so taken."""
    parted = _parted_outlines(masks, quads, others, config)
    candidates = {pos: ([trusted[pos]] if pos in trusted else [])
                  + [q for q in others.get(pos, []) + parted.get(pos, []) if not _on_picture_edge(q, shape)]
                  for pos in range(4)}
    views = []
    for a, b in itertools.combinations(range(4), 2):
        for k, (qa, qb) in enumerate(itertools.product(candidates[a], candidates[b])):
            if k == 0 and a in trusted and b in trusted:
                continue  # the two found outlines: among the first look's views
            if not _could_be_neighbours(qa, qb) or not _pair_nearly_fits({a: qa, b: qb}, spec):
                continue
            hs = _coaster_subset_homography({a: qa, b: qb}, spec, config)
            if hs is not None:
                views.append(hs)
    for pos, outlines in parted.items():
        for quad in outlines:
            swapped = {**quads, pos: quad}
            # Fewer samples than the first look's: a consensus its outlines all but make is wanted
            # here, and the many swaps of a frame without a board would cost 5 ms each.
            hs = _coaster_consensus(swapped, spec, max_iters=200) if len(swapped) >= 2 else None
            if hs is not None:
                views.append(hs)
    return views


def _could_be_neighbours(a: np.ndarray, b: np.ndarray) -> bool:
    """Whether two outlines could be two coasters of one board: of like size (a board seen at a
    slant shrinks its far coasters, but not to a third), their middles a side or a diagonal apart.
    Cheap, and most pairs of the second look fail it."""
    area_a, area_b = abs(cv2.contourArea(a.astype(np.float32))), abs(cv2.contourArea(b.astype(np.float32)))
    if min(area_a, area_b) < 0.33 * max(area_a, area_b):
        return False
    apart = float(np.linalg.norm(a.mean(axis=0) - b.mean(axis=0))) / math.sqrt(0.5 * (area_a + area_b))
    return 0.6 <= apart <= 2.2


def _pair_nearly_fits(quads: dict[int, np.ndarray], spec: BoardSpec, tolerance: float = 0.15) -> bool:
    """Whether, in some turn of the first outline, the view its corners alone give puts the second
    coaster within `tolerance` of a side of some turn of the second outline: a quick test (four
    exact views from four corners) before the pair's sixteen least-squares fits, which most pairs
    of the second look would fail."""
    (src_a, dst_a), (src_b, dst_b) = (pairs := _coaster_pairs(quads, spec))[min(pairs)], pairs[max(pairs)]
    side_px = math.sqrt(abs(cv2.contourArea(dst_a.astype(np.float32))))
    turns_b = np.stack([np.roll(dst_b, turn, axis=0) for turn in range(4)])
    for turn in range(4):
        h = cv2.getPerspectiveTransform(src_a.astype(np.float32), np.roll(dst_a, turn, axis=0).astype(np.float32))
        predicted = _apply_h(h, src_b)
        if np.hypot(*(turns_b - predicted).transpose(2, 0, 1)).mean(axis=1).min() < tolerance * side_px:
            return True
    return False


def _parted_outlines(masks: list[list[np.ndarray]], quads: dict[int, np.ndarray], others: dict[int, list[np.ndarray]],
                     config: LocateConfig) -> dict[int, list[np.ndarray]]:
    """Per coaster position, the outlines its colour's regions give once cut apart or filled in
    (`_separated_outlines`) that are not already found or offered; rougher, for making views only."""
    min_area = config.coaster_min_area_fraction * masks[0][0].size
    parted = {}
    for pos, variants in enumerate(masks):
        known = ([quads[pos]] if pos in quads else []) + others.get(pos, [])
        parted[pos] = []
        # The whole hue band only: its saturated part is a part of it, and cutting that apart
        # too found nothing more on the renders while costing as much again.
        for quad in sorted(_separated_outlines(variants[:1], min_area, config),
                           key=lambda q: -abs(cv2.contourArea(q.astype(np.float32)))):
            if len(parted[pos]) == config.coaster_max_alternatives:
                break
            if not any(np.abs(quad - np.roll(k, t, axis=0)).max() < 3.0 for k in known for t in range(4)):
                parted[pos].append(quad)
                known.append(quad)
    return parted


def _separated_outlines(variants: list[np.ndarray], min_area: float, config: LocateConfig) -> list[np.ndarray]:
    """Outlines a coaster's colour offers once its regions are cut apart or filled in.

    Opened: a card or piece of the coaster's colour touching it at a corner or an edge merges with
    it into one region that outlines no square, and opening cuts the narrow bridge between them.
    Filled: a pale coaster whose face falls outside its colour's band shows only its printed grid,
    which encloses the squares, so the grid's region with its holes filled is the coaster."""
    side = max(3, int(config.coaster_separation * math.sqrt(min_area)) | 1)
    kernel = cv2.getStructuringElement(cv2.MORPH_RECT, (side, side))
    out = []
    for mask in variants:
        opened = cv2.morphologyEx(mask, cv2.MORPH_OPEN, kernel)
        filled = np.zeros_like(mask)
        cv2.drawContours(filled, cv2.findContours(mask, cv2.RETR_EXTERNAL, cv2.CHAIN_APPROX_SIMPLE)[0], -1, 255,
                         cv2.FILLED)
        for region in (opened, filled):
            for quad in _coaster_candidates(region, min_area):
                if abs(cv2.contourArea(quad.astype(np.float32))) < min_area:
                    continue
                poly = np.zeros_like(mask)
                cv2.fillConvexPoly(poly, np.round(quad).astype(np.int32), 255)
                inside = float(cv2.countNonZero(cv2.bitwise_and(region, poly)))
                if inside / max(1.0, float(cv2.countNonZero(poly))) >= config.coaster_min_fill:
                    out.append(quad)
    return out


def _coaster_candidates(mask: np.ndarray, min_area: float) -> list[np.ndarray]:
    """Outlines a coaster of this colour could have: first all large regions together (an arm
    across a coaster splits it in two), then each large region alone (a card or a piece of the
    same colour beside the board). A region reaching two edges of the picture is the table (or a
    coaster cut off at a corner of the picture, which no whole board has)."""
    n, labels, stats, _ = cv2.connectedComponentsWithStats(mask, connectivity=8)
    gh, gw = mask.shape
    x, y, w, h, areas = (stats[1:, k] for k in range(5))
    edges = (x <= 0).astype(int) + (y <= 0) + (x + w >= gw) + (y + h >= gh)
    large = np.nonzero(edges < 2)[0]
    if not len(large) or areas[large].max() < min_area:
        return []
    parts = [1 + k for k in large if areas[k] >= 0.2 * areas[large].max()]

    def outline(k: int) -> np.ndarray:
        # Within the region's bounding box only: a frame has many regions, and the whole frame's
        # mask per region cost more than the rest of the search.
        bx, by, bw, bh = stats[k, :4]
        region = (labels[by:by + bh, bx:bx + bw] == k).astype(np.uint8)
        found = cv2.findContours(region, cv2.RETR_EXTERNAL, cv2.CHAIN_APPROX_NONE, offset=(int(bx), int(by)))[0]
        return max(found, key=cv2.contourArea).reshape(-1, 2).astype(np.float64)

    contours = {k: outline(k) for k in parts}
    groups = [parts] + ([[k] for k in sorted(parts, key=lambda k: -areas[k - 1])] if len(parts) > 1 else [])
    quads = [_polygon_from_contour(np.vstack([contours[k] for k in group])) for group in groups]
    return [q for q in quads if q is not None]


def _locate_coasters(image: np.ndarray, scale: float, spec: BoardSpec, config: LocateConfig) -> _Found:
    if image.ndim != 3:
        raise BoardNotFound("wrong-board-kind", "the coasters are found by colour; the frame has none")
    masks = _coaster_masks(image, spec, config)
    others: dict[int, list[np.ndarray]] = {}
    quads = _coaster_quads(masks, config, others)
    # A table (or cloth) of a coaster's colour fills that colour's mask inside and outside any
    # board alike: it tells nothing, so the other colours judge alone.
    telling = [[m for m in variants if cv2.countNonZero(m) < config.coaster_table_fraction * m.size]
               for variants in masks]
    judge = telling if sum(bool(v) for v in telling) >= 2 else masks
    # Where a hand covers a coaster, the right board shows no colour and a board shrunk off the hand
    # shows nothing wrong: the hand's pixels are left out of the judging.
    hand = _hand_mask(image, config)
    # A coaster the picture's edge cuts has the edge for a side: the sets of coasters tried are
    # of whole ones when two or more are whole (the refit below still uses the cut one's corners
    # that are its own).
    whole = {pos: quad for pos, quad in quads.items() if not _on_picture_edge(quad, image.shape)}
    trusted = whole if len(whole) >= 2 else quads
    consensus = _coaster_consensus(quads, spec) if len(quads) >= 2 else None
    hyps = _coaster_views(quads, trusted, others, consensus, spec, config)
    scores = [_colour_agreement(hh, judge, spec, hand) for hh in hyps]
    chosen = _best_coaster_view(hyps, scores, consensus is not None, quads, others, judge, hand, spec, config,
                                image.shape)
    if config.coaster_second_look_below > 0 and (chosen is None or chosen[1] < config.coaster_second_look_below):
        # A card of a coaster's colour touching the coaster, or a pale coaster showing only its
        # printed grid, leaves no outline of it among those found. Only where the first look is
        # unsure, as this costs about as much again.
        more = _second_look_views(masks, quads, trusted, others, spec, config, image.shape)
        if more:
            scores += [_colour_agreement(hh, judge, spec, hand) for hh in more]
            chosen = _best_coaster_view(hyps + more, scores, consensus is not None, quads, others, judge, hand, spec,
                                        config, image.shape)
    if _refused(chosen, image.shape, config):
        # A hand over most of the board may leave one coaster whole and the others' outlines bent:
        # that coaster's four corners alone give the board in four turns, which the others' colours judge.
        singles = _single_coaster_views(whole, spec)
        if singles:
            alone = _best_coaster_view(singles, [_colour_agreement(hh, judge, spec, hand) for hh in singles], False,
                                       quads, others, judge, hand, spec, config, image.shape)
            if not _refused(alone, image.shape, config) and alone[1] >= config.coaster_single_min_agreement:
                chosen = alone
    if chosen is None:
        if len(quads) < 2:
            raise BoardNotFound("no-board", f"found {len(quads)} of the four coasters "
                                            f"({', '.join(spec.coaster_colours)}); need at least two")
        raise _CoastersApart("the coasters do not form one board")
    h, agreement = chosen
    if agreement < config.coaster_min_agreement:
        raise _CoastersApart(f"the coloured regions do not form a Martian Coasters board (colour agreement {agreement:.2f})")
    # Coasters a hand half hides can bend the fit into a quadrilateral no camera sees the square
    # board as, and still agree with the colours left in view.
    misfit = view_misfit(h, (image.shape[1], image.shape[0]))
    if misfit > config.coaster_max_view_misfit:
        raise _CoastersApart(f"the coloured regions make no view of a square board (misfit {misfit:.2f})")
    supported = 4 * len(quads)
    # The coasters' colours say which board this is even when a corner of it is cut off, so the
    # board is refused only when a cell could not be watched: when a cell's middle is out of view.
    middles = np.array([polygon.mean(axis=0) for _, polygon in spec.cells()])
    if _outside(_apply_h(h, middles), image.shape, config.frame_margin_px):
        raise BoardNotFound("cut-by-frame", "the coasters run past the edge of the picture")
    hf = _scale_h(h, 1.0 / scale)
    return _Found(min(1.0, agreement), "coasters", supported, [hf])


def _refused(chosen: tuple[np.ndarray, float] | None, shape: tuple[int, ...], config: LocateConfig) -> bool:
    """Whether a chosen (view, colour agreement) would be refused as no board."""
    return (chosen is None or chosen[1] < config.coaster_min_agreement
            or view_misfit(chosen[0], (shape[1], shape[0])) > config.coaster_max_view_misfit)


def _single_coaster_views(whole: dict[int, np.ndarray], spec: BoardSpec) -> list[np.ndarray]:
    """The board's view from each whole coaster's corners alone, in each of its four turns."""
    views = []
    for pos, quad in whole.items():
        ordered = _clockwise_on_screen(quad)
        board = _coaster_corners(spec, pos)
        for turn in range(4):
            views.append(cv2.getPerspectiveTransform(board.astype(np.float32),
                                                     np.roll(ordered, turn, axis=0).astype(np.float32)))
    return views


def _coaster_views(quads: dict[int, np.ndarray], trusted: dict[int, np.ndarray], others: dict[int, list[np.ndarray]],
                   consensus: np.ndarray | None, spec: BoardSpec, config: LocateConfig) -> list[np.ndarray]:
    """The views the coasters found make: the corner consensus of them all first; then each set of
    two or more of the trusted ones (a hand may have bent two outlines the same way); then the
    consensus with one coaster's outline swapped for another region of its colour (a card or a
    piece beside the board)."""
    hyps = [] if consensus is None else [consensus]
    found = sorted(trusted)
    # The consensus took every coaster found; the sets go down from all but one of them, or
    # from all the whole ones when the edge cuts some. Two coasters side by side are a set of two
    # even when they are all that was found: the consensus matches their corners by the pair's
    # middle, which two of their corners are equally near, and only a pair's view tries every turn.
    largest = len(found) if len(trusted) < len(quads) or len(found) == 2 else len(found) - 1
    for k in range(largest, 1, -1):
        for subset in itertools.combinations(found, k):
            hs = _coaster_subset_homography({p: trusted[p] for p in subset}, spec, config)
            if hs is not None:
                hyps.append(hs)
    for pos, alternatives in others.items():
        for quad in alternatives:
            hs = _coaster_consensus({**quads, pos: quad}, spec)
            if hs is not None:
                hyps.append(hs)
    return hyps


def _best_coaster_view(hyps: list[np.ndarray], scores: list[float], consensus_first: bool,
                       quads: dict[int, np.ndarray], others: dict[int, list[np.ndarray]],
                       judge: list[list[np.ndarray]], hand: np.ndarray | None, spec: BoardSpec, config: LocateConfig,
                       shape: tuple[int, ...]) -> tuple[np.ndarray, float] | None:
    """(view, colour agreement) of the view the colours judge best (`scores`, the views' colour
    agreements), refitted to the coasters that agree with it; the consensus (`hyps[0]` when
    `consensus_first`) is kept unless another fits the colours clearly better. None without views."""
    if not hyps:
        return None
    best = int(np.argmax(scores))
    if consensus_first and scores[best] < scores[0] + config.coaster_switch_margin:
        best = 0
    h, agreement = hyps[best], scores[best]
    refined = _refit_to_agreeing_coasters(h, quads, others, spec, shape)
    if refined is not None:
        refined_agreement = _colour_agreement(refined, judge, spec, hand)
        if refined_agreement >= agreement - config.coaster_switch_margin:
            h, agreement = refined, refined_agreement
    return h, agreement


def _coaster_sides_refined(h: np.ndarray, image: np.ndarray, spec: BoardSpec, config: LocateConfig) -> np.ndarray:
    """`h` (board mm -> full-resolution pixels) refitted to the coasters' sides as the full-resolution
    picture shows them: along each side, the strongest colour step within `coaster_edge_search` of
    where `h` puts it; a line through each side's steps; each coaster's corners where its lines
    meet. Coasters with a side that does not show (a hand, a piece, the picture's edge) are left
    out; with fewer than two coasters left, or a refit that moves the board's corners by more than
    twice the search's reach, `h` is kept."""
    if image.ndim != 3:
        return h
    outline = _apply_h(h, spec.outline())
    side_px = float(np.mean([np.linalg.norm(outline[i] - outline[i - 1]) for i in range(4)]))
    reach = max(3.0, config.coaster_edge_search * side_px)
    steps = np.arange(-reach, reach + 0.5, 0.5)
    along = np.linspace(0.12, 0.88, 12)[:, None]  # twelve profiles per side, clear of its corners
    board_pts, image_pts = [], []
    s = spec.coaster_side_mm
    for pos in range(4):
        x0, y0 = spec.coaster_origin(pos)
        square = np.array([(x0, y0), (x0 + s, y0), (x0 + s, y0 + s), (x0, y0 + s)], float)
        lines = []
        for k in range(4):
            a, b = square[k], square[(k + 1) % 4]
            on_side = a + along * (b - a)
            outward = np.array([(b - a)[1], -(b - a)[0]]) / s  # the square runs counter-clockwise
            px, beyond = _apply_h(h, on_side), _apply_h(h, on_side + outward)
            normal = beyond - px
            normal /= np.linalg.norm(normal, axis=1, keepdims=True)
            samples = px[:, None, :] + steps[None, :, None] * normal[:, None, :]
            profile = cv2.remap(image, samples[..., 0].astype(np.float32), samples[..., 1].astype(np.float32),
                                cv2.INTER_LINEAR, borderMode=cv2.BORDER_REPLICATE).astype(np.float32)
            change = np.linalg.norm(profile[:, 2:] - profile[:, :-2], axis=2)  # across one pixel either side
            best = np.argmax(change, axis=1)
            strong = change[np.arange(len(best)), best] >= config.coaster_edge_min_step
            inside = (samples[..., 0] >= 0) & (samples[..., 0] <= image.shape[1] - 1) \
                & (samples[..., 1] >= 0) & (samples[..., 1] <= image.shape[0] - 1)
            found = samples[np.arange(len(best)), best + 1][strong & inside.all(axis=1)]
            if len(found) < 6:
                break
            vx, vy, cx, cy = cv2.fitLine(found.astype(np.float32), cv2.DIST_HUBER, 0, 0.01, 0.01).ravel()
            lines.append(np.cross([cx, cy, 1.0], [cx + vx, cy + vy, 1.0]))
        corners = [np.cross(lines[k - 1], lines[k]) for k in range(len(lines))]
        if len(corners) < 4 or min(abs(c[2]) for c in corners) < 1e-9:
            continue
        board_pts += list(square)
        image_pts += [c[:2] / c[2] for c in corners]
    if len(board_pts) < 8:
        return h
    refit, _ = cv2.findHomography(np.array(board_pts), np.array(image_pts), 0)
    if refit is None or np.abs(_apply_h(refit, spec.outline()) - outline).max() > 2 * reach:
        return h
    return refit


def _on_picture_edge(quad: np.ndarray, shape: tuple[int, ...], margin: float = 3.0) -> bool:
    """Whether a corner of the outline lies on the picture's edge (where the picture cut it)."""
    h, w = shape[:2]
    return bool(np.any((quad[:, 0] < margin) | (quad[:, 1] < margin)
                       | (quad[:, 0] > w - 1 - margin) | (quad[:, 1] > h - 1 - margin)))


def _clockwise_on_screen(quad: np.ndarray) -> np.ndarray:
    """The outline's corners clockwise on screen (= counter-clockwise on the board seen from above)."""
    area = 0.5 * np.sum(quad[:, 0] * np.roll(quad[:, 1], -1) - np.roll(quad[:, 0], -1) * quad[:, 1])
    return quad[::-1] if area > 0 else quad


def _coaster_pairs(quads: dict[int, np.ndarray], spec: BoardSpec) -> dict[int, tuple[np.ndarray, np.ndarray]]:
    """(board corners, image corners) of each coaster outline, in matching order."""
    centre = np.mean([q.mean(0) for q in quads.values()], axis=0)
    pairs = {}
    for pos, quad in quads.items():
        # Order the image corners clockwise on screen (= counter-clockwise on the board seen from above),
        # starting at the corner nearest the board's centre: the coasters' inner corner.
        quad = _clockwise_on_screen(quad)
        start = int(np.argmin(((quad - centre) ** 2).sum(1)))
        quad = np.roll(quad, -start, axis=0)
        # The inner corner of position p on the board, then counter-clockwise.
        inner = {0: 2, 1: 3, 2: 1, 3: 0}[pos]
        order = [(inner + k) % 4 for k in range(4)]
        pairs[pos] = (_coaster_corners(spec, pos)[order], quad)
    return pairs


def _coaster_subset_homography(quads: dict[int, np.ndarray], spec: BoardSpec,
                               config: LocateConfig) -> np.ndarray | None:
    """The board-to-image homography of some of the coasters, trusting every corner.

    The corners are matched to the board by the coasters' centre, which is the board's centre
    only when they surround it: two coasters side by side have two corners equally near it. For
    a pair, every turn of each outline is tried instead and the one whose corners agree best on
    one board is kept (the wrong turns put the other coaster elsewhere).
    """
    pairs = _coaster_pairs(quads, spec)
    if len(pairs) != 2:
        h, _ = cv2.findHomography(np.vstack([pairs[p][0] for p in sorted(pairs)]),
                                  np.vstack([pairs[p][1] for p in sorted(pairs)]), 0)
        return h
    (src_a, dst_a), (src_b, dst_b) = (pairs[p] for p in sorted(pairs))
    src = np.vstack([src_a, src_b])
    best, best_error = None, math.inf
    for turn_a, turn_b in itertools.product(range(4), repeat=2):
        dst = np.vstack([np.roll(dst_a, turn_a, axis=0), np.roll(dst_b, turn_b, axis=0)])
        h = _fit_h(src, dst)  # the plain least-squares fit: sixteen of them per pair
        if h is None:
            continue
        error = float(np.mean(np.hypot(*(_apply_h(h, src) - dst).T)))
        if error < best_error:
            best, best_error = dst, error
    # Two outlines bent by a hand or a piece fit some turn loosely, and that view is wild.
    side_px = math.sqrt(abs(cv2.contourArea(dst_a.astype(np.float32))))
    if best is None or best_error >= config.coaster_pair_tolerance * side_px:
        return None
    h, _ = cv2.findHomography(src, best, 0)
    return h


def _refit_to_agreeing_coasters(h: np.ndarray, quads: dict[int, np.ndarray], others: dict[int, list[np.ndarray]],
                                spec: BoardSpec, shape: tuple[int, ...], rounds: int = 3) -> np.ndarray | None:
    """The chosen view refitted to every coaster outline that lies where it puts a coaster.

    A view chosen from two coasters puts the other two roughly right; their outlines, where
    they agree, pin it down over the whole board (each refit puts them closer, so it is
    repeated). An outline agrees when its corners lie on average within an eighth of a coaster's
    side of where the view puts them; a corner on the picture's edge is where the picture cut the
    coaster, not its corner, and is left out. None when fewer than six corners agree."""
    gh, gw = shape[:2]
    refined = None
    for _ in range(rounds):
        side_px = math.sqrt(abs(cv2.contourArea(_apply_h(h, _coaster_corners(spec, 0)).astype(np.float32))))
        src, dst = [], []
        for pos in range(4):
            expected = _apply_h(h, _coaster_corners(spec, pos))
            best, best_error = None, 0.12 * side_px
            for quad in ([quads[pos]] if pos in quads else []) + others.get(pos, []):
                for turn in range(4):
                    for order in (quad, quad[::-1]):
                        turned = np.roll(order, turn, axis=0)
                        error = float(np.mean(np.hypot(*(turned - expected).T)))
                        if error < best_error:
                            best, best_error = turned, error
            if best is not None:
                inside = ((best[:, 0] > 2) & (best[:, 0] < gw - 3) & (best[:, 1] > 2) & (best[:, 1] < gh - 3))
                src.append(_coaster_corners(spec, pos)[inside])
                dst.append(best[inside])
        if sum(len(corners) for corners in src) < 6:
            break
        # A hand or piece bends an outline at one corner: the corners most agree on decide.
        fitted, mask = cv2.findHomography(np.vstack(src), np.vstack(dst), cv2.RANSAC, 0.04 * side_px)
        if fitted is None or mask.sum() < 6:
            break
        h = refined = fitted
    return refined


def _coaster_consensus(quads: dict[int, np.ndarray], spec: BoardSpec, max_iters: int = 2000) -> np.ndarray | None:
    """The board-to-image homography most of the coasters' corners agree on (RANSAC, trying at most
    `max_iters` samples)."""
    pairs = _coaster_pairs(quads, spec)
    src_all = np.vstack([pairs[p][0] for p in sorted(pairs)])
    dst_all = np.vstack([pairs[p][1] for p in sorted(pairs)])
    cell_img = math.sqrt(abs(cv2.contourArea(dst_all[:4].astype(np.float32)))) / 3
    h, mask = cv2.findHomography(src_all, dst_all, cv2.RANSAC, max(1.0, 0.12 * cell_img), maxIters=max_iters)
    if h is not None and mask.sum() >= 4:
        inl = mask.ravel().astype(bool)
        h, _ = cv2.findHomography(src_all[inl], dst_all[inl], 0)
    return h


def _coaster_corners(spec: BoardSpec, pos: int) -> np.ndarray:
    side = spec.coaster_side_mm
    return np.array([(0, 0), (side, 0), (side, side), (0, side)], float) + spec.coaster_origin(pos)


def _hand_mask(image: np.ndarray, config: LocateConfig) -> np.ndarray | None:
    """Pixels of a hand or arm: skin-coloured, and not of the table's colour (None in a grey picture)."""
    if image.ndim != 3:
        return None
    skin = skin_mask(image)
    if not skin.any():
        return None
    lab = cv2.cvtColor(image, cv2.COLOR_BGR2LAB)
    h, w = skin.shape
    rim = max(2, min(h, w) // 20)
    border = np.concatenate([lab[:rim].reshape(-1, 3), lab[-rim:].reshape(-1, 3),
                             lab[:, :rim].reshape(-1, 3), lab[:, -rim:].reshape(-1, 3)])
    table = np.median(border.astype(np.float32), axis=0)
    # Only the skin-coloured pixels are measured against the table's colour (the costly part).
    ys, xs = np.nonzero(skin)
    far = ((lab[ys, xs].astype(np.float32) - table) ** 2).sum(1) > config.coaster_table_lab ** 2
    hand = np.zeros_like(skin)
    hand[ys[far], xs[far]] = True
    return None if hand.mean() > config.coaster_hand_share else hand


def _colour_agreement(h: np.ndarray, masks: list[list[np.ndarray]], spec: BoardSpec,
                      hidden: np.ndarray | None = None) -> float:
    """Share of sample points inside each predicted coaster that have its colour, less the share
    just outside it that do (a misplaced board covers the colours with its wrong parts).

    Each coaster's colour may come as several masks (the whole hue band, its saturated part):
    the one that fits best speaks for it; a coaster with none is left out. Inside points where
    `hidden` is set (a hand) are left out of the share."""
    side = spec.coaster_side_mm
    t = (np.arange(8) + 0.5) / 8
    inside = np.stack(np.meshgrid(t, t), -1).reshape(-1, 2) * side * 0.9 + side * 0.05
    ring_t = np.linspace(0, 1, 12, endpoint=False)
    out_d = 0.12 * side
    ring = np.vstack([np.stack([ring_t * side, np.full(12, -out_d)], 1), np.stack([ring_t * side, np.full(12, side + out_d)], 1),
                      np.stack([np.full(12, -out_d), ring_t * side], 1), np.stack([np.full(12, side + out_d), ring_t * side], 1)])
    gh, gw = next(m for variants in masks for m in variants).shape
    score = 0.0
    for pos, variants in enumerate(masks):
        origin = np.array(spec.coaster_origin(pos))

        def frac(mask: np.ndarray, pts: np.ndarray, skip_hidden: bool = False) -> float:
            xy = np.round(_apply_h(h, pts + origin)).astype(int)
            ok = (xy[:, 0] >= 0) & (xy[:, 0] < gw) & (xy[:, 1] >= 0) & (xy[:, 1] < gh)
            if not ok.any():
                return 0.0
            # Beyond the picture nothing is known: a board a few cells past the edge is judged on
            # what is in view, unless most of the coaster is out of it.
            total = len(pts) if ok.sum() < 0.5 * len(pts) else int(ok.sum())
            if skip_hidden and hidden is not None:
                covered = np.zeros(len(pts), bool)
                covered[ok] = hidden[xy[ok, 1], xy[ok, 0]]
                # A coaster mostly under a hand is judged on all its points, not on a visible few.
                if covered.sum() < 0.75 * total:
                    total -= int(covered.sum())
                    ok &= ~covered
            return float((mask[xy[ok, 1], xy[ok, 0]] > 0).sum()) / total

        if variants:
            score += max(frac(mask, inside, True) - frac(mask, ring) for mask in variants)
    return score / max(1, sum(bool(variants) for variants in masks))
