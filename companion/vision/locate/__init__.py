"""Board localisation: where every cell of the board is in a camera frame.

Each board kind is found from many partial cues rather than one clean pattern, because
pieces and hands cover much of the board during play:

- chessboard (and its 6x6 / 4x8 playing areas): X-shaped lattice corners where four
  squares meet; a lattice is grown from a seed cell, refitting a homography as it grows,
  and the board's extent is read from the light/dark alternation of the cells;
- Martian Coasters: the four coloured coasters, each a quadrilateral whose sides are fitted
  robustly; sixteen labelled corners give the homography by RANSAC;
- hex grid: the cells between the grid's lines (dark or light lines, found by a ridge filter),
  grown as a triangular lattice; light cells on dark gaps as a second cue;
- bare table (IceTowers): an ArUco marker of known size lying on the table;
- a board that cannot be found by itself (a plain or unusual board, poor light): ArUco markers 1-4
  laid at its corners (`corner_marker_squares`).

Board-plane coordinates are millimetres: square boards have their origin at the outer corner
of a1 (x towards later files, y towards higher ranks); hex boards at the centre cell; the table
at the centre of marker 0. Which corner is a1 is fixed once at set-up (`a1_hint`) and kept on
re-localisation by choosing the orientation nearest the previous one.

The package's modules, each importing only from those listed before it:

- `config.py`: `LocateConfig`, every threshold of the localiser;
- `geometry.py`: small plane-geometry helpers (`_apply_h`, board turns, a cell's size in pixels,
  `_outside`, the polygon outlining a region's contour);
- `board.py`: `BoardSpec`, `BoardLocation`, `CellGeometry`, `BoardNotFound`, `board_outline`, the
  board kinds, and `_Found`, what each board kind's search hands the localiser;
- `cues.py`: exposure checks and the cues (X-corners, hex lines and cells);
- `lattice.py`: growing a square or hex lattice over cue points (`grow_lattice`), and `_fit_h`;
- the board kinds, one search each: `chess.py`, `hex.py`, `coasters.py` (with the hand mask),
  `markers.py` (the bare table's marker, and the corner markers laid round a board);
- `locator.py`: `Locator`, which runs its board kind's search, falls back on the board model and the
  corner markers, and chooses a1's corner; `locate`, its one-shot form;
- `lock.py`: `BoardLock` and `LockStatus`, localising once and then checking each frame cheaply;
- `drawing.py`: `annotate`;
- `cli.py`: `add_vision_commands`, the `companion calibrate camera` and `companion locate` commands.
"""

from __future__ import annotations

from companion.vision.locate.board import (BOARD_KINDS, COASTER_HUES, IMAGE_CORNERS, BoardLocation, BoardNotFound,
                                           BoardSpec, CellGeometry, board_outline)
from companion.vision.locate.chess import chess_turns_with_a1_dark
from companion.vision.locate.cli import add_vision_commands
from companion.vision.locate.config import LocateConfig
from companion.vision.locate.cues import hex_centre_cues, light_cell_cues, line_responses, xcorner_cues
from companion.vision.locate.drawing import annotate
from companion.vision.locate.geometry import SQRT3
from companion.vision.locate.lattice import HEX_LATTICE, SQUARE_LATTICE, grow_lattice
from companion.vision.locate.locator import Locator, locate
from companion.vision.locate.lock import BoardLock, LockStatus
from companion.vision.locate.markers import CORNER_MARKER_KINDS, corner_marker_squares

__all__ = ["BOARD_KINDS", "BoardLocation", "BoardLock", "BoardNotFound", "BoardSpec", "COASTER_HUES",
           "CORNER_MARKER_KINDS", "CellGeometry", "HEX_LATTICE", "IMAGE_CORNERS", "LocateConfig", "Locator",
           "LockStatus", "SQRT3", "SQUARE_LATTICE", "add_vision_commands", "annotate", "board_outline",
           "chess_turns_with_a1_dark", "corner_marker_squares", "grow_lattice", "hex_centre_cues", "light_cell_cues",
           "line_responses", "locate", "xcorner_cues"]
