"""Board localisation on synthetic frames made here: a drawn board texture, warped by a random
perspective, covered by pyramid-like triangles and hand-like blobs, then blurred, noised and
JPEG-compressed. The true board-to-image homography is known, so corner error and the cell
assignment are checked against it.
"""

from __future__ import annotations

import json
import math
import time

import cv2
import numpy as np
import pytest

from companion.vision.calibrate import CameraIntrinsics
from companion.vision.locate import (BoardLock, BoardNotFound, BoardSpec, LocateConfig, Locator, annotate,
                                     locate)
from companion.vision.mapper import board_spec_from_truth

WIDTH, HEIGHT = 1280, 720
PX_PER_MM = 2.0

# Exits of the Martian Coasters 6x6 board, top row (rank 6) first (../shared/rules/equipment.md).
COASTER_EXITS = (
    ("RDL", "URDL", "URL", "UDL", "URL", "UDL"),
    ("UDL", "UDL", "RDL", "URD", "URL", "URDL"),
    ("RDL", "URL", "UDL", "URL", "UDL", "URD"),
    ("UDL", "URD", "RDL", "URD", "RDL", "URL"),
    ("URDL", "RDL", "UDL", "URL", "URD", "URD"),
    ("URD", "RDL", "URD", "RDL", "URDL", "URL"),
)
BGR = {"red": (40, 40, 200), "yellow": (40, 200, 225), "blue": (190, 90, 30), "green": (60, 160, 40),
       "orange": (30, 120, 240), "purple": (150, 50, 120), "cyan": (200, 190, 40), "black": (30, 30, 30),
       "white": (235, 235, 235), "clear": (200, 200, 190)}


# ------------------------------------------------------------------------------------------------
# Board textures, in board-plane millimetres (origin as in companion.vision.locate), drawn at
# PX_PER_MM into an image whose pixel (0, 0) is board point `origin` with y flipped.


def _texture_frame(spec: BoardSpec, margin_mm: float):
    outline = spec.outline()
    lo, hi = outline.min(0) - margin_mm, outline.max(0) + margin_mm
    w, h = np.ceil((hi - lo) * PX_PER_MM).astype(int)
    # texture px = (x - lo_x) * s, (hi_y - y) * s
    to_tex = np.array([[PX_PER_MM, 0, -lo[0] * PX_PER_MM], [0, -PX_PER_MM, hi[1] * PX_PER_MM], [0, 0, 1]])
    return int(w), int(h), to_tex


def _poly(to_tex: np.ndarray, pts) -> np.ndarray:
    p = np.asarray(pts, float) @ to_tex[:2, :2].T + to_tex[:2, 2]
    return np.round(p * 16).astype(np.int32)


