"""Where the picture of the board changed between two stable positions, cell by cell.

The detector can miss a piece that is plain to see once you know where to look: a clear glass
bead on a white square, say. A fixed camera knows where to look: between two stable (calm, hand-free)
frames, whatever was put down or taken away shows as a blob of changed pixels, and the bottom of
that blob (the part nearest the camera) is where the object touches the board. Chess-camera
projects read moves from such square-by-square changes; here they are a second, independent cue that
the referee may use when the detector saw no change at all.

Vision code: this says where the picture changed, never whether a move was legal.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace

import cv2
import numpy as np

from companion.vision.detection import box_iou
from companion.vision.locate import BoardLocation
from companion.vision.observation import Observation, SeenPiece


SATURATED = 245


@dataclass(frozen=True)
class ChangeConfig:
    """Thresholds for reading changes between two calm frames.

    Attributes:
        scale: frames are compared at this scale (half size is plenty for a bead 15 px across).
        blur: Gaussian kernel (odd, at the working scale) that evens out sensor noise and JPEG blocks.
        level: a pixel changed when some colour channel differs by more than this (0-255), after
            the second frame's tones over the board are matched to the first's (a cloud, a
            camera's auto-exposure).
        min_cell_share, max_cell_share: a blob's area, in cells' image areas, for it to be an
            object: smaller is noise, larger is a shadow, a sleeve or a knocked board.
        max_total_cells: when more than this many cells' area changed in all, the light changed
            (a shadow across the board breaks into a blob per light square): no change can be read.
        ground_rows: the ground point is the centre of the blob's lowest rows, this share of its height.
        piece_ground_radius, piece_ground_share: a piece mapped onto a cell in one frame changed
            there when this share of the pixels within this radius (in cells' sides) of its ground
            point changed.
    """

    scale: float = 0.5
    blur: int = 5
    level: int = 25
    min_cell_share: float = 0.03
    max_cell_share: float = 3.0
    max_total_cells: float = 6.0
    ground_rows: float = 0.25
    piece_ground_radius: float = 0.2
    piece_ground_share: float = 0.4


@dataclass(frozen=True)
class ChangedBlob:
    """One patch of the board's picture that changed: its box and ground point (full-frame pixels)."""

    box: tuple[int, int, int, int]
    ground: tuple[float, float]
    area_px: int


def _small(frame: np.ndarray, config: ChangeConfig) -> np.ndarray:
    return cv2.resize(frame, None, fx=config.scale, fy=config.scale, interpolation=cv2.INTER_AREA)


def _tones_matched(frame: np.ndarray, reference: np.ndarray, inside: np.ndarray) -> np.ndarray:
    """`frame` with each channel's tones mapped linearly so that its lower and upper quartiles over
    `inside` meet the reference's: exposure and white balance drift. On a board of two tones the
    quartiles are the two squares' tones, which a piece put down hardly moves."""
    out = np.empty_like(frame)
    for c in range(frame.shape[2]):
        f25, f75 = np.percentile(frame[..., c][inside], (25, 75))
        r25, r75 = np.percentile(reference[..., c][inside], (25, 75))
        gain = (r75 - r25) / (f75 - f25) if f75 - f25 > 8 else (r75 + 1.0) / (f75 + 1.0)
        lut = np.clip(np.round(r25 + (np.arange(256) - f25) * gain if f75 - f25 > 8 else np.arange(256) * gain), 0, 255)
        out[..., c] = cv2.LUT(frame[..., c], lut.astype(np.uint8))
    return out


def _changed_mask(before: np.ndarray, after: np.ndarray, location: BoardLocation,
                  config: ChangeConfig) -> tuple[np.ndarray, float] | None:
    """(pixels that changed over the located board at the working scale, a cell's area there), or
    None when so much changed that the light did."""
    if before.shape != after.shape or before.ndim != 3:
        raise ValueError(f"frames to compare must be colour pictures of one shape, got {before.shape} and {after.shape}")
    s = config.scale
    a, b = _small(before, config), _small(after, config)
    mask = np.zeros(a.shape[:2], np.uint8)
    outline = np.round(location.corners * s).astype(np.int32)
    cv2.fillConvexPoly(mask, outline, 1)
    inside = mask.astype(bool)
    if not inside.any():
        return None
    k = (config.blur, config.blur)
    a, b = cv2.GaussianBlur(a, k, 0), cv2.GaussianBlur(b, k, 0)
    channel_diff = cv2.absdiff(a, _tones_matched(b, a, inside))
    # A channel clipped white in both frames says nothing (exposure moved it, not a piece).
    channel_diff[(a >= SATURATED) & (b >= SATURATED)] = 0
    diff = cv2.max(cv2.max(channel_diff[..., 0], channel_diff[..., 1]), channel_diff[..., 2])
    changed = ((diff > config.level) & inside).astype(np.uint8)
    cell_area = _median_cell_area(location) * s * s
    if np.count_nonzero(changed) > config.max_total_cells * cell_area:
        return None
    return changed, cell_area


def changed_blobs(before: np.ndarray, after: np.ndarray, location: BoardLocation,
                  config: ChangeConfig = ChangeConfig()) -> list[ChangedBlob] | None:
    """The object-sized patches where `after` differs from `before` over the located board; None
    when so much changed that the light did (then the picture cannot say where pieces moved).

    Both frames must have the same shape (the same camera and board lock); raises ValueError if not.
    """
    found = _changed_mask(before, after, location, config)
    if found is None:
        return None
    return _blobs(*found, config)


def _blobs(changed: np.ndarray, cell_area: float, config: ChangeConfig) -> list[ChangedBlob]:
    s = config.scale
    count, labels, stats, _ = cv2.connectedComponentsWithStats(changed, connectivity=8)
    blobs = []
    for i in range(1, count):
        x, y, w, h, area = (int(v) for v in stats[i])
        if not config.min_cell_share * cell_area <= area <= config.max_cell_share * cell_area:
            continue
        ys, xs = np.nonzero(labels[y:y + h, x:x + w] == i)
        low = ys >= (h - 1) * (1.0 - config.ground_rows)
        gx, gy = (xs[low].mean() + x) / s, (ys[low].mean() + y) / s
        blobs.append(ChangedBlob((int(x / s), int(y / s), int((x + w) / s), int((y + h) / s)),
                                 (float(gx), float(gy)), int(area / (s * s))))
    return blobs


def changed_cells(before: np.ndarray, after: np.ndarray, location: BoardLocation,
                  cell_of: Callable[[tuple[float, float]], str | None],
                  config: ChangeConfig = ChangeConfig(), pieces_before: Sequence[SeenPiece] = (),
                  pieces_after: Sequence[SeenPiece] = ()) -> frozenset[str] | None:
    """The cells under the ground points of the changed blobs (`cell_of` maps board-plane mm to a
    game's cell name, None off the playing area; blobs off it, in the seat zones, are left out).
    Empty: no cell's picture changed; None: the light changed, and the picture cannot tell.

    Two changes on neighbouring cells can join in one blob (a pawn standing on the cell in front
    reaches over the cell behind it in the picture), which has one ground point. So the pieces
    mapped onto cells in either frame (`pieces_before`, `pieces_after`) add their own cells when
    the picture changed where they stand and no piece of the other frame stands over that point
    (a bead hidden behind a pawn put down in front of it is still there).
    """
    found = _changed_mask(before, after, location, config)
    if found is None:
        return None
    changed, cell_area = found
    blobs = _blobs(changed, cell_area, config)
    cells: set[str] = set()
    if blobs:
        ground_mm = location.image_to_board(np.array([b.ground for b in blobs], float))
        cells = {c for c in (cell_of((float(x), float(y))) for x, y in ground_mm) if c is not None}
    radius = config.piece_ground_radius * float(np.sqrt(cell_area))
    for pieces, others in ((pieces_before, pieces_after), (pieces_after, pieces_before)):
        for piece in pieces:
            if piece.cell is None or piece.table_mm is None or piece.cell in cells:
                continue
            gx, gy = location.board_to_image(np.array([piece.table_mm], float))[0]
            if any(q.cell != piece.cell and q.box[0] <= gx <= q.box[2] and q.box[1] <= gy <= q.box[3] for q in others):
                continue
            if _share_changed_near(changed, (gx * config.scale, gy * config.scale), radius) >= config.piece_ground_share:
                cells.add(piece.cell)
    return frozenset(cells)


def _share_changed_near(changed: np.ndarray, centre: tuple[float, float], radius: float) -> float:
    """The share of the pixels within `radius` of `centre` (working scale) that changed."""
    disc = np.zeros_like(changed)
    cv2.circle(disc, (int(round(centre[0])), int(round(centre[1]))), max(1, int(round(radius))), 1, -1)
    area = np.count_nonzero(disc)
    return float(np.count_nonzero(changed & disc)) / area if area else 0.0


def _median_cell_area(location: BoardLocation) -> float:
    areas = [abs(cv2.contourArea(np.asarray(c.polygon, np.float32))) for c in location.cells()]
    return float(np.median(areas)) if areas else float("inf")


def _patch_still(before: np.ndarray, after: np.ndarray, box: tuple[float, ...], config: ChangeConfig,
                 max_changed: float) -> bool:
    """Whether the picture inside `box` (full-frame pixels) is the same in both frames."""
    h, w = before.shape[:2]
    x1, y1 = max(0, int(box[0])), max(0, int(box[1]))
    x2, y2 = min(w, int(np.ceil(box[2]))), min(h, int(np.ceil(box[3])))
    if x2 - x1 < 2 or y2 - y1 < 2:
        return False
    k = (config.blur, config.blur)
    a = cv2.GaussianBlur(before[y1:y2, x1:x2], k, 0)
    b = cv2.GaussianBlur(after[y1:y2, x1:x2], k, 0)
    diff = cv2.absdiff(a, b).max(axis=2)
    return float(np.count_nonzero(diff > config.level)) <= max_changed * diff.size


def keep_still_pieces_beside_the_board(observation: Observation, baseline: Observation, before: np.ndarray,
                                       after: np.ndarray, config: ChangeConfig = ChangeConfig(),
                                       min_overlap: float = 0.5, max_changed: float = 0.03) -> Observation:
    """`observation` with each piece in a seat zone whose picture has not changed since the
    baseline's frame read as the baseline read it, and such a piece the detector missed now put back.

    Beside the board there are no cells for `changed_cells` to watch, and a player taking one of
    their revealed plan pieces away can change how the detector reads the piece left beside it (its
    neighbour's box and shadow are gone). A piece whose pixels did not change did not change; the
    baseline's reading, which the game accepted, stands. Pieces whose picture changed, and
    everything on the board, are left as seen.
    """
    if before.shape != after.shape or before.ndim != 3:
        raise ValueError(f"frames to compare must be colour pictures of one shape, got {before.shape} and {after.shape}")
    old = [p for p in baseline.pieces if p.zone is not None and p.cell is None]
    if not old:
        return observation
    kept: list[SeenPiece] = []
    used: set[int] = set()
    carried = 0
    for piece in observation.pieces:
        if piece.zone is None or piece.cell is not None:
            kept.append(piece)
            continue
        overlaps = [(box_iou(piece.box, q.box), i) for i, q in enumerate(old) if i not in used and q.zone == piece.zone]
        best = max(overlaps, default=(0.0, -1))
        if best[0] < min_overlap:
            kept.append(piece)
            continue
        q = old[best[1]]
        union = (min(piece.box[0], q.box[0]), min(piece.box[1], q.box[1]),
                 max(piece.box[2], q.box[2]), max(piece.box[3], q.box[3]))
        if _patch_still(before, after, union, config, max_changed):
            used.add(best[1])
            same = (piece.kind, piece.colour, piece.size, piece.pose, piece.direction) == (q.kind, q.colour, q.size, q.pose, q.direction)
            carried += not same
            kept.append(piece if same else q)
        else:
            kept.append(piece)
    for i, q in enumerate(old):
        if i in used or any(box_iou(q.box, p.box) > 0 for p in kept if p.zone is not None):
            continue
        if _patch_still(before, after, q.box, config, max_changed):
            kept.append(q)
            carried += 1
    if not carried:
        return observation
    note = f"{carried} piece(s) beside the board read as before: their picture did not change"
    return replace(observation, pieces=tuple(kept), notes=(*observation.notes, note))
