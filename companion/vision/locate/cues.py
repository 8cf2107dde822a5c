"""Cues: what the board kinds' searches look for in a grey frame, before any board is fitted.

Exposure checks (and, for a picture whose grey levels barely vary, the colour mix that varies most),
the X-corners of a chessboard, the ridge filter that finds a hex grid's lines, and the centres of hex
cells (between the lines, or light cells ringed by darker lines).
"""

from __future__ import annotations

import cv2
import numpy as np

from companion.vision.locate.board import BoardNotFound
from companion.vision.locate.config import LocateConfig


def _gray(image: np.ndarray) -> np.ndarray:
    return image if image.ndim == 2 else cv2.cvtColor(image, cv2.COLOR_BGR2GRAY)


def _check_exposure(gray: np.ndarray, config: LocateConfig) -> None:
    # A lit board on a dark cloth is a picture whose mean is low and whose board is plain to see:
    # what is too dark is a picture whose brightest part is (the board is no small speck).
    bright = float(np.percentile(gray[::4, ::4], config.brightness_percentile))
    if bright < config.min_brightness:
        raise BoardNotFound("too-dark", f"the brightest {100 - config.brightness_percentile:g} % of the picture "
                                        f"is at brightness {bright:.0f}, below {config.min_brightness:.0f}; "
                                        "add light or raise the camera's exposure")
    _, std = cv2.meanStdDev(gray)
    if std[0][0] < config.min_contrast:
        raise BoardNotFound("low-contrast", f"brightness varies by only {std[0][0]:.1f}; nothing to see")


def _contrast_projection(image: np.ndarray, min_contrast: float) -> np.ndarray | None:
    """For a colour picture whose grey levels barely vary (a blue board on brown wood: the grey
    level of the two nearly matches), the weights of the B, G, R mix that varies most across it
    (the first principal component of its colours), scaled so that the middle 98 % of the picture
    spans 0-255, with the offset as a fourth value.

    None when even that mix varies by less than `min_contrast`, its weights' magnitudes summing to
    one as the grey level's do: a picture that is flat in colour too is not stretched into cues."""
    if image.ndim != 3:
        return None
    step = max(1, int(np.sqrt(image.shape[0] * image.shape[1] / 40_000)))
    colours = image[::step, ::step].reshape(-1, 3).astype(np.float32)
    _, eigenvectors = np.linalg.eigh(np.cov(colours, rowvar=False))
    weights = eigenvectors[:, -1] / np.abs(eigenvectors[:, -1]).sum()
    mixed = colours @ weights
    if mixed.std() < min_contrast:
        return None
    # Light stays light (a chessboard's a1 is dark): the mix rises with the grey level, faint as it is.
    if np.cov(mixed, colours @ np.float32([0.114, 0.587, 0.299]))[0, 1] < 0:
        weights, mixed = -weights, -mixed
    low, high = np.percentile(mixed, (1, 99))
    if high - low < 1e-3:
        return None
    return np.append(weights * (255 / (high - low)), -low * 255 / (high - low)).astype(np.float32)


def _projected(image: np.ndarray, projection: np.ndarray) -> np.ndarray:
    """The picture as one channel through `_contrast_projection`'s weights and offset."""
    mixed = cv2.transform(image.astype(np.float32), projection.reshape(1, 4))
    return np.clip(mixed, 0, 255).astype(np.uint8)


def xcorner_cues(gray: np.ndarray, config: LocateConfig) -> tuple[np.ndarray, np.ndarray]:
    """Candidate X-corners (saddle points where four squares meet) and their strength."""
    g = cv2.GaussianBlur(gray.astype(np.float32), (0, 0), config.xcorner_sigma)
    ixx = cv2.Sobel(g, cv2.CV_32F, 2, 0, ksize=3)
    iyy = cv2.Sobel(g, cv2.CV_32F, 0, 2, ksize=3)
    ixy = cv2.Sobel(g, cv2.CV_32F, 1, 1, ksize=3)
    saddle = ixy * ixy - ixx * iyy
    peak = float(saddle.max())
    if peak <= 0:
        return np.zeros((0, 2)), np.zeros(0)
    local_max = cv2.dilate(saddle, np.ones((5, 5), np.uint8))
    ys, xs = np.nonzero((saddle >= local_max) & (saddle > config.xcorner_rel_threshold * peak))
    strength = saddle[ys, xs]
    order = np.argsort(-strength)[: config.max_cues]
    pts = np.stack([xs[order], ys[order]], axis=1).astype(np.float64)
    return _subpixel_peaks(saddle, pts), strength[order]


