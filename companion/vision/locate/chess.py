"""The chessboard (and its 6x6 / 4x8 playing areas): X-shaped lattice corners where four squares meet
are grown into a lattice from a seed cell, the board's 8x8 window is chosen in it by the light/dark
alternation of its cells, and its corners are refined at full resolution. a1 dark fixes which quarter
turns the board may lie at.
"""

from __future__ import annotations

import cv2
import numpy as np

from companion.vision.locate.board import BoardNotFound, BoardSpec, _Found
from companion.vision.locate.config import LocateConfig
from companion.vision.locate.cues import xcorner_cues
from companion.vision.locate.geometry import _apply_h, _board_rotation, _cell_px, _jacobian_det, _outside
from companion.vision.locate.lattice import SQUARE_LATTICE, _fit_h, _grow, grow_lattice


def _locate_chess(gray: np.ndarray, full_gray: np.ndarray, scale: float, spec: BoardSpec,
                  config: LocateConfig) -> _Found:
    pts, _ = xcorner_cues(gray, config)
    got = grow_lattice(pts, SQUARE_LATTICE, config, max_extent=8, target=49)
    if got is None or len(got[0]) < config.min_lattice_points:
        found = 0 if got is None else len(got[0])
        raise BoardNotFound("no-board", f"no chessboard lattice: {len(pts)} corner cues, at most {found} in a lattice")
    idx, img = got
    found, error = None, None
    try:
        found = _chess_from_corners(idx, img, gray, full_gray, scale, spec, config)
    except BoardNotFound as exc:
        error = exc
    surest = found is not None and found.confidence >= 1.0  # nothing could replace it
    if not surest and (np.ptp(idx, axis=0) >= 8).any() and np.ptp(idx, axis=0).max() < config.chess_regrow_extent:
        # A lattice at the board's width may have taken the board's edge junctions and a stray corner
        # beyond them on one side before the grid reached the other side's corners (Icebomb Arena
        # referee train 60: two columns of the board missed, the board put two columns over). Grown
        # on from itself, as wide as a board with its border, it takes them in, and the board's
        # window is chosen in the 9-corner band holding the most points. Under hands the wider
        # lattice may take in a hand's corners too: the surer board of the two is kept (the wider
        # one's when the first found none).
        ids = np.argmin(((img[:, None, :] - pts[None, :, :]) ** 2).sum(-1), axis=1)
        wider = _grow(pts, SQUARE_LATTICE, config, config.chess_regrow_extent,
                      {(int(i), int(j)): int(pid) for (i, j), pid in zip(idx, ids)})
        if wider is not None and len(wider[0]) > len(idx):
            try:
                other = _chess_from_corners(wider[0], pts[wider[1]], gray, full_gray, scale, spec, config)
            except BoardNotFound:
                other = None
            if other is not None and (found is None or other.confidence > found.confidence):
                found = other
    if found is None:
        raise error
    return found


def _chess_from_corners(idx: np.ndarray, img: np.ndarray, gray: np.ndarray, full_gray: np.ndarray, scale: float,
                        spec: BoardSpec, config: LocateConfig) -> _Found:
    """The board on a corner lattice, read as grown or, when no cells alternate (or the few that
    do place the board past the picture's edge), along its diagonals."""
    try:
        return _chess_from_lattice(idx, img, gray, full_gray, scale, spec, config)
    except BoardNotFound as exc:
        weak_cut = isinstance(exc, _ChessboardCut) and exc.alternation < config.chess_diagonal_after_cut_below
        if exc.reason != "wrong-board-kind" and not weak_cut:
            raise
        # Every other corner, a lattice turned 45 degrees and 1.4 cells wide, is a square lattice
        # too; grown from it, hardly any cells alternate. Read as the board's own corners, they
        # may. Near the picture's edge, the few cells of the grown reading that alternate tie with
        # a window past it, and the board wholly in view was refused as cut (Icebomb Arena referee
        # render 6132: 21 of 64 alternating; a board the picture really cuts shows 54-55, and
        # read along its diagonals was put on wrong cells, freely framed 7081).
        diagonal = np.stack([idx[:, 0] + idx[:, 1], idx[:, 0] - idx[:, 1]], 1)
        try:
            return _chess_from_lattice(diagonal, img, gray, full_gray, scale, spec, config)
        except BoardNotFound:
            raise exc from None


class _ChessboardCut(BoardNotFound):
    """The chessboard's window runs past the picture's edge; `alternation`: the share of its 64
    cells that alternate light and dark as a chessboard's do."""

    def __init__(self, alternation: float):
        super().__init__("cut-by-frame", "the chessboard runs past the edge of the picture; "
                                         "aim the camera so the whole board is in view")
        self.alternation = alternation