def draw_board(spec: BoardSpec, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(BGR texture, mask of the board's own pixels, board mm -> texture px)."""
    border = 12.0 if spec.kind == "chess" else (4.0 if spec.kind == "hex" else 0.0)
    w, h, to_tex = _texture_frame(spec, border + 2)
    tex = np.zeros((h, w, 3), np.uint8)
    mask = np.zeros((h, w), np.uint8)
    fill = lambda pts, colour: cv2.fillPoly(tex, [_poly(to_tex, pts)], colour, cv2.LINE_AA, 4)  # noqa: E731
    if spec.kind == "chess":
        c = spec.cell_mm
        wood = tuple(int(v) for v in rng.integers(60, 140, 3))
        outer = [(-border, -border), (8 * c + border, -border), (8 * c + border, 8 * c + border), (-border, 8 * c + border)]
        fill(outer, wood)
        cv2.fillPoly(mask, [_poly(to_tex, outer)], 255, cv2.LINE_8, 4)
        dark = tuple(int(v) for v in rng.integers(25, 80, 3))
        light = tuple(int(v) for v in rng.integers(175, 245, 3))
        for r in range(8):
            for f in range(8):
                fill([(f * c, r * c), ((f + 1) * c, r * c), ((f + 1) * c, (r + 1) * c), (f * c, (r + 1) * c)],
                     dark if (f + r) % 2 == 0 else light)
    elif spec.kind == "coasters":
        c = spec.cell_mm
        side = spec.coaster_side_mm
        for pos, colour in enumerate(spec.coaster_colours):
            ox, oy = spec.coaster_origin(pos)
            quad = [(ox, oy), (ox + side, oy), (ox + side, oy + side), (ox, oy + side)]
            base = np.array(BGR[colour], int) + rng.integers(-15, 16, 3)
            fill(quad, tuple(int(v) for v in np.clip(base, 0, 255)))
            cv2.fillPoly(mask, [_poly(to_tex, quad)], 255, cv2.LINE_8, 4)
            for k in (1, 2):
                for a, b in (((ox + k * c, oy), (ox + k * c, oy + side)), ((ox, oy + k * c), (ox + side, oy + k * c))):
                    cv2.line(tex, tuple(_poly(to_tex, [a])[0]), tuple(_poly(to_tex, [b])[0]), (30, 30, 30), 2,
                             cv2.LINE_AA, 4)
            inner = {0: (side, side), 1: (0, side), 2: (side, 0), 3: (0, 0)}[pos]
            dot = (ox + inner[0] + (-6 if inner[0] else 6), oy + inner[1] + (-6 if inner[1] else 6))
            cv2.circle(tex, tuple(_poly(to_tex, [dot])[0]), int(3 * PX_PER_MM * 16), (20, 20, 20), -1, cv2.LINE_AA, 4)
        # Arrow marks on the squares' edges, pointing out of each allowed exit.
        for name, poly in spec.cells():
            f, r = ord(name[0]) - 97, int(name[1:]) - 1
            cx, cy = poly.mean(0)
            for letter in COASTER_EXITS[5 - r][f]:
                dx, dy = {"U": (0, 1), "D": (0, -1), "R": (1, 0), "L": (-1, 0)}[letter]
                tip = (cx + dx * 0.45 * c, cy + dy * 0.45 * c)
                back = (cx + dx * 0.3 * c, cy + dy * 0.3 * c)
                px, py = -dy * 0.08 * c, dx * 0.08 * c
                fill([tip, (back[0] + px, back[1] + py), (back[0] - px, back[1] - py)], (25, 25, 25))
    elif spec.kind == "hex":
        outline = spec.outline()
        centre_pts = outline * (1 + border / np.linalg.norm(outline[0]))
        ink = tuple(int(v) for v in rng.integers(20, 70, 3))
        fill(centre_pts, ink)
        cv2.fillPoly(mask, [_poly(to_tex, centre_pts)], 255, cv2.LINE_8, 4)
        paper = tuple(int(v) for v in rng.integers(180, 240, 3))
        for _, poly in spec.cells():
            centre = poly.mean(0)
            fill(centre + (poly - centre) * 0.86, paper)
    else:
        m = spec.marker_mm
        paper = [(-m / 2 - 10, -m / 2 - 10), (m / 2 + 10, -m / 2 - 10), (m / 2 + 10, m / 2 + 10), (-m / 2 - 10, m / 2 + 10)]
        fill(paper, (235, 235, 235))
        cv2.fillPoly(mask, [_poly(to_tex, paper)], 255, cv2.LINE_8, 4)
        side = int(round(m * PX_PER_MM))
        marker = cv2.aruco.generateImageMarker(cv2.aruco.getPredefinedDictionary(cv2.aruco.DICT_4X4_50), 0, side)
        x0, y0 = np.round(_poly(to_tex, [(-m / 2, m / 2)])[0] / 16).astype(int)
        tex[y0:y0 + side, x0:x0 + side] = marker[:, :, None]
    return tex, mask, to_tex


def random_view(spec: BoardSpec, rng: np.random.Generator, fill_range=(0.5, 0.85)) -> np.ndarray:
    """A board mm -> image homography for a camera looking down at a slant from some seat."""
    # A bare table is seen as a patch of about 400 mm around the marker.
    outline = spec.outline() if spec.kind != "table" else np.array([(-200, -200), (200, -200), (200, 200), (-200, 200)], float)
    centre = outline.mean(0)
    size = float(np.ptp(outline, axis=0).max())
    for _ in range(100):
        angle = rng.uniform(0, 2 * math.pi)
        tilt = rng.uniform(0.0, 0.55)
        skew = rng.uniform(-0.15, 0.15)
        scale = rng.uniform(*fill_range) * HEIGHT / size
        ca, sa = math.cos(angle), math.sin(angle)
        # board mm -> board units centred, turned; then a projective tilt (far side smaller); then pixels.
        m1 = np.array([[ca / size, -sa / size, 0], [sa / size, ca / size, 0], [0, 0, 1]]) @ \
            np.array([[1, 0, -centre[0]], [0, 1, -centre[1]], [0, 0, 1]])
        tiltm = np.array([[1, 0, 0], [0, 1, 0], [skew, tilt, 1]])
        shift = rng.uniform(-0.12, 0.12, 2) * [WIDTH, HEIGHT]
        m2 = np.array([[scale * size, 0, WIDTH / 2 + shift[0]], [0, -scale * size, HEIGHT / 2 + shift[1]], [0, 0, 1]])
        h = m2 @ tiltm @ m1
        img = _apply(h, outline)
        if img.min() > 15 and img[:, 0].max() < WIDTH - 15 and img[:, 1].max() < HEIGHT - 15:
            return h
    raise AssertionError("no view fits the frame")


def _apply(h: np.ndarray, pts: np.ndarray) -> np.ndarray:
    p = np.asarray(pts, float) @ h[:2, :2].T + h[:2, 2]
    return p / (np.asarray(pts, float) @ h[2, :2] + h[2, 2])[:, None]


def _table(rng: np.random.Generator) -> np.ndarray:
    base = rng.integers(90, 190)
    tint = rng.integers(-12, 13, 3)
    low = cv2.resize(rng.normal(0, 10, (HEIGHT // 40, WIDTH // 40, 3)).astype(np.float32), (WIDTH, HEIGHT))
    streaks = cv2.resize(rng.normal(0, 5, (HEIGHT, 8, 1)).astype(np.float32), (WIDTH, HEIGHT))[:, :, None]
    return np.clip(base + tint + low + streaks, 0, 255).astype(np.uint8)


def make_scene(spec: BoardSpec, seed: int, pieces: float = 0.35, hands: int | None = None, view: np.ndarray | None = None,
               quality: bool = True) -> tuple[np.ndarray, np.ndarray]:
    """(BGR frame, true board mm -> image homography) of one synthetic scene."""
    rng = np.random.default_rng(seed)
    tex, mask, to_tex = draw_board(spec, rng)
    h = random_view(spec, rng) if view is None else view
    warp = h @ np.linalg.inv(to_tex)
    frame = _table(rng)
    board = cv2.warpPerspective(tex, warp, (WIDTH, HEIGHT), flags=cv2.INTER_AREA)
    m = cv2.warpPerspective(mask, warp, (WIDTH, HEIGHT), flags=cv2.INTER_LINEAR).astype(np.float32)[:, :, None] / 255
    frame = (frame * (1 - m) + board * m).astype(np.uint8)
    # Light falls off across the table.
    gx = np.linspace(rng.uniform(0.75, 1.0), rng.uniform(0.9, 1.15), WIDTH, dtype=np.float32)
    gy = np.linspace(rng.uniform(0.8, 1.0), rng.uniform(0.9, 1.1), HEIGHT, dtype=np.float32)
    frame = np.clip(frame * (gy[:, None] * gx[None, :])[:, :, None], 0, 255).astype(np.uint8)
    # On a bare table the pieces stand anywhere except on the marker sheet.
    scatter = rng.uniform(-150, 150, (40, 2))
    scatter = scatter[np.abs(scatter).max(1) > spec.marker_mm][:20]
    cells = spec.cells() or [(str(k), np.array([[x, y]])) for k, (x, y) in enumerate(scatter)]
    cell_px = _local_cell_px(spec, h)
    for k in rng.permutation(len(cells))[: int(round(pieces * len(cells)))]:
        base = _apply(h, cells[k][1].mean(0, keepdims=True))[0] + rng.normal(0, 0.06 * cell_px, 2)
        size = rng.choice([0.56, 0.78, 1.0])
        half = 0.5 * size * cell_px * rng.uniform(0.9, 1.1)
        height = 1.6 * size * cell_px * rng.uniform(0.8, 1.1)
        lean = rng.normal(0, 0.15) * height
        tri = np.array([(base[0] - half, base[1] + 0.25 * half), (base[0] + half, base[1] + 0.25 * half),
                        (base[0] + lean, base[1] - height)])
        colour = np.array(BGR[str(rng.choice(list(BGR)))], float)
        overlay = frame.copy()
        cv2.fillPoly(overlay, [np.round(tri * 16).astype(np.int32)], colour.tolist(), cv2.LINE_AA, 4)
        shade = np.array(tri)
        shade[1] = (tri[1] + tri[2]) / 2 + (tri[0] - tri[1]) * 0.1
        cv2.fillPoly(overlay, [np.round(shade * 16).astype(np.int32)], (colour * 0.7).tolist(), cv2.LINE_AA, 4)
        alpha = rng.uniform(0.6, 0.9)
        frame = cv2.addWeighted(overlay, alpha, frame, 1 - alpha, 0)
    n_hands = int(rng.integers(0, 3)) if hands is None else hands
    centre = _apply(h, spec.outline().mean(0, keepdims=True))[0]
    for _ in range(n_hands):
        skin = np.array([rng.uniform(90, 150), rng.uniform(130, 180), rng.uniform(180, 235)])
        at = centre + rng.normal(0, 1.8, 2) * cell_px
        edge = np.array([at[0], HEIGHT + 50]) if rng.random() < 0.6 else np.array([-50 if at[0] < WIDTH / 2 else WIDTH + 50, at[1]])
        cv2.line(frame, tuple(int(v) for v in at), tuple(int(v) for v in edge), (skin * 0.9).tolist(), int(1.3 * cell_px))
        cv2.ellipse(frame, (int(at[0]), int(at[1])), (int(1.1 * cell_px), int(0.8 * cell_px)), rng.uniform(0, 180),
                    0, 360, skin.tolist(), -1, cv2.LINE_AA)
    if quality:
        sigma = rng.uniform(0.3, 1.2)
        frame = cv2.GaussianBlur(frame, (0, 0), sigma)
        frame = np.clip(frame + rng.normal(0, rng.uniform(1, 5), frame.shape), 0, 255).astype(np.uint8)
        ok, buf = cv2.imencode(".jpg", frame, [cv2.IMWRITE_JPEG_QUALITY, int(rng.integers(55, 92))])
        frame = cv2.imdecode(buf, cv2.IMREAD_COLOR)
    return frame, h


def _local_cell_px(spec: BoardSpec, h: np.ndarray) -> float:
    cell = spec.hex_mm * math.sqrt(3) if spec.kind == "hex" else (spec.marker_mm / 2 if spec.kind == "table" else spec.cell_mm)
    c = spec.outline().mean(0)
    p = _apply(h, np.array([c, c + [cell, 0], c + [0, cell]]))
    return float(min(np.hypot(*(p[1] - p[0])), np.hypot(*(p[2] - p[0]))))


def evaluate(location, spec: BoardSpec, h_true: np.ndarray) -> tuple[float, bool]:
    """(mean corner error as a fraction of the board's side, every cell assigned correctly)."""
    true_c = _apply(h_true, spec.playing_corners)
    got_c = location.corners
    side = np.mean([np.hypot(*(true_c[i] - true_c[i - 1])) for i in range(len(true_c))])
    err = float(np.mean(np.hypot(*(got_c - true_c).T))) / side
    inv = np.linalg.inv(h_true)
    cells_ok = True
    for cell, (name, poly) in zip(location.cells(), spec.cells()):
        assert cell.name == name
        board_pt = _apply(inv, np.array([cell.centre]))[0]
        if cv2.pointPolygonTest(poly.astype(np.float32), (float(board_pt[0]), float(board_pt[1])), False) < 0:
            cells_ok = False
    return err, cells_ok


def a1_point(spec: BoardSpec, h_true: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """Where a person at set-up would point at a1: near the true a1 corner."""
    return _apply(h_true, spec.playing_corners[:1])[0] + rng.normal(0, 5, 2)


SPECS = {
    "chess": BoardSpec("chess"),
    "chess-6x6": BoardSpec("chess", area="6x6"),
    "chess-8x4": BoardSpec("chess", area="8x4"),
    "coasters": BoardSpec("coasters", cell_mm=27.0),
    "hex": BoardSpec("hex", hex_radius=3, hex_mm=20.0),
    "table": BoardSpec("table", marker_mm=50.0),
}


def run_case(name: str, seed: int, pieces: float = 0.35, hands: int | None = None):
    spec = SPECS[name]
    if name == "table" and hands is None:
        hands = 0  # a hand over the single marker hides the table; the lock then keeps the last location
    frame, h_true = make_scene(spec, seed, pieces=pieces, hands=hands)
    rng = np.random.default_rng(seed + 999)
    loc = Locator(spec).locate(frame, a1_near=a1_point(spec, h_true, rng))
    return loc, spec, h_true


# ------------------------------------------------------------------------------------------------
# Tests


@pytest.mark.parametrize("name", list(SPECS))
def test_clean_board_is_located_precisely(name):
    loc, spec, h_true = run_case(name, seed=11, pieces=0.0, hands=0)
    err, cells_ok = evaluate(loc, spec, h_true)
    # Hex cells are found by their centres, which pieces and perspective pull a little off.
    limit = {"hex": 0.01, "table": 0.02}.get(name, 0.005)
    assert err < limit, f"{name}: corner error {err:.4f} of the board side"
    assert cells_ok
    assert 0.5 < loc.confidence <= 1.0


# (failures allowed in 20 frames, worst corner error per frame, mean corner error), as fractions of
# the board's side. The issue asks for >= 99.5 % found and a mean error <= 1 %; the hex finder
# does not reach that yet (see docs/calibration.md), and a table's "side" is its 50 mm marker.
RATE_LIMITS = {"chess": (1, 0.02, 0.01), "chess-6x6": (1, 0.02, 0.01), "chess-8x4": (1, 0.02, 0.01),
               "coasters": (1, 0.02, 0.01), "hex": (1, 0.02, 0.01), "table": (1, 0.03, 0.02)}


@pytest.mark.parametrize("name", list(RATE_LIMITS))
def test_localisation_rate_with_pieces_and_hands(name):
    """Frames with pieces on a third to a half of the cells and 0-2 hands: nearly all located."""
    allowed, worst, mean = RATE_LIMITS[name]
    failures, errors = [], []
    for seed in range(100, 120):
        try:
            loc, spec, h_true = run_case(name, seed, pieces=0.35 + 0.15 * (seed % 2))
        except BoardNotFound as exc:
            failures.append((seed, str(exc)))
            continue
        err, cells_ok = evaluate(loc, spec, h_true)
        if not cells_ok or err > worst:
            failures.append((seed, f"error {err:.4f}, cells ok {cells_ok}"))
        else:
            errors.append(err)
    assert len(failures) <= allowed, failures
    assert np.mean(errors) <= mean  # over the frames counted as found


@pytest.mark.parametrize("seed", [10034, 10100, 10120, 10210])
def test_coasters_half_hidden_by_an_arm_are_not_shrunk_off_it(seed):
    """An arm across one side of the board (bench_locate's frames, which failed before session 6):
    the hand's skin no longer counts against the board that runs under it."""
    loc, spec, h_true = run_case("coasters", seed, pieces=0.35 + 0.15 * (seed % 2))
    err, cells_ok = evaluate(loc, spec, h_true)
    assert cells_ok and err < 0.02


@pytest.mark.parametrize("seed", [10112, 10123, 10144, 10230])
def test_a_hand_over_a_hex_boards_edge_row_does_not_move_the_board_a_row_off(seed):
    """bench_locate's frames that failed before session 7: with an edge row under a hand, a board
    moved a row away from the hand showed as many cells; its outline lies on no edge of the picture."""
    loc, spec, h_true = run_case("hex", seed, pieces=0.35 + 0.15 * (seed % 2))
    err, cells_ok = evaluate(loc, spec, h_true)
    assert cells_ok and err < 0.03  # a row off is about 0.25


def test_chessboard_orientation_is_kept_from_the_previous_location():
    spec = SPECS["chess"]
    frame, h_true = make_scene(spec, 5, pieces=0.2, hands=0)
    locator = Locator(spec)
    first = locator.locate(frame, a1_near=a1_point(spec, h_true, np.random.default_rng(0)))
    # The same board in a new frame, with no hint: the previous location's a1 decides.
    again = locator.locate(frame, previous=first)
    assert np.allclose(again.corners, first.corners, atol=0.5)
    assert evaluate(again, spec, h_true)[1]


def test_a1_is_a_dark_square_fixes_quarter_turns():
    """With a hint pointing at h1's corner, a1 (dark) cannot be put there; the nearest dark corner is used."""
    spec = SPECS["chess"]
    frame, h_true = make_scene(spec, 6, pieces=0.0, hands=0)
    h1_corner = _apply(h_true, np.array([[8 * spec.cell_mm, 0.0]]))[0]
    loc = Locator(spec).locate(frame, a1_near=h1_corner)
    a1_got = loc.corners[0]
    candidates = _apply(h_true, np.array([[0.0, 0.0], [8 * spec.cell_mm, 8 * spec.cell_mm]]))
    assert min(np.hypot(*(a1_got - c)) for c in candidates) < 3.0


def test_too_dark_frame_is_refused_with_the_reason():
    frame, _ = make_scene(SPECS["chess"], 3, hands=0)
    with pytest.raises(BoardNotFound) as err:
        locate((frame * 0.08).astype(np.uint8), SPECS["chess"])
    assert err.value.reason == "too-dark"
    assert "brightness" in str(err.value)


@pytest.mark.parametrize("game, seed, framing", [("space-arena", 6102, "referee"), ("zamboni-wars", 7057, "free")])
def test_a_lit_board_on_a_dark_cloth_is_not_refused_as_too_dark(game, seed, framing):
    # Pictures whose mean brightness is 30-35 (the cloth) round a board plain to see: the
    # picture's brightest part is what says whether it is too dark.
    frame, spec, h_true, a1 = _rendered_board(game, seed, framing)
    assert cv2.cvtColor(frame, cv2.COLOR_BGR2GRAY).mean() < 35
    _found_right(frame, spec, h_true, a1)


def test_a_chessboard_near_the_picture_s_edge_grown_along_its_diagonals_is_read_as_its_own_corners():
    # Referee render 6132 (Icebomb Arena, 8x4 area): only every other corner grew into the lattice,
    # a square lattice along the board's diagonals. Read as grown, its few alternating windows tied
    # with one past the picture's bottom edge, and the board, wholly in view, was refused as cut.
    frame, spec, h_true, a1 = _rendered_board("icebomb-arena", 6132, "referee")
    _found_right(frame, spec, h_true, a1)


def test_a_chessboard_with_two_strays_beyond_its_wide_border_is_not_put_a_column_onto_it():
    # Referee render 6131 (Icebomb Arena): the corners of two pieces on the table two columns past
    # the board's last corners, across its wide wooden border, stretched the lattice so that the board's
    # window was sought a column onto the border.
    frame, spec, h_true, a1 = _rendered_board("icebomb-arena", 6131, "referee")
    _found_right(frame, spec, h_true, a1)


def test_a_chessboard_the_picture_cuts_is_not_read_along_its_diagonals():
    # Freely framed render 7081: the board's corner runs past the picture's bottom edge. Its lattice
    # alternates well (55 of 64 cells) and is refused as cut; read along its diagonals it was put,
    # turned an eighth, on wrong cells.
    frame, spec, h_true, a1 = _rendered_board("icebomb-arena", 7081, "free")
    with pytest.raises(BoardNotFound) as err:
        Locator(spec).locate(frame, a1_near=a1)
    assert err.value.reason == "cut-by-frame"


def test_a_board_whose_colours_differ_but_grey_levels_match_is_found_through_its_colours():
    spec = SPECS["chess"]
    frame, h_true = make_scene(spec, 8, pieces=0.0, hands=0)
    g = cv2.cvtColor(frame, cv2.COLOR_BGR2GRAY).astype(np.float32)
    # Blue where the drawing was light, red where dark, the grey level rising only from 60 to 68.
    blue, red = g * 0.8, (60.0 + g / 32 - 0.114 * g * 0.8) / 0.299
    recoloured = np.dstack([blue, np.zeros_like(g), red]).clip(0, 255).astype(np.uint8)
    assert cv2.meanStdDev(cv2.cvtColor(recoloured, cv2.COLOR_BGR2GRAY))[1][0][0] < 5  # too little to see in grey
    a1 = tuple(_apply(h_true, spec.playing_corners[:1])[0])
    loc = Locator(spec).locate(recoloured, a1_near=a1)
    assert evaluate(loc, spec, h_true)[1]
    assert np.allclose(loc.corners, Locator(spec).locate(frame, a1_near=a1).corners, atol=1.0)  # as in grey
    # Without colour either, nothing to see: still refused, with the reason.
    with pytest.raises(BoardNotFound) as err:
        locate(cv2.cvtColor(cv2.cvtColor(recoloured, cv2.COLOR_BGR2GRAY), cv2.COLOR_GRAY2BGR), spec)
    assert err.value.reason == "low-contrast"


@pytest.mark.parametrize("name", ["chess", "coasters"])
def test_board_cut_by_the_frame_edge_is_reported(name):
    spec = SPECS[name]
    rng = np.random.default_rng(4)
    h = random_view(spec, rng, fill_range=(0.7, 0.75))
    # Slide the view so a third of the board is off the right edge.
    corners = _apply(h, spec.outline())
    shift = WIDTH - corners[:, 0].min() - 0.65 * np.ptp(corners[:, 0])
    h = np.array([[1, 0, shift], [0, 1, 0], [0, 0, 1]]) @ h
    frame, _ = make_scene(spec, 4, pieces=0.1, hands=0, view=h)
    with pytest.raises(BoardNotFound) as err:
        locate(frame, spec)
    assert err.value.reason == "cut-by-frame"


@pytest.mark.parametrize("frame_kind, asked", [("coasters", "chess"), ("hex", "chess"), ("chess", "coasters"),
                                               ("chess", "hex"), ("hex", "coasters")])
def test_wrong_board_kind_is_not_mistaken_for_the_asked_one(frame_kind, asked):
    frame, _ = make_scene(SPECS[frame_kind], 21, pieces=0.2, hands=0)
    with pytest.raises(BoardNotFound) as err:
        locate(frame, SPECS[asked])
    assert err.value.reason in ("wrong-board-kind", "no-board")


def test_bare_table_without_marker_is_refused():
    frame = _table(np.random.default_rng(1))
    with pytest.raises(BoardNotFound) as err:
        locate(frame, SPECS["table"])
    assert err.value.reason == "no-markers"


def test_cell_at_names_the_cell_under_a_point():
    loc, spec, h_true = run_case("chess", 12, pieces=0.0, hands=0)
    c3 = _apply(h_true, np.array([[2.5 * spec.cell_mm, 2.5 * spec.cell_mm]]))
    assert loc.cell_at(tuple(c3[0])) == "c3"
    off = _apply(h_true, np.array([[-20.0, -20.0]]))
    assert loc.cell_at(tuple(off[0])) is None
    loc6, spec6, h6 = run_case("chess-6x6", 12, pieces=0.0, hands=0)
    # On the 6x6 area (b2-g7 of the chessboard) the board's c3 is the area's b2.
    c3 = _apply(h6, np.array([[2.5 * spec.cell_mm, 2.5 * spec.cell_mm]]))
    assert loc6.cell_at(tuple(c3[0])) == "b2"


def test_location_json_is_complete():
    loc, spec, _ = run_case("hex", 13, pieces=0.0, hands=0)
    data = json.loads(json.dumps(loc.to_json()))
    assert data["board"]["kind"] == "hex"
    assert len(data["cells"]) == 37 and data["cells"][0]["name"] == "0,-3"
    assert len(data["corners"]) == 6
    assert data["pose"] is None


def test_hex_cells_are_named_and_ordered_as_the_hex_grid_names_them():
    from companion.boards.hexgrid import hex_grid
    from companion.vision.mapper import Mapper
    spec = BoardSpec("hex", hex_radius=3, hex_mm=20.0)
    grid = hex_grid(3)
    assert [name for name, _ in spec.cells()] == [grid.name(c) for c in grid.cells]
    # The mapper names a board-plane point by its own arithmetic: the two must agree everywhere.
    mapper = Mapper("ice-arena")
    for name, poly in spec.cells():
        assert mapper.cell_of(spec, tuple(poly.mean(0)))[0] == name
    # hexgrid's r grows towards the south edge (the plane's y is north): '0,-3' is on the north edge.
    cells = dict(spec.cells())
    assert np.allclose(cells["0,0"].mean(0), 0.0)
    assert math.isclose(cells["0,-3"].mean(0)[1], 3 * 1.5 * 20.0)
    assert math.isclose(cells["0,3"].mean(0)[1], -3 * 1.5 * 20.0)


def test_pose_with_intrinsics_puts_the_board_in_front_of_the_camera():
    spec = SPECS["chess"]
    k = ((900.0, 0.0, WIDTH / 2), (0.0, 900.0, HEIGHT / 2), (0.0, 0.0, 1.0))
    intr = CameraIntrinsics((WIDTH, HEIGHT), k, (0.0, 0.0, 0.0, 0.0, 0.0), 0.3)
    frame, h_true = make_scene(spec, 14, pieces=0.0, hands=0)
    loc = Locator(spec, intr).locate(frame, a1_near=a1_point(spec, h_true, np.random.default_rng(1)))
    assert loc.undistorted and loc.pose is not None
    assert loc.pose[1][2] > 0  # the board is in front of the camera
    assert evaluate(loc, spec, h_true)[0] < 0.005


def test_lock_stays_locked_when_still_and_relocates_when_moved():
    spec = SPECS["chess"]
    rng = np.random.default_rng(8)
    view = random_view(spec, rng)
    lock = BoardLock(Locator(spec))
    frame, h_true = make_scene(spec, 30, pieces=0.3, hands=0, view=view)
    assert lock.update(frame, a1_near=a1_point(spec, h_true, rng)).state == "found"
    same, _ = make_scene(spec, 30, pieces=0.3, hands=1, view=view)
    status = lock.update(same)
    assert status.state in ("locked", "unsure"), status
    moved_view = np.array([[1, 0, 25], [0, 1, -12], [0, 0, 1]]) @ view
    moved, h_moved = make_scene(spec, 30, pieces=0.3, hands=0, view=moved_view)
    status = lock.update(moved)
    assert status.state == "moved", status
    assert evaluate(status.location, spec, h_moved)[0] < 0.01


def test_locked_check_is_cheap():
    spec = SPECS["chess"]
    frame, _ = make_scene(spec, 31, pieces=0.3, hands=0)
    locator = Locator(spec)
    start = time.perf_counter()
    for _ in range(3):
        locator.locate(frame)
    from_scratch = (time.perf_counter() - start) / 3
    lock = BoardLock(locator)
    lock.update(frame)
    start = time.perf_counter()
    for _ in range(20):
        status = lock.update(frame)
    per_frame = (time.perf_counter() - start) / 20
    assert status.state == "locked"
    # Against a search from scratch on the same machine, not a fixed time: machines here differ
    # several times over (session 31's ran 15.1 ms against a 15 ms bound). The benchmark script
    # holds the 5 ms target; a locked check costs well under a tenth of a search.
    assert per_frame < from_scratch / 5, (per_frame, from_scratch)


def test_annotate_draws_on_a_copy():
    loc, _, _ = run_case("coasters", 15, pieces=0.0, hands=0)
    frame = np.zeros((HEIGHT, WIDTH, 3), np.uint8)
    out = annotate(frame, loc)
    assert out.shape == frame.shape and out.any() and not frame.any()


def test_spec_rejects_bad_values():
    with pytest.raises(ValueError, match="board kind"):
        BoardSpec("go")
    with pytest.raises(ValueError, match="does not fit"):
        BoardSpec("chess", area="6x6", area_origin=(3, 0))
    with pytest.raises(ValueError, match="coaster colour"):
        BoardSpec("coasters", coaster_colours=("red", "red", "blue", "mauve"))
    assert BoardSpec("chess", area="6x6").area_box == (1, 1, 6, 6)
    assert BoardSpec("chess", area="8x4").area_box == (0, 0, 8, 4)


def test_config_holds_the_thresholds():
    strict = LocateConfig(min_brightness=250.0)
    frame, _ = make_scene(SPECS["chess"], 3, hands=0)
    with pytest.raises(BoardNotFound, match="too-dark"):
        locate(frame, SPECS["chess"], config=strict)


def test_cli_locate_prints_json_and_saves_the_annotated_image(tmp_path, capsys):
    from companion.cli import main
    frame, _ = make_scene(SPECS["chess"], 40, pieces=0.3, hands=0)
    image, drawn = tmp_path / "frame.png", tmp_path / "annotated.png"
    cv2.imwrite(str(image), frame)
    assert main(["locate", str(image), "--board", "chess", "--json", "--annotate", str(drawn)]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["found"] and len(data["cells"]) == 64 and data["cells"][0]["name"] == "a1"
    assert cv2.imread(str(drawn)).shape == frame.shape
    # The same frame asked as coasters: read fine, judged not found (exit 1) with the reason.
    assert main(["locate", str(image), "--board", "coasters", "--json"]) == 1
    assert json.loads(capsys.readouterr().out)["reason"] in ("no-board", "wrong-board-kind")
    assert main(["locate", str(tmp_path / "missing.png"), "--board", "hex"]) == 2


# ------------------------------------------------------------------------------------------------
# The scene generator's renders (companion/synth): the data the detector trains on. The truth is
# in each render's sidecar; frames whose playing area is not wholly in view are skipped.

def _rendered(game: str, seed: int, framing: str = "free"):
    pytest.importorskip("moderngl")
    from companion.synth.dataset import render_item
    try:
        from companion.synth.render import Renderer
        renderer = _rendered.renderer = getattr(_rendered, "renderer", None) or Renderer()
    except Exception as exc:  # noqa: BLE001 - no GL context here
        pytest.skip(f"the scene renderer is not usable here: {exc}")
    jpeg, truth = render_item(renderer, game, seed, WIDTH, HEIGHT, framing)
    return cv2.imdecode(np.frombuffer(jpeg, np.uint8), cv2.IMREAD_COLOR), truth


def _rendered_board(game: str, seed: int, framing: str = "free"):
    """A render, its board, the board's true mm -> pixel homography and a1's outer corner in the picture."""
    frame, truth = _rendered(game, seed, framing)
    spec = board_spec_from_truth(truth)
    h_true = np.array(truth["board"]["homography_mm_to_px"], float)
    return frame, spec, h_true, tuple(_apply(h_true, spec.playing_corners[:1])[0])


def _found_right(frame, spec, h_true, a1, max_error: float = 0.015):
    """Locates the board and checks every cell and the corners against the truth."""
    loc = Locator(spec).locate(frame, a1_near=a1)
    err, cells_ok = evaluate(loc, spec, h_true)
    assert cells_ok and err < max_error, (err, cells_ok)
    return loc


def _rendered_without_hands(game: str, seed: int, framing: str = "free"):
    """The render `_rendered` makes of the same scene, with its hands taken away."""
    from dataclasses import replace

    from companion.synth.render import encode_jpeg
    from companion.synth.scenes import sample_scene

    _rendered(game, seed, framing)  # the shared renderer, or a skip where there is none
    scene = sample_scene(game, seed, WIDTH, HEIGHT, framing)
    assert any(o.kind == "hand" for o in scene.objects), "the scene has no hand to take away"
    scene = replace(scene, objects=[o for o in scene.objects if o.kind != "hand"])
    jpeg = encode_jpeg(_rendered.renderer.render(scene).image, scene.look.jpeg_quality)
    return cv2.imdecode(np.frombuffer(jpeg, np.uint8), cv2.IMREAD_COLOR)


# Referee render 1541231401 (stored as datasets/referee test/000062): a hand over the hex board
# makes the search place it a ring off (confidence 0.19); without the hand it is found (0.78).
HAND_MISPLACES_HEX = ("ice-arena", 1541231401, "referee")


def test_a_board_placed_wrong_under_a_hand_is_put_right_by_the_lock_once_the_hand_has_gone():
    with_hand, spec, h_true, a1 = _rendered_board(*HAND_MISPLACES_HEX)
    clean = _rendered_without_hands(*HAND_MISPLACES_HEX)
    lock = BoardLock(Locator(spec))
    first = lock.update(with_hand, a1_near=a1)
    assert first.state == "found" and not evaluate(first.location, spec, h_true)[1]  # the premise
    # The next frame is the first without the hand (not still: it differs from the one before);
    # the one after it is still, and the lock searches it again.
    states = [lock.update(clean).state for _ in range(3)]
    assert states == ["locked", "found", "locked"]
    err, cells_ok = evaluate(lock.location, spec, h_true)
    assert cells_ok and err < 0.015


def test_the_a1_corner_pointed_at_set_up_stands_until_the_lock_finds_the_board():
    # Referee render 1381846692 (datasets/referee val/000078): a1 is not the corner the default
    # hint names, so a board found without the point set-up gave is named the wrong way round.
    _, spec, h_true, a1 = _rendered_board("ice-arena", 1381846692, "referee")
    frame = _rendered_without_hands("ice-arena", 1381846692, "referee")
    lock = BoardLock(Locator(spec))
    first = lock.update(np.zeros_like(frame), a1_near=a1)
    assert first.state == "lost" and first.error.reason == "too-dark"
    status = lock.update(frame)
    assert status.state == "found" and evaluate(status.location, spec, h_true)[1]


def test_the_lock_confirms_a_board_on_a_still_frame_and_a_surer_placement_replaces_a_hand_s():
    with_hand, spec, h_true, a1 = _rendered_board(*HAND_MISPLACES_HEX)
    clean = _rendered_without_hands(*HAND_MISPLACES_HEX)
    lock = BoardLock(Locator(spec))
    assert lock.update(clean, a1_near=a1).state == "found" and not lock.confirmed
    assert lock.update(clean).state == "locked" and lock.confirmed  # still: searched again, the same board
    for _ in range(3):
        lock.update(with_hand)
    assert evaluate(lock.location, spec, h_true)[1]
    # Unconfirmed, a hand resting still over the board replaces a board found on the first frame
    # (not known to be still), and the board found once the hand has gone, surer, replaces that.
    lock = BoardLock(Locator(spec))
    lock.update(clean, a1_near=a1)
    states = [lock.update(frame).state for frame in (with_hand, with_hand, clean, clean)]
    assert states == ["locked", "found", "locked", "found"], states
    assert evaluate(lock.location, spec, h_true)[1]


# Seeds whose renders show the whole playing area (scripts/bench_locate_synth.py measures the
# rates on many more).
# Most were failures before the line-based hex cues, the two-way coaster masks and the chessboard
# window that looks at its surround.
# The "referee" seeds show whole boards from further back: 5006 and 5016 (faint lines on a soft
# picture, found only at half resolution) and 5012 (a grainy table gives more cell-like blobs for
# the wrong line polarity) failed before both polarities and two scales were tried; zamboni-wars
# 5014 (an orange card beside the red coaster), 5016 (green felt, and pale coasters beside
# saturated pieces of their colour) and 5027 failed before other regions of a coaster's colour
# were offered to the colour judge and a table of that colour was kept out of it; zamboni-wars
# 7021 (a wood table in the yellow band, a navy card taken for the blue coaster: only the red and
# green coasters, side by side, were right) before a pair's corners were matched by trying turns;
# ice-arena 6003 and 6006 (wood grain beyond the board's edge taken for cell sides, the board put
# a ring off) before a side needed two of its three points on a line; ice-arena 5046 (hairlines on
# white paper on a red cloth: no cell closes) before the board's outline placed it; icebomb-arena
# 5040 and 5051 (the corner lattice grown on every other corner, turned 45 degrees, so no cells
# alternated) before that lattice was read as the board's own; icebomb-arena 5052 and 5059 (a
# pyramid's corner on the table one or two rows beyond the board, taken into the lattice) before a
# lone corner beyond a full row was left out; ice-arena 5020 (a blue board on brown wood, both of
# nearly one grey level: refused as low-contrast) before the board was sought in its colours;
# ice-arena 5053 (hairlines on white paper on a dark cloth: its outline's cells scored 0.067 on
# the picture's lines, under the 0.15 then asked) before an outline had to be a regular hexagon
# and could then be taken on less; ice-arena 5050 (a dark surround round the cells, pieces and
# shadows leaving three placements a ring apart within 0.2 cell of cellness: the board put a ring
# off) before the placement centred on the surround's hexagon was taken.
RENDERED_SEEDS = {"icebomb-arena": (5001, 5021, 5033, 5090), "space-arena": (5009, 5028, 5038),
                  "zamboni-wars": (5001, 5003, 5009), "ice-arena": (5000, 5003, 5004)}
REFEREE_SEEDS = {"icebomb-arena": (5040, 5051, 5052, 5059), "ice-arena": (5006, 5012, 5016, 6003, 6006, 5046, 5020, 5053, 5050), "zamboni-wars": (5014, 5016, 5027, 7021)}


@pytest.mark.parametrize("game, seed, framing", [(g, s, "free") for g, seeds in RENDERED_SEEDS.items() for s in seeds]
                         + [(g, s, "referee") for g, seeds in REFEREE_SEEDS.items() for s in seeds])
def test_rendered_scene_is_located_with_every_cell_right(game, seed, framing):
    frame, spec, h_true, a1 = _rendered_board(game, seed, framing)
    corners = _apply(h_true, spec.outline() if spec.kind == "hex" else spec.playing_corners)
    assert corners.min() >= 0 and corners[:, 0].max() < WIDTH and corners[:, 1].max() < HEIGHT
    _found_right(frame, spec, h_true, a1)


@pytest.mark.parametrize("seed", [5033, 5068])
def test_coasters_whose_corner_tip_is_cut_by_the_frame_are_found_while_every_cell_is_in_view(seed):
    frame, spec, h_true, a1 = _rendered_board("zamboni-wars", seed, "referee")
    corners = _apply(h_true, spec.outline())
    middles = _apply(h_true, np.array([polygon.mean(axis=0) for _, polygon in spec.cells()]))
    assert corners[:, 1].max() >= HEIGHT and middles[:, 1].max() < HEIGHT  # the render is as the test means
    _found_right(frame, spec, h_true, a1)


def test_coasters_far_off_whose_pieces_merge_with_them_at_the_working_width_are_found_in_the_full_picture():
    # A stored referee render (datasets/referee, train 213): a board about 190 pixels across at the
    # 640-pixel working width, where a blue pyramid on the yellow coaster joins the blue coaster's
    # region and no colour outline is a square. Refused before the full picture was searched again.
    # (Train 349 was the second such render; the working width finds it since session 40: see
    # test_two_coasters_side_by_side_all_that_was_found_are_placed_by_the_pairs_view.)
    from dataclasses import replace

    frame, spec, h_true, a1 = _rendered_board("zamboni-wars", 514398248, "referee")
    without_retry = replace(LocateConfig(), coaster_full_resolution_side_px=0.0)
    with pytest.raises(BoardNotFound):
        Locator(spec, config=without_retry).locate(frame, a1_near=a1)
    _found_right(frame, spec, h_true, a1)


# Referee renders (scripts/bench_locate_synth.py --framing referee --first-seed 6000), none with a
# hand: 6020, a green card overlapping the green coaster's corner and a pale blue coaster whose face
# falls outside blue's hue band (only its printed grid is blue): not found; 6080, cards of yellow and
# green touching the yellow coaster and lying beside the board, the pale blue coaster's grid only:
# the board put a coaster's side off; 6115, a green cloth under the green coaster and a red pyramid
# across the red coaster's edge: put on wrong cells.
@pytest.mark.parametrize("seed", [6020, 6080, 6115])
def test_coasters_the_first_look_misses_are_found_by_cutting_their_colours_regions_apart(seed):
    from dataclasses import replace

    frame, spec, h_true, a1 = _rendered_board("zamboni-wars", seed, "referee")
    # (Nor from one coaster alone, nor without the table's hues: since session 45 these place 6080 right too.)
    first_look_only = replace(LocateConfig(), coaster_second_look_below=0.0, coaster_full_resolution_side_px=0.0,
                              coaster_single_min_agreement=2.0, coaster_table_hue_share=2.0)
    try:
        found_right = evaluate(Locator(spec, config=first_look_only).locate(frame, a1_near=a1), spec, h_true)[1]
    except BoardNotFound:
        found_right = False
    assert not found_right  # the render is as the test means
    _found_right(frame, spec, h_true, a1)


@pytest.mark.parametrize("seed, framing", [(6148, "referee"), (7185, "free")])
def test_coasters_a_hand_bends_into_no_view_of_a_square_board_are_not_placed_on_wrong_cells(seed, framing):
    # A hand over the board: the coasters' outlines left in view fitted a quadrilateral (misfit 0.88
    # and 1.01) whose colours agreed well enough (0.83 for 6148) to place the board on wrong cells.
    # 6148 is placed right since session 45 by its one whole coaster (the test below).
    frame, spec, h_true, a1 = _rendered_board("zamboni-wars", seed, framing)
    no_single = LocateConfig(coaster_single_min_agreement=2.0)
    with pytest.raises(BoardNotFound, match="no view of a square board"):
        Locator(spec, config=no_single).locate(frame, a1_near=a1)
    loose = LocateConfig(coaster_max_view_misfit=math.inf, coaster_single_min_agreement=2.0)
    assert not evaluate(Locator(spec, config=loose).locate(frame, a1_near=a1), spec, h_true)[1]
    try:
        assert evaluate(Locator(spec).locate(frame, a1_near=a1), spec, h_true)[1]
    except BoardNotFound:
        pass


# A hand over most of the board leaves one coaster whole and bends the others' outlines: referee
# 6148 (refused: the outlines made no view of a square) and freely framed 7000 (refused: colours
# agreed 0.43) are placed by that coaster's four corners alone, turned as the others' colours say.
@pytest.mark.parametrize("seed, framing", [(6148, "referee"), (7000, "free")])
def test_coasters_of_which_a_hand_leaves_one_whole_are_placed_by_that_coaster(seed, framing):
    frame, spec, h_true, a1 = _rendered_board("zamboni-wars", seed, framing)
    with pytest.raises(BoardNotFound):
        Locator(spec, config=LocateConfig(coaster_single_min_agreement=2.0)).locate(frame, a1_near=a1)
    _found_right(frame, spec, h_true, a1, max_error=0.03)


# Freely framed 7195: the blue coaster's outline, bent by the arm across it, extrapolated to a board
# on wrong cells whose colours agreed 0.55 at the working width and 0.65 in the full picture's search
# for a board far off; one coaster alone is asked 0.6 and is not tried in that search.
def test_a_board_from_one_bent_coaster_is_refused_not_placed_on_wrong_cells():
    frame, spec, h_true, a1 = _rendered_board("zamboni-wars", 7195, "free")
    with pytest.raises(BoardNotFound):
        Locator(spec).locate(frame, a1_near=a1)
    anywhere = LocateConfig(coaster_single_min_agreement=0.5)
    assert not evaluate(Locator(spec, config=anywhere).locate(frame, a1_near=a1), spec, h_true)[1]


# Freely framed 7157, on a wooden table whose grain lies in yellow's hue band: the yellow coaster's
# region ran into the grain to the picture's edges and a streak of grain was taken for it, which put
# the board on wrong cells; without the table's own hues the coaster stands apart.
def test_a_coaster_of_the_tables_hue_band_is_looked_for_without_the_tables_hues():
    from companion.vision.locate.coasters import _table_hue

    frame, spec, h_true, a1 = _rendered_board("zamboni-wars", 7157, "free")
    hsv = cv2.cvtColor(frame, cv2.COLOR_BGR2HSV)
    config = LocateConfig()
    lit = (hsv[..., 1] >= config.coaster_min_saturation) & (hsv[..., 2] >= config.coaster_min_value)
    assert abs(_table_hue(hsv[..., 0], lit, config) - 16) <= 3  # the wood's hue, as the test means
    table_kept = LocateConfig(coaster_table_hue_share=2.0)
    assert not evaluate(Locator(spec, config=table_kept).locate(frame, a1_near=a1), spec, h_true)[1]
    _found_right(frame, spec, h_true, a1, max_error=0.04)


# 1622063492 (datasets/referee, train 349; a blue pyramid joins the blue coaster's region) and the
# freely framed render 7164 (a red cloth under the red coaster, the blue coaster pale): only the
# green and yellow coasters side by side are found. Their consensus matched their corners by the
# pair's middle, which two of their corners are equally near, and put the board a turn off:
# refused at the working width before (1622063492 then found in the full picture, 7164 not at all).
@pytest.mark.parametrize("seed, framing", [(1622063492, "referee"), (7164, "free")])
def test_two_coasters_side_by_side_all_that_was_found_are_placed_by_the_pairs_view(seed, framing):
    from dataclasses import replace

    from companion.vision.locate.coasters import _coaster_quads, _coaster_masks

    frame, spec, h_true, a1 = _rendered_board("zamboni-wars", seed, framing)
    # The coasters' colours as they were read before session 45: without the table's hues, a third
    # coaster of 1622063492 is found too.
    config = LocateConfig(coaster_table_hue_share=2.0)
    small = cv2.resize(frame, (config.work_width, round(frame.shape[0] * config.work_width / frame.shape[1])),
                       interpolation=cv2.INTER_AREA)
    assert len(_coaster_quads(_coaster_masks(small, spec, config), config)) == 2  # the render is as the test means
    first_look_only = replace(config, coaster_second_look_below=0.0, coaster_full_resolution_side_px=0.0)
    loc = Locator(spec, config=first_look_only).locate(frame, a1_near=a1)
    err, cells_ok = evaluate(loc, spec, h_true)
    assert cells_ok and err < 0.015, (err, cells_ok)


def test_a_coasters_region_cut_apart_from_a_card_touching_it_or_filled_inside_its_grid_outlines_it():
    from companion.vision.locate.coasters import _coaster_quads, _separated_outlines

    config = LocateConfig()
    min_area = config.coaster_min_area_fraction * 640 * 360
    square = np.array([[200, 100], [300, 110], [290, 210], [190, 200]], np.float64)

    def outlines_the_square(outlines) -> bool:
        return any(min(np.abs(np.roll(q, t, axis=0) - square).max() for t in range(4)) < 4.0 for q in outlines)

    touching = np.zeros((360, 640), np.uint8)
    cv2.fillConvexPoly(touching, square.astype(np.int32), 255)
    cv2.fillConvexPoly(touching, np.array([[300, 110], [420, 60], [450, 140], [330, 180]], np.int32), 255)  # a card
    cv2.line(touching, (296, 150), (310, 150), 255, 3)  # where the card meets the coaster's side
    grid = np.zeros_like(touching)
    cv2.polylines(grid, [square.astype(np.int32)], True, 255, 3)
    for t in (1 / 3, 2 / 3):
        for a, b, c, d in ((0, 1, 3, 2), (0, 3, 1, 2)):
            p = square[a] + t * (square[b] - square[a])
            q = square[c] + t * (square[d] - square[c])
            cv2.line(grid, tuple(np.round(p).astype(int)), tuple(np.round(q).astype(int)), 255, 3)
    for mask in (touching, grid):
        others: dict = {}
        found = _coaster_quads([[mask]], config, others)  # the first look's outlines miss the coaster
        assert not outlines_the_square(list(found.values()) + others.get(0, []))
        assert outlines_the_square(_separated_outlines([mask], min_area, config))


def test_a_hex_board_whose_lines_close_no_cell_is_placed_by_its_outline():
    frame, spec, h_true, a1 = _rendered_board("ice-arena", 5046, "referee")
    assert _found_right(frame, spec, h_true, a1, 0.01).method == "outline"
    # Grey paper on a grey table has no outline to go by: still a clear failure, not a guess.
    blank = np.full_like(frame, 128)
    with pytest.raises(BoardNotFound):
        Locator(spec).locate(blank)


# Referee renders (bench_locate_synth.py --framing referee --games ice-arena --first-seed 6000), no hand:
# 6029, white paper on a white table, its hairlines a few grey levels deep (17 cell cues, no lattice);
# 6161, a white board overexposed to 255 on a wooden table (9 cues), placed by its outline once the
# picture's contrast is equalised (its corners 1.9 % of a side off: an outline places less exactly).
@pytest.mark.parametrize("seed, max_error", [(6029, 0.015), (6161, 0.025)])
def test_a_hex_board_whose_hairlines_an_overexposed_picture_all_but_hides_is_found_with_its_contrast_equalised(
        seed, max_error):
    from dataclasses import replace

    frame, spec, h_true, a1 = _rendered_board("ice-arena", seed, "referee")
    with pytest.raises(BoardNotFound, match="no hex lattice"):  # the render is as the test means
        Locator(spec, config=replace(LocateConfig(), hex_equalised_clip=0.0)).locate(frame, a1_near=a1)
    _found_right(frame, spec, h_true, a1, max_error)


# Freely framed render 7063 (--games ice-arena --first-seed 7000, no hand): a light board plate a cell wider
# than the grid all round, pieces along its far edge. The true placement and the one a row further off
# (onto the plate's margin) tie on cellness. Two cues each place it right: the plate's hexagon by its
# centre, though its corners come out 2.9 % of its size off a regular hexagon's view (2 % is asked of an
# outline that places a board by itself), and the placements' outlines judged at the plate's margin. Judged
# at the cells' own outline only, the placement a row off won: its outline met the plate's edge on one side.
def test_a_hex_board_on_a_wide_plate_is_placed_by_the_plates_centre_or_its_edge():
    from dataclasses import replace

    frame, spec, h_true, a1 = _rendered_board("ice-arena", 7063, "free")
    strict_centre = replace(LocateConfig(), hex_centre_outline_max_residual=LocateConfig().hex_outline_max_residual)
    neither = replace(strict_centre, hex_outline_margin_step=1.0)  # outlines judged at the margin 1.0 alone
    by_centre = replace(LocateConfig(), hex_outline_margin_step=1.0)
    assert not evaluate(Locator(spec, config=neither).locate(frame, a1_near=a1), spec, h_true)[1]
    for config in (strict_centre, by_centre, LocateConfig()):
        loc = Locator(spec, config=config).locate(frame, a1_near=a1)
        assert evaluate(loc, spec, h_true)[1]


# Referee renders (--framing referee --games ice-arena --first-seed 6000) with a hand over the board's edge:
# the cells it hides show no lines, so the board and the one moved a row away from the hand, onto the
# plate's bare margin, tie on cellness. Judged by their outlines at the cells' own outline alone, neither
# outline stood out and the moved one, a little ahead on cellness, stayed (6074, 6153); at the margin where
# each placement's outline lies on the strongest edges, the true board's plate edge shows all round.
@pytest.mark.parametrize("seed", [6074, 6153])
def test_a_hex_board_under_a_hand_is_placed_by_its_plates_edge_not_moved_a_row_off(seed):
    from dataclasses import replace

    frame, spec, h_true, a1 = _rendered_board("ice-arena", seed, "referee")
    own_outline_only = replace(LocateConfig(), hex_outline_margin_step=1.0)  # the margin 1.0 alone
    assert not evaluate(Locator(spec, config=own_outline_only).locate(frame, a1_near=a1), spec, h_true)[1]
    # Fitted to the cells the hand leaves in view: every cell right, the corners up to 2.5 % of a side off.
    _found_right(frame, spec, h_true, a1, max_error=0.03)


# Drawn frames of bench_locate.py (hex, pieces and hands) whose true placement scores more than 2 and at most 3
# of summed cellness under the best: taken as tied (since the outlines are judged at the plate's margin), the
# outlines' edges place them; not taken as tied, the best on cellness stands, on wrong cells.
@pytest.mark.parametrize("seed", [10039, 10175])
def test_hex_placements_a_little_apart_on_cellness_are_told_apart_by_the_outline(seed):
    from dataclasses import replace

    spec = SPECS["hex"]
    frame, h_true = make_scene(spec, seed, pieces=0.35 + 0.15 * (seed % 2), hands=None)
    a1 = a1_point(spec, h_true, np.random.default_rng(seed + 999))
    narrow = replace(LocateConfig(), hex_placement_tie=2.0)
    assert not evaluate(Locator(spec, config=narrow).locate(frame, a1_near=a1), spec, h_true)[1]
    assert evaluate(Locator(spec).locate(frame, a1_near=a1), spec, h_true)[1]


# Freely framed renders (--games ice-arena --first-seed 7000) with the board cut by the picture's edge or
# not in view: 7079 (a board cut by the edge), 7107 (no lattice; equalised, the table's grain grows one
# explaining 7 of the 37 cells). Equalising the contrast there found wrong boards before it was asked
# only where no lattice grew and its lattice had to explain 0.3 of the cells.
@pytest.mark.parametrize("seed, reason", [(7079, "cut-by-frame"), (7107, "no-board")])
def test_equalising_the_contrast_finds_no_hex_board_where_none_is_wholly_in_view(seed, reason):
    frame, spec, h_true, a1 = _rendered_board("ice-arena", seed, "free")
    corners = _apply(h_true, spec.outline())
    assert not (corners.min() >= 0 and corners[:, 0].max() < WIDTH and corners[:, 1].max() < HEIGHT)
    with pytest.raises(BoardNotFound) as raised:
        Locator(spec).locate(frame, a1_near=a1)
    assert raised.value.reason == reason

def test_a_chessboard_whose_corner_lattice_filled_its_width_with_edge_junctions_is_not_put_two_columns_over():
    # Stored referee render train 60: the lattice took the board's edge junctions on two sides and
    # a stray corner beyond them, reached the nine-corner extent, and never grew over the board's
    # first two columns; every window it offered was the board two columns over (still found,
    # confidence 0.84, on wrong cells) before the lattice was grown on from itself.
    frame, spec, h_true, a1 = _rendered_board("icebomb-arena", 218380135, "referee")
    _found_right(frame, spec, h_true, a1, 0.01)


@pytest.mark.parametrize("seed", [2023536013, 263883174])
def test_a_hex_board_of_hairlines_too_faint_beside_its_pieces_edges_is_placed_by_its_outline(seed):
    # Two of the stored referee renders (datasets/referee, train 234 and 578): white paper on green
    # felt and on wood, the cells' hairlines a grey level or two, far under the share of the
    # pieces' edges that counts as a line. Refused before fainter lines were looked at.
    frame, spec, h_true, a1 = _rendered_board("ice-arena", seed, "referee")
    assert _found_right(frame, spec, h_true, a1).method == "outline"


def test_a_six_cornered_region_that_is_no_hexagon_in_perspective_is_not_taken_for_the_board():
    # White paper on a cream table, its hairlines too faint for a lattice: the one six-cornered
    # region of the grey picture is the paper merged with a patch of the table's light, whose corners
    # no view of the board's outline explains (15 % of its size off). Taken on its line score alone it
    # put the board on wrong cells; in grey alone, and without the contrast equalised, the board is
    # refused. With it equalised (the default) the hairlines grow a lattice on the right cells.
    from companion.vision.locate import LocateConfig

    frame, spec, h_true, a1 = _rendered_board("ice-arena", 5097, "referee")
    gray = cv2.cvtColor(frame, cv2.COLOR_BGR2GRAY)
    with pytest.raises(BoardNotFound):
        Locator(spec, config=LocateConfig(hex_equalised_clip=0.0)).locate(gray, a1_near=a1)
    location = Locator(spec).locate(gray, a1_near=a1)
    err, cells_ok = evaluate(location, spec, h_true)
    assert location.method == "lattice" and cells_ok and err < 0.015, (location.method, err, cells_ok)


def test_a_white_board_on_a_lit_beige_table_is_found_by_its_outline_in_colour():
    # The same picture in colour: the paper is far less coloured than the table round it, and its
    # outline in the picture's plainness (255 - saturation) is a hexagon in perspective.
    frame, spec, h_true, a1 = _rendered_board("ice-arena", 5097, "referee")
    assert _found_right(frame, spec, h_true, a1).method == "outline"


def test_the_coasters_sides_at_full_resolution_pull_a_rough_fit_onto_the_board():
    from companion.vision.locate import LocateConfig
    from companion.vision.locate.coasters import _coaster_sides_refined

    spec = SPECS["coasters"]
    before, after = [], []
    for seed in range(6):
        frame, h_true = make_scene(spec, seed, pieces=0.2, hands=0)
        corners = _apply(h_true, spec.outline())
        side = np.mean([np.hypot(*(corners[i] - corners[i - 1])) for i in range(4)])
        # A fit about 1 % of the board's side off, as the 640-pixel colour outlines give.
        moved = corners + np.random.default_rng(seed).normal(0, 0.01 * side, corners.shape)
        rough, _ = cv2.findHomography(spec.outline(), moved)
        refined = _coaster_sides_refined(rough, frame, spec, LocateConfig())
        for h, out in ((rough, before), (refined, after)):
            out.append(np.hypot(*(_apply(h, spec.outline()) - corners).T).mean() / side)
    assert np.mean(after) < 0.5 * np.mean(before)


def test_the_hex_outlines_masked_medians_are_numpys_median_of_each_rows_kept_values():
    from companion.vision.locate.hex import _masked_medians

    rng = np.random.default_rng(3)
    values = rng.random((3, 7, 25)).astype(np.float32)
    mask = rng.random(values.shape) < 0.6
    mask[0, 0] = False  # a row with nothing kept
    mask[1, 1] = False
    mask[1, 1, 4] = True  # and one with a single value
    got = _masked_medians(values, mask)
    assert np.isnan(got[0, 0]) and got[1, 1] == values[1, 1, 4]
    for i, j in np.ndindex(*mask.shape[:2]):
        if mask[i, j].any():
            assert got[i, j] == np.median(values[i, j][mask[i, j]])