def _subpixel_peaks(resp: np.ndarray, pts: np.ndarray) -> np.ndarray:
    """Quadratic peak interpolation: cheap and good to a tenth of a pixel at search scale."""
    h, w = resp.shape
    out = pts.copy()
    for k, (x, y) in enumerate(pts.astype(int)):
        if 0 < x < w - 1 and 0 < y < h - 1:
            c = resp[y, x]
            dx = resp[y, x + 1] - resp[y, x - 1]
            dxx = resp[y, x + 1] - 2 * c + resp[y, x - 1]
            dy = resp[y + 1, x] - resp[y - 1, x]
            dyy = resp[y + 1, x] - 2 * c + resp[y - 1, x]
            if dxx < 0:
                out[k, 0] += float(np.clip(-0.5 * dx / dxx, -0.5, 0.5))
            if dyy < 0:
                out[k, 1] += float(np.clip(-0.5 * dy / dyy, -0.5, 0.5))
    return out


def line_responses(gray: np.ndarray, sigma: float) -> tuple[np.ndarray, np.ndarray]:
    """(dark-line, light-line) ridge strengths: the Hessian's eigenvalues across a thin line.

    A dark line on a lighter ground curves the brightness upwards across it (a large positive
    eigenvalue), a light line downwards; both are independent of the fills on either side, so
    shaded cells and hairline rules still show their lines.
    """
    g = cv2.GaussianBlur(gray.astype(np.float32), (0, 0), sigma)
    gxx = cv2.Sobel(g, cv2.CV_32F, 2, 0, ksize=3)
    gyy = cv2.Sobel(g, cv2.CV_32F, 0, 2, ksize=3)
    gxy = cv2.Sobel(g, cv2.CV_32F, 1, 1, ksize=3)
    half = 0.5 * (gxx + gyy)
    root = cv2.sqrt(0.25 * (gxx - gyy) ** 2 + gxy * gxy)
    return np.maximum(half + root, 0), np.maximum(root - half, 0)


def hex_centre_cues(gray: np.ndarray, config: LocateConfig) -> list[tuple[np.ndarray, np.ndarray, int]]:
    """Centres of hexagonal cells outlined by lines, once for each line polarity.

    The cells are what is left between the lines: each connected region that is about the right
    shape (convex, six-cornered, not elongated) gives its centroid. Both polarities are tried (dark
    lines on light cells, light lines on dark ones). The one with more cells is not always the
    board's: a grainy table breaks up into many small cell-like blobs. So both come back, most
    cells first, and the caller keeps the one whose lattice explains the board best.

    Returns:
        [(cell centres N x 2, that polarity's line strength image, polarity: 0 dark, 1 light), ...]
    """
    found = []
    for polarity, resp in enumerate(line_responses(gray, config.hex_line_sigma)):
        peak = float(np.percentile(resp[::3, ::3], 99.7))  # a sample is enough, and much cheaper
        if peak <= 0:
            continue
        lines = (resp > max(config.hex_min_line_strength, config.hex_line_fraction * peak)).astype(np.uint8)
        lines = cv2.dilate(lines, np.ones((2, 2), np.uint8))
        cells = (1 - lines).astype(np.uint8)
        cells = cv2.morphologyEx(cells, cv2.MORPH_OPEN, np.ones((3, 3), np.uint8))
        found.append((_hex_shaped_regions(cells, gray.size, config), resp, polarity))
    return sorted(found, key=lambda cues: -len(cues[0]))