def _chess_from_lattice(idx: np.ndarray, img: np.ndarray, gray: np.ndarray, full_gray: np.ndarray, scale: float,
                        spec: BoardSpec, config: LocateConfig) -> _Found:
    """The board on a lattice of corner cues (integer indices, their work-image pixels): the 8x8
    window whose cells alternate light and dark, refined at full resolution."""
    h = _fit_h(idx.astype(float), img)
    if _jacobian_det(h, idx.mean(0)) > 0:
        # A board seen from above is never mirrored: swap the index axes.
        idx = idx[:, ::-1].copy()
        h = _fit_h(idx.astype(float), img)
    idx = idx - idx.min(0)
    for axis in (0, 1):
        # A lattice wider than the board's 9 corners picked up strays (a patterned table, piece
        # edges): keep the 9-wide band holding the most points.
        if idx[:, axis].max() > 8:
            counts = [int(((idx[:, axis] >= w) & (idx[:, axis] <= w + 8)).sum()) for w in range(idx[:, axis].max() - 7)]
            w = int(np.argmax(counts))
            keep = (idx[:, axis] >= w) & (idx[:, axis] <= w + 8)
            idx, img = idx[keep], img[keep]
            idx = idx - idx.min(0)
    idx, img = _drop_stray_rows(idx, img)
    if len(idx) < config.min_lattice_points:
        raise BoardNotFound("no-board", f"too few chessboard corners in one board-sized lattice ({len(idx)})")
    h = _fit_h(idx.astype(float), img)
    span = idx.max(0)
    # Sample every cell around the lattice (and one more ring, to judge each window's surround):
    # index (u, v) is the cell between corners (u, v) and (u+1, v+1).
    us = np.arange(span[0] - 10, 10)
    vs = np.arange(span[1] - 10, 10)
    uu, vv = np.meshgrid(us, vs, indexing="ij")
    centres = np.stack([uu.ravel() + 0.5, vv.ravel() + 0.5], 1)
    gh, gw = gray.shape
    blur = cv2.blur(gray, (3, 3))
    # Five points per cell (its centre and towards its corners); their median ignores a piece
    # standing on the cell's middle.
    spots = np.array([(0, 0), (-0.3, -0.3), (0.3, -0.3), (0.3, 0.3), (-0.3, 0.3)])
    img_s = _apply_h(h, (centres[:, None, :] + spots[None]).reshape(-1, 2)).reshape(len(centres), len(spots), 2)
    seen = (img_s[..., 0] >= 1) & (img_s[..., 0] < gw - 1) & (img_s[..., 1] >= 1) & (img_s[..., 1] < gh - 1)
    xy = np.clip(img_s, 0, [gw - 1, gh - 1]).astype(int)
    samples = np.where(seen, blur[xy[..., 1], xy[..., 0]].astype(float), np.nan)
    inside = seen.sum(1) >= 3
    val = np.zeros(len(centres))
    val[inside] = np.nanmedian(samples[inside], axis=1)
    in_lattice = (centres[:, 0] > 0) & (centres[:, 0] < span[0]) & (centres[:, 1] > 0) & (centres[:, 1] < span[1])
    ref = val[in_lattice & inside]
    threshold = float(np.median(ref)) if len(ref) else 128.0
    parity = np.where((uu.ravel() + vv.ravel()) % 2 == 0, 1.0, -1.0)
    sign = np.where(inside, np.sign(val - threshold) * parity, 0.0).reshape(uu.shape)
    # Origins (o_u, o_v): the board's outer-corner origin in lattice indices; inner corners o+1..o+7.
    scores = []
    # The board's edge corners (T-junctions with the border) may be in the lattice too, and so may
    # the border's own outer corners, one row beyond the board.
    extra = (span >= 8).astype(int)  # only a lattice as wide as the board can hold the border's corners
    beyond = []
    for ou in range(span[0] - 8 - extra[0], 1 + extra[0]):
        for ov in range(span[1] - 8 - extra[1], 1 + extra[1]):
            iu, iv = ou - us[0], ov - vs[0]
            window = sign[iu:iu + 8, iv:iv + 8]
            total = float(window.sum())
            # Around the board is its plain border or the table: a window shifted by a row has
            # a row of alternating cells just outside it.
            ring = float(sign[iu - 1:iu + 9, iv - 1:iv + 9].sum()) - total
            s = abs(total) - max(0.0, ring * np.sign(total))
            inside_lattice = span[0] - 8 <= ou <= 0 and span[1] - 8 <= ov <= 0
            (scores if inside_lattice else beyond).append((s, ou, ov, total))
    # A window reaching past the lattice (whose last row of corners was then the border's outer
    # edge) replaces the windows within it only when clearly better.
    if beyond and (not scores or max(beyond)[0] > max(scores)[0] + config.chess_beyond_margin):
        scores = beyond
    scores.sort(reverse=True)
    s, ou, ov, raw = scores[0]
    if s < config.min_checker_fraction * 64:
        raise BoardNotFound("wrong-board-kind", f"a lattice of {len(idx)} corners but no light/dark alternation "
                                                 f"(score {s:.0f} of 64): not a chessboard")
    # Cells outside the picture contribute nothing, so a cut board ties with shifted windows. Only
    # a playing cell's middle out of view counts (as with the coasters): a corner the picture cuts
    # off outside the playing area leaves every cell the referee watches in view.
    cell_middles = _playing_cell_middles(spec)
    for s2, ou2, ov2, _ in scores:
        if s2 < s - 2:
            break
        if _outside(_apply_h(h, cell_middles + [ou2, ov2]), gray.shape, config.frame_margin_px):
            raise _ChessboardCut(s / 64)
    # Full-resolution refinement of the matched corners, then a robust fit of the 8x8 board.
    board_idx = idx - [ou, ov]
    inner = np.all((board_idx >= 1) & (board_idx <= 7), axis=1)
    # Edge T-junctions sit slightly off the true corner; use them only when few inner corners show.
    keep = inner if inner.sum() >= 12 else np.all((board_idx >= 0) & (board_idx <= 8), axis=1)
    board_idx, img = board_idx[keep], img[keep]
    full = cv2.cornerSubPix(full_gray, (img / scale).astype(np.float32).reshape(-1, 1, 2),
                            (max(2, int(3 / scale)), max(2, int(3 / scale))), (-1, -1),
                            (cv2.TERM_CRITERIA_EPS + cv2.TERM_CRITERIA_MAX_ITER, 20, 0.01)).reshape(-1, 2)
    src = board_idx.astype(float) * spec.cell_mm
    cell_px = _cell_px(h) / scale
    hf, mask = cv2.findHomography(src, full, cv2.RANSAC, max(0.6, config.refine_ransac_cells * cell_px))
    if hf is None:
        raise BoardNotFound("no-board", "the corner lattice could not be fitted")
    inl = mask.ravel().astype(bool)
    hf, _ = cv2.findHomography(src[inl], full[inl], 0)
    # A chessboard looks the same turned half a turn; a1 dark fixes quarter turns only.
    # raw > 0: cells of even lattice parity are light; board parity differs by ou + ov.
    light_even = (raw > 0) == ((ou + ov) % 2 == 0)
    cands = chess_turns_with_a1_dark(hf, spec, even_dark=not light_even)
    conf = float(inl.sum()) / 49.0 if inner.sum() >= 12 else float(inl.sum()) / 81.0
    return _Found(min(1.0, conf) * min(1.0, s / 40.0), "lattice", int(inl.sum()), cands)


