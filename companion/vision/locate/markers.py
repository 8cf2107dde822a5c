"""ArUco markers: the bare table (IceTowers), found by marker 0 of known size lying on it; and a board
that cannot be found by itself (a plain or unusual board, poor light), found by markers 1-4 laid at
its corners (`corner_marker_squares`).
"""

from __future__ import annotations

import cv2
import numpy as np

from companion.vision.locate.board import BoardNotFound, BoardSpec, _Found
from companion.vision.locate.config import LocateConfig
from companion.vision.locate.geometry import _hex_centre, _scale_h


CORNER_MARKER_KINDS = ("chess", "coasters", "hex")


def _corner_marker_points(spec: BoardSpec) -> np.ndarray:
    """The four board points the corner markers touch (mm), south-west, south-east, north-east,
    north-west: a square board's outer corners (a1's first); on a hex board the outer tips of the
    end cells of its south and north rows (the lowest and highest points of the board's cells)."""
    if spec.kind == "hex":
        n, h = spec.hex_radius, spec.hex_mm
        ends = ((0, -n, -1), (n, -n, -1), (0, n, 1), (-n, n, 1))
        return np.array([np.add(_hex_centre(q, r, h), (0.0, tip * h)) for q, r, tip in ends])
    return spec.outline()


def corner_marker_squares(spec: BoardSpec) -> dict[int, np.ndarray]:
    """Where the corner markers lie on the board plane (mm): ArUco markers 1-4 at the board's
    south-west (a1's), south-east, north-east and north-west corners (`_corner_marker_points`), each
    diagonally outside the board with a corner of its black square on the board's point and its
    sides square with the board's south edge (a hex board: its south row), printed side up and read
    upright from the south (a1's) side. Each square's corners are in ArUco's order: top-left,
    top-right, bottom-right, bottom-left as printed."""
    if spec.kind not in CORNER_MARKER_KINDS:
        raise ValueError(f"corner markers are for {', '.join(CORNER_MARKER_KINDS)} boards, not {spec.kind!r}")
    points = _corner_marker_points(spec)
    centre = points.mean(axis=0)
    side = spec.marker_mm
    out = {}
    for marker, corner in enumerate(points, start=1):
        far = corner + np.sign(corner - centre) * side
        (x0, x1), (y0, y1) = sorted((corner[0], far[0])), sorted((corner[1], far[1]))
        out[marker] = np.array([(x0, y1), (x1, y1), (x1, y0), (x0, y0)], float)
    return out


def _locate_by_corner_markers(image: np.ndarray, spec: BoardSpec, config: LocateConfig) -> _Found | None:
    """The board from its corner markers (at least two in view: eight corners spread across the
    board); None when fewer are seen. The markers' numbers fix which corner is a1."""
    squares = corner_marker_squares(spec)
    seen = {i: quad for i, quad in _aruco_markers(image, config).items() if i in squares}
    if len(seen) < 2:
        return None
    board = np.vstack([squares[i] for i in sorted(seen)])
    pixels = np.vstack([seen[i] for i in sorted(seen)]).astype(np.float64)
    h, _ = cv2.findHomography(board, pixels, 0)
    if h is None:
        return None
    return _Found(len(seen) / len(squares), "corner-markers", 4 * len(seen), [h])


def _aruco_markers(image: np.ndarray, config: LocateConfig) -> dict[int, np.ndarray]:
    """Every ArUco marker in view: its number -> its four corners (pixels, ArUco's order)."""
    params = cv2.aruco.DetectorParameters()
    params.cornerRefinementMethod = cv2.aruco.CORNER_REFINE_SUBPIX
    detector = cv2.aruco.ArucoDetector(cv2.aruco.getPredefinedDictionary(config.aruco_dictionary), params)
    corners, ids, _ = detector.detectMarkers(image)
    return {} if ids is None else {int(i): c.reshape(4, 2).astype(np.float64) for i, c in zip(ids.ravel(), corners)}


def _locate_table(image: np.ndarray, scale: float, spec: BoardSpec, config: LocateConfig) -> _Found:
    markers = _aruco_markers(image, config)
    if 0 not in markers:
        raise BoardNotFound("no-markers", f"marker 0 of the table sheet is not in view (markers seen: "
                                          f"{sorted(markers)}); lay it flat on the table, fully visible")
    quad = markers[0]
    # ArUco corners run clockwise on screen from the marker's top-left; on the table plane
    # (y away from the viewer) that is (-m, +m), (+m, +m), (+m, -m), (-m, -m).
    m = spec.marker_mm / 2
    src = np.array([(-m, m), (m, m), (m, -m), (-m, -m)], float)
    h, _ = cv2.findHomography(src, quad, 0)
    hf = _scale_h(h, 1.0 / scale)
    return _Found(1.0, "marker", 4, [hf])