def _hex_like_box(w: int, h: int, area: int, min_side: int, config: LocateConfig) -> bool:
    """Whether a blob's bounding box (w x h, `area` pixels filled) could hold one hex cell."""
    if w < min_side or h < min_side or max(w, h) > 3 * min(w, h):
        return False
    # A hexagon fills about 0.75 of its bounding box; blobs torn by pieces fill much less.
    return config.hex_min_solidity * 0.75 <= area / float(w * h) <= 0.95


def _hex_shaped_regions(cells: np.ndarray, image_area: int, config: LocateConfig) -> np.ndarray:
    n, labels, stats, centroids = cv2.connectedComponentsWithStats(cells, connectivity=4)
    area = stats[:, cv2.CC_STAT_AREA]
    pts, sizes = [], []
    for i in range(1, n):
        if not 40 <= area[i] <= image_area * 0.02:
            continue
        x, y, w, h = stats[i, :4]
        if not _hex_like_box(w, h, area[i], 6, config):
            continue
        crop = (labels[y:y + h, x:x + w] == i).astype(np.uint8)
        outline = max(cv2.findContours(crop, cv2.RETR_EXTERNAL, cv2.CHAIN_APPROX_SIMPLE)[0], key=cv2.contourArea)
        hull_area = cv2.contourArea(cv2.convexHull(outline))
        if hull_area <= 0 or area[i] / hull_area < config.hex_min_solidity:
            continue
        # Six corners, not four: the light squares of a chessboard are a lattice too.
        corners = len(cv2.approxPolyDP(outline, 0.04 * cv2.arcLength(outline, True), True))
        if not 5 <= corners <= 8:
            continue
        pts.append(centroids[i])
        sizes.append(area[i])
    if not pts:
        return np.zeros((0, 2))
    pts_a, sizes_a = np.array(pts, float), np.array(sizes, float)
    # Cells of one board are about one size (perspective changes it slowly); the median size's
    # neighbours first, so the lattice is seeded from typical cells.
    order = np.argsort(np.abs(np.log(sizes_a / np.median(sizes_a))))
    return pts_a[order]


def light_cell_cues(gray: np.ndarray, config: LocateConfig) -> np.ndarray:
    """Centres of light, hexagon-like blobs bounded by dark lines (the cells of a hex board)."""
    blur = cv2.GaussianBlur(gray, (0, 0), 1.0)
    block = max(15, (gray.shape[1] // 20) | 1)
    light = cv2.adaptiveThreshold(blur, 255, cv2.ADAPTIVE_THRESH_MEAN_C, cv2.THRESH_BINARY, block, -4)
    light = cv2.morphologyEx(light, cv2.MORPH_OPEN, np.ones((3, 3), np.uint8))
    n, labels, stats, centroids = cv2.connectedComponentsWithStats(light, connectivity=4)
    area = stats[:, cv2.CC_STAT_AREA]
    keep = [i for i in range(1, n) if 30 <= area[i] <= gray.size * 0.02]
    pts, strength = [], []
    for i in keep:
        x, y, w, h = stats[i, :4]
        if not _hex_like_box(w, h, area[i], 5, config):
            continue
        # A cell is ringed by dark lines: compare the blob with a thin band around it.
        x0, y0 = max(0, x - 4), max(0, y - 4)
        crop = labels[y0:y + h + 4, x0:x + w + 4] == i
        band = cv2.dilate(crop.astype(np.uint8), np.ones((7, 7), np.uint8)).astype(bool) & ~crop
        patch = blur[y0:y + h + 4, x0:x + w + 4]
        contrast = float(patch[crop].mean()) - float(patch[band].mean())
        if contrast < config.hex_min_line_contrast:
            continue
        # Six corners, not four: the light squares of a chessboard are a lattice too.
        outline = max(cv2.findContours(crop.astype(np.uint8), cv2.RETR_EXTERNAL, cv2.CHAIN_APPROX_SIMPLE)[0],
                      key=cv2.contourArea)
        corners = len(cv2.approxPolyDP(outline, 0.04 * cv2.arcLength(outline, True), True))
        if not 5 <= corners <= 8:
            continue
        pts.append(centroids[i])
        strength.append(contrast)
    order = np.argsort(-np.array(strength)) if strength else []
    pts = [pts[k] for k in order]
    return np.array(pts, float).reshape(-1, 2)