def chess_turns_with_a1_dark(h: np.ndarray, spec: BoardSpec, even_dark: bool) -> list[np.ndarray]:
    """The quarter turns of the chessboard `h` places (board cell (0, 0) at its origin) whose a1 has
    the colour `spec.a1_dark` asks, given whether the squares of even file + rank are the dark ones."""
    turns = []
    for quarter in range(4):
        turn = _board_rotation(quarter, 8 * spec.cell_mm)
        a1 = _apply_h(turn, np.array([[0.5, 0.5]]) * spec.cell_mm)[0]
        a1_even = (int(a1[0] // spec.cell_mm) + int(a1[1] // spec.cell_mm)) % 2 == 0
        if (a1_even == even_dark) == spec.a1_dark:
            turns.append(h @ turn)
    return turns


def _playing_cell_middles(spec: BoardSpec) -> np.ndarray:
    """Middles of the cells (lattice units) in the playing area whichever corner turns out to be a1:
    which quarter turn the board lies at is judged after the window is chosen."""
    f0, r0, nf, nr = spec.area_box
    cells = {(f, r) for f in range(f0, f0 + nf) for r in range(r0, r0 + nr)}
    for _ in range(3):
        cells |= {(7 - r, f) for f, r in cells}
    return np.array(sorted(cells), float) + 0.5


def _drop_stray_rows(idx: np.ndarray, img: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The lattice without an outermost row (or column) of one cue beside a well-filled one, or of
    two cues with an empty row between them and a well-filled one.

    A piece's corner on the table one row beyond the board fits the lattice as well as the board's
    own corners; kept, it stretches the lattice a row past the board, and the board's windows are
    then sought one row off (Icebomb Arena render 5052 was refused as cut by the frame; in 5059 a
    stray two rows out put the board a row onto its dark border). A row of cues beside a sparse
    one may be the board's edge half hidden by a hand, and is kept (render 5090).
    """
    changed = True
    while changed and len(idx):
        changed = False
        for axis in (0, 1):
            for pick in (np.min, np.max):
                edge = pick(idx[:, axis])
                at_edge = int((idx[:, axis] == edge).sum())
                rest = idx[idx[:, axis] != edge, axis]
                if not len(rest):
                    continue
                nearest = pick(rest)  # the next row holding cues, past any empty ones
                next_row = int((idx[:, axis] == nearest).sum())
                # Two strays an empty row beyond the board's last well-filled one are no edge of
                # it either (Icebomb Arena referee render 6131: two pieces' corners on the table
                # past a wide border put the board a column onto it).
                apart = abs(int(nearest) - int(edge)) > 1
                if (at_edge == 1 or (at_edge == 2 and apart)) and next_row >= 6:
                    keep = idx[:, axis] != edge
                    idx, img = idx[keep], img[keep]
                    changed = True
        idx = idx - idx.min(0) if len(idx) else idx
    return idx, img
