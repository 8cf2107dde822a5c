"""Lattice growing, the core of chessboard and hex-board localisation: cue points in, the largest
lattice they form out (companion/vision/locate/lattice.py, `grow_lattice`)."""

from __future__ import annotations

from dataclasses import replace

import numpy as np

from companion.vision.locate import LocateConfig
from companion.vision.locate.lattice import HEX_LATTICE, SQUARE_LATTICE, _CueMap, _densify, grow_lattice


def _warp(points: np.ndarray) -> np.ndarray:
    """Plane points (cell units) to pixels through a mild perspective, as a tilted camera sees them."""
    h = np.array([[38.0, 6.0, 640.0], [-4.0, 30.0, 360.0], [0.0004, 0.0012, 1.0]])
    q = np.column_stack([points, np.ones(len(points))]) @ h.T
    return q[:, :2] / q[:, 2:3]


def _hex_board(radius: int) -> np.ndarray:
    return np.array([(q, r) for q in range(-radius, radius + 1) for r in range(-radius, radius + 1)
                     if abs(q + r) <= radius], float)


def test_the_nearest_cue_lookup_agrees_with_measuring_every_cue():
    rng = np.random.default_rng(4)
    cues = rng.uniform([100, 50], [900, 600], (150, 2))
    lookup = _CueMap(cues)
    queries = rng.uniform([100, 50], [900, 600], (500, 2))
    index, d2 = lookup.nearest(queries)
    exact = np.sqrt(((queries[:, None, :] - cues[None]) ** 2).sum(-1).min(1))
    assert np.allclose(d2, ((cues[index] - queries) ** 2).sum(1))
    inside = ((queries >= cues.min(0)) & (queries <= cues.max(0))).all(1)
    # The raster is at half resolution: the cue found may be another one about as near.
    assert (np.sqrt(d2[inside]) <= exact[inside] + 2.0).all()
    assert (np.sqrt(d2) <= exact + 1e-9).mean() > 0.95
    # Beyond the cues' extent a near cue is still found: a lattice point just past the last cue
    # must be able to match it.
    leftmost = cues[np.argmin(cues[:, 0])]
    index, d2 = lookup.nearest(np.array([leftmost - [3.0, 0.0], [5000.0, 5000.0]]))
    assert index[0] == np.argmin(cues[:, 0]) and np.isclose(d2[0], 9.0)
    assert np.isclose(d2[1], ((cues[index[1]] - [5000.0, 5000.0]) ** 2).sum())


def test_a_hex_board_is_grown_past_a_denser_patch_of_other_cues_that_its_guesses_are_tried_after():
    rng = np.random.default_rng(7)
    cells = _hex_board(4)  # 61 cells
    visible = cells[rng.random(len(cells)) > 0.35]  # pieces hide a third of them
    board = _warp(HEX_LATTICE.plane(visible)) + rng.normal(0, 0.4, (len(visible), 2))
    # A grainy table beside the board: a small, complete lattice of cell-like blobs at a finer
    # spacing, every guess among them fully supported, and listed first (as typical-sized cells).
    patch = _hex_board(2) * 0.45 + [9.0, -2.0]
    grain = _warp(HEX_LATTICE.plane(patch))
    pts = np.vstack([grain, board])
    config = LocateConfig()
    assert config.hex_max_seeds <= 4  # the budget this test is about
    got = grow_lattice(pts, HEX_LATTICE, replace(config, max_seeds=config.hex_max_seeds), max_extent=8,
                       target=len(visible))
    assert got is not None
    idx, img = got
    on_board = {tuple(np.round(p, 6)) for p in board}
    assert sum(tuple(np.round(p, 6)) in on_board for p in img) >= 0.9 * len(board)
    assert len(img) == len({tuple(p) for p in np.round(img, 6)})
    # The lattice's indices are the board's own up to a lattice symmetry: neighbours stay neighbours.
    plane = HEX_LATTICE.plane(idx.astype(float))
    gaps = np.hypot(*(plane[:, None, :] - plane[None]).transpose(2, 0, 1))
    truth = {tuple(np.round(p, 6)): c for p, c in zip(board, visible)}
    true_plane = HEX_LATTICE.plane(np.array([truth[tuple(np.round(p, 6))] for p in img]))
    true_gaps = np.hypot(*(true_plane[:, None, :] - true_plane[None]).transpose(2, 0, 1))
    assert np.allclose(gaps, true_gaps, atol=1e-6)


def test_a_lattice_of_every_other_point_along_one_row_is_left_as_it_is_not_refined_off_a_line():
    # Halving its steps leaves the points in one row, through which no plane is fitted (the drawn
    # chessboard benchmark stopped on such a lattice with a TypeError).
    idx = np.array([(2 * k, 0) for k in range(6)])
    pts = _warp(idx.astype(float))
    got_idx, got_ids = _densify(pts, SQUARE_LATTICE, LocateConfig(), 8, (idx.copy(), np.arange(6)))
    assert sorted(map(tuple, got_idx)) == [(k, 0) for k in range(6)]
    assert sorted(got_ids.tolist()) == list(range(6))
