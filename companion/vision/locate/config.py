"""The localiser's thresholds, in one place to tune them (`LocateConfig`; docs/calibration.md explains each)."""

from __future__ import annotations

from dataclasses import dataclass

import cv2


@dataclass(frozen=True)
class LocateConfig:
    """Thresholds of the localiser; one place to tune them (docs/calibration.md explains each)."""

    work_width: int = 640
    """Frames are searched at this width; the final fit uses full-resolution corners."""
    min_brightness: float = 35.0
    brightness_percentile: float = 99.0
    """A picture is too dark when this percentile of its grey levels is under `min_brightness`: the
    board need not light up much of the frame (until session 41 the mean was asked, and boards on
    dark cloths were refused: zamboni-wars renders 7054, 7057, 7106 and space-arena 6102, means 30-35)."""
    min_contrast: float = 10.0
    xcorner_sigma: float = 1.6
    xcorner_rel_threshold: float = 0.06
    max_cues: int = 260
    neighbours: int = 8
    max_seeds: int = 40
    """Cell guesses grown into lattices at most, on squares (`hex_max_seeds` on hexes)."""
    grow_tolerance: float = 0.28
    """Fraction of a cell within which a cue is taken as the predicted lattice point."""
    enough_fraction: float = 0.85
    """Stop trying seeds once a lattice covers this fraction of the board's cue points."""
    settled_fraction: float = 0.5
    """Once the best lattice holds this share of the target, seeds among its own points are skipped."""
    min_lattice_points: int = 9
    lattice_fit_cells: float = 0.1
    """A lattice point counts when the lattice's homography puts it within this fraction of a cell."""
    lattice_fit_iterations: int = 100
    """RANSAC draws for that homography. A board's own lattice fits in a few draws; only lattices grown
    loosely from a wrong seed, a third of their points on one view, use them all (300 until session 24:
    the same boards and corners on the referee renders; `scripts/bench_locate.py --frames 300 --kinds hex`
    89 ms median, p95 162 ms with 300, 81-87 / 142-157 ms with 100; docs/calibration.md)."""
    min_checker_fraction: float = 0.30
    """The chosen 8x8 window must show at least this much consistent light/dark alternation."""
    chess_diagonal_after_cut_below: float = 0.5
    """A lattice whose board window runs past the picture's edge is read along its diagonals too
    when fewer than this share of the window's cells alternate (every other corner grown into a
    lattice, referee render 6132: 0.33-0.39; a board the picture really cuts, freely framed render 7081:
    0.84-0.86)."""
    frame_margin_px: float = 1.0
    chess_regrow_extent: int = 10
    """A corner lattice as wide as the board is grown on to this extent (the board's nine corners and its
    border's outer ones, with a stray) before the board's window is chosen in it."""
    chess_beyond_margin: float = 4.0
    """A board window one row past the corner lattice must score this much better than those within it."""
    refine_ransac_cells: float = 0.08
    coaster_min_saturation: int = 70
    """Pixels below this saturation are never taken for a coaster (grey table, white paper)."""
    coaster_saturation_split: float = 60.0
    """When a hue's saturations spread wider than this, only the more saturated part is coaster."""
    coaster_min_value: int = 50
    coaster_hue_tolerance: int = 10
    coaster_table_hue_share: float = 0.3
    """A hue (give or take `coaster_table_hue_width`) that this share of the frame's pixels shows is the table's."""
    coaster_table_hue_width: int = 4
    """A coaster whose hue band takes in the table's hue is also looked for in its band less the hues within
    this many steps of the table's (a wooden table's grain is of a yellow coaster's hue band)."""
    # Skin-coloured pixels (a hand) inside a coaster are left out of judging a board hypothesis,
    # unless they are of the table's own colour (a wooden table: the median of the frame's rim)
    # within this Lab distance, or more than `coaster_hand_share` of the frame is such skin.
    coaster_table_lab: float = 25.0
    coaster_hand_share: float = 0.3
    coaster_min_area_fraction: float = 0.004
    coaster_min_fill: float = 0.45
    """A coaster's colour must cover this share of the quadrilateral fitted to it."""
    coaster_max_alternatives: int = 3
    """Other outlines per coaster colour (cards, pieces of that colour) offered to the colour judge."""
    coaster_table_fraction: float = 0.3
    """A colour covering this share of the frame is the table's too, and does not judge a fit."""
    coaster_second_look_below: float = 0.75
    """Where the coasters found make no board, or none whose colours agree this well, their colours'
    regions are cut apart and filled in for more outlines (`_separated_outlines`); 0 never (the search of
    the full picture for a board far off, where a second look would cost four times as much)."""
    coaster_separation: float = 0.25
    """Regions of a coaster's colour are also opened with a square this share of the smallest coaster's
    side across, which parts a coaster from a card of its colour touching it (`_separated_outlines`)."""
    coaster_max_view_misfit: float = 0.5
    """The coasters' fit must be a view of a square a camera could have (`sizing.view_misfit`): on
    the renders those placed right reach 0.29 (the drawn frames' views, not all a camera's, 0.34);
    of the 11 placed on wrong cells, 3 were over 0.5 (referee 6148, freely framed 7000 and 7185)."""
    coaster_min_agreement: float = 0.5
    """Mean share of each coaster's area that must show its colour under the fitted board (hand pixels
    left out). 0.35 until session 29: of the boards placed on wrong cells in `datasets/pieces-hd`, 17 of
    45 agreed less than 0.5, against 4 of the 629 placed right."""
    coaster_single_min_agreement: float = 0.6
    """A board placed by one whole coaster's corners alone (the others' outlines bent by a hand) must agree
    with the colours this well: four corners of a ninth of the board extrapolated to all of it go wrong
    more easily (freely framed render 7195, placed on wrong cells at 0.55; 6148 and 7000 right at 0.68 and 0.71).
    Over 1: never (the full picture's search for a board far off, where 7195 went wrong at 0.65)."""
    coaster_full_resolution_side_px: float = 250.0
    coaster_full_resolution_agreement: float = 0.6
    """Where the working width's copy finds no coasters, the full picture is searched for a board
    far off: one wholly in the picture, whose side is under `coaster_full_resolution_side_px`
    pixels of the working copy, and whose coasters show their colours this well (a board larger
    or cut by the picture's edge failed for another reason, a hand or a card of a coaster's colour,
    which the full picture does not mend)."""
    coaster_switch_margin: float = 0.05
    """Another coaster subset replaces the corner consensus only when its colours fit this much better."""
    coaster_pair_tolerance: float = 0.03
    """Two coasters alone make a view only when their corners fit one board within this share of a side."""
    coaster_edge_search: float = 0.02
    """The coasters' sides are looked for again at full resolution within this share of the board's
    side of where the colour outlines put them (their corners come from a 640-pixel copy)."""
    coaster_edge_min_step: float = 18.0
    """A side shows where the colour changes by at least this much (BGR distance) across two pixels."""
    hex_min_solidity: float = 0.82
    hex_work_width: int = 1280
    """Hex boards are searched at this width: their rules may be hairlines."""
    hex_line_sigma: float = 1.0
    """Scale (pixels) of the ridge filter that finds the hex lines."""
    hex_line_scales: tuple[float, ...] = (1.0, 0.5)
    """Then, when the lines at full resolution explain too few cells, at half: a soft or grainy
    picture breaks faint lines up at full resolution, and they join again at half."""
    hex_retry_below: float = 0.35
    """The other line polarity, then half resolution, are tried when the fit so far explains less
    than this share of the cells (pieces hide many cells of a good fit: retrying then costs
    time and finds nothing better)."""
    hex_line_fraction: float = 0.12
    """A pixel is on a line when its ridge strength exceeds this fraction of the frame's strongest lines."""
    hex_outline_width: int = 480
    """Board outlines (the last resort for a hex board) are looked for at this width."""
    hex_outline_min_area: float = 0.04
    """...and must cover at least this share of the picture."""
    hex_outline_max_margin: float = 1.35
    """The widest margin tried between the outline and the cells, as a factor on the cells' own outline."""
    hex_outline_min_score: float = 0.05
    """The least (share of cell-side points on lines) - (share of cell-middle points on lines) to accept.
    Hairlines on white paper score little (Ice Arena render 5053 of the referee framing: 0.067 at
    the right margin), so the outline's own shape guards against other six-cornered regions."""
    hex_outline_faint_line_strength: float = 1.5
    """When no outline places the cells on the usual lines, cell sides this faint (ridge strength,
    grey levels) count as lines too: hairlines on white paper, under the threshold the pieces'
    strong edges set (Ice Arena referee renders train 234 and 578 scored 0.04 and 0.02 on the usual
    lines, 0.41 and 0.09 on these, at the right margin). Noise marks side and middle points alike,
    so the score still asks the cells' sides to show more line than their middles."""
    hex_outline_max_residual: float = 0.02
    """An outline must be a regular hexagon seen in perspective: the board's outline, mapped by the
    homography fitted to its six corners, lands within this share of its size of them (the board's
    outline in Ice Arena render 5053: 0.1 %; a six-cornered patch of table light in 5097: 17 %)."""
    hex_min_line_strength: float = 2.0
    hex_max_seeds: int = 4
    """Hex cell guesses are grown best supported first, so few are needed: on the benchmark's
    drawn frames 4 found as many boards as 16 had in the earlier strongest-first order."""
    hex_equalised_clip: float = 3.0
    """Where nothing places a hex board, it is looked for again in the picture with its local contrast
    equalised (CLAHE with this clip limit, 8x8 tiles; 0: not), for hairlines an overexposed picture
    left a few grey levels deep (only where the cells grew no lattice at all)."""
    hex_equalised_min_confidence: float = 0.3
    """A lattice found in the equalised picture must explain this share of the board's cells."""
    hex_fallback_below: float = 0.5
    hex_light_cell_width: int = 960
    """When the line cues explain less than this share of the cells, the light-cell cues are tried too."""
    hex_min_line_contrast: float = 14.0
    """Light-cell cues: a cell must be this much lighter (grey levels) than the lines around it."""
    hex_min_cellness: float = 0.5
    """Share of a cell's six sides that must show a line for the cell to count as on the board."""
    hex_placement_tie: float = 3.0
    """Placements of the board on the lattice within this much summed cellness of the best are told
    apart by the plate's centre or how well their outline follows the picture's edges (2 until session
    44, when the outline came to be judged at the plate's margin: 3 put drawn frames 10039 and 10175 and
    freely framed render 7052 right and nothing wrong; 4 one referee render wrong)."""
    hex_centre_tolerance: float = 0.3
    """A placement is centred on a hexagonal region of the picture when its middle cell is within
    this many cell spacings of the region's centre."""
    hex_centre_outline_max_residual: float = 0.05
    """The region a placement is centred on may be a rougher hexagon than an outline the board is
    placed by (`hex_outline_max_residual`): it only chooses among placements the cells already tie,
    and the hexagon of a board's plate, pieces standing near its edge, can come out a few per cent off
    (Ice Arena freely framed render 7063: 2.9 %; refused at 2 %, the board was put a row off)."""
    hex_outline_margin_step: float = 0.01
    """Placements told apart by their outlines are judged at margins from the cells' own outline to
    `hex_outline_max_margin`, in steps of this factor."""
    hex_hand_mask_max_share: float = 0.5
    """The hand mask is believed there only where it covers at most this share of the outlines judged:
    a skin-coloured board (beige card, wood) fills it."""
    hex_outline_min_edge: float = 40.0
    """An outline is on an edge when the median smoothed Sobel magnitude along it reaches this (on
    the benchmark's frames true outlines gave 70-190, outlines lying on nothing in particular 8-20)."""
    hex_side_points: int = 2
    """A cell's side shows a line when this many of three points along it (its middle and either
    side) are on a line: a stray line crossing the side (wood grain, a patterned cloth beyond the
    board's edge) touches one of them; a cell's own side runs through all three."""
    aruco_dictionary: int = cv2.aruco.DICT_4X4_50
    lock_scale: float = 0.25
    lock_max_shift_cells: float = 0.12
    lock_min_response: float = 0.08
    lock_unsure_frames: int = 15
    """After this many frames in a row that cannot confirm the lock, localise afresh."""
    lock_change_level: int = 30
    """Grey levels by which a pixel of the lock's quarter-resolution view must differ to count as changed."""
    lock_still_share: float = 0.005
    """A frame is still when at most this share of the view's pixels changed since the frame before."""
    lock_new_view_share: float = 0.02
    """A still view is a new one, worth a second search, when this share of its pixels differs from
    the view the board was found on."""
    lock_confirm_tries: int = 4
    """Second searches on new still views before a board no later search agreed with is kept as it is."""
