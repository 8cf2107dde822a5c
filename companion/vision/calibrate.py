"""Camera intrinsics from photos of a printed checkerboard, and the calibration file.

The calibration file is a small JSON document (see docs/calibration.md). Reading it
checks every field, so a corrupt or hand-edited file fails with a message that names
the file and the field instead of producing a silently wrong camera model.
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import cv2
import numpy as np

FILE_FORMAT = "icehouse-companion/camera-intrinsics"
FILE_VERSION = 1


class CalibrationError(ValueError):
    """Calibration could not be done, or a calibration file could not be read."""


@dataclass(frozen=True)
class CalibrateConfig:
    """Thresholds for camera calibration (kept together rather than scattered in code)."""

    min_images: int = 5
    """Fewer usable views than this give an unreliable lens model."""
    subpix_window: int = 11
    """Half-size in pixels of the corner refinement window for 640x480-ish photos."""
    max_rms_px: float = 1.0
    """A calibration with a larger reprojection error is refused (the pattern size is probably wrong)."""


@dataclass(frozen=True)
class CameraIntrinsics:
    """A pinhole camera with lens distortion, as OpenCV models it.

    Attributes:
        image_size: (width, height) of the images the model was made from.
        camera_matrix: the 3x3 matrix K, row by row.
        dist_coeffs: OpenCV distortion coefficients (k1, k2, p1, p2, k3).
        rms_px: RMS reprojection error of the calibration, in pixels.
        pattern: (columns, rows) of inner corners of the target used.
        square_mm: side of one target square in millimetres.
        views: number of photos in which the target was found.
    """

    image_size: tuple[int, int]
    camera_matrix: tuple[tuple[float, float, float], ...]
    dist_coeffs: tuple[float, ...]
    rms_px: float
    pattern: tuple[int, int] = (9, 6)
    square_mm: float = 25.0
    views: int = 0
    per_view_rms_px: tuple[float, ...] = field(default=(), compare=False)

    @property
    def K(self) -> np.ndarray:  # noqa: N802 - the usual name of the camera matrix
        return np.array(self.camera_matrix, dtype=np.float64)

    @property
    def dist(self) -> np.ndarray:
        return np.array(self.dist_coeffs, dtype=np.float64)

    def scaled_to(self, image_size: tuple[int, int]) -> CameraIntrinsics:
        """The same camera for frames of another resolution with the same aspect ratio.

        Raises:
            CalibrationError: when the aspect ratio differs (a crop, not a scale).
        """
        w0, h0 = self.image_size
        w1, h1 = image_size
        if (w1, h1) == (w0, h0):
            return self
        if abs(w1 / w0 - h1 / h0) > 0.01:
            raise CalibrationError(f"intrinsics made for {w0}x{h0} cannot be scaled to {w1}x{h1} "
                                   "(different aspect ratio; calibrate at this resolution)")
        s = w1 / w0
        k = self.K
        k[0, :] *= s
        k[1, :] *= s
        return CameraIntrinsics((w1, h1), _rows(k), self.dist_coeffs, self.rms_px * s, self.pattern,
                                self.square_mm, self.views, self.per_view_rms_px)

    def undistorter(self) -> Undistorter:
        return Undistorter(self)

    def to_json(self) -> dict:
        return {"format": FILE_FORMAT, "version": FILE_VERSION,
                "image_size": list(self.image_size),
                "camera_matrix": [list(r) for r in self.camera_matrix],
                "dist_coeffs": list(self.dist_coeffs),
                "rms_px": self.rms_px, "pattern": list(self.pattern), "square_mm": self.square_mm,
                "views": self.views, "per_view_rms_px": list(self.per_view_rms_px)}

    @classmethod
    def from_json(cls, data: object, source: str = "calibration data") -> CameraIntrinsics:
        """Reads the dict written by `to_json`, checking every field.

        Raises:
            CalibrationError: naming `source` and the bad field.
        """
        def bad(what: str) -> CalibrationError:
            return CalibrationError(f"{source}: {what}")

        if not isinstance(data, dict):
            raise bad(f"expected a JSON object, found {type(data).__name__}")
        if data.get("format") != FILE_FORMAT:
            raise bad(f"not a camera calibration file (format is {data.get('format')!r}, expected {FILE_FORMAT!r})")
        if data.get("version") != FILE_VERSION:
            raise bad(f"unsupported version {data.get('version')!r} (this program reads version {FILE_VERSION})")
        for key in ("image_size", "camera_matrix", "dist_coeffs", "rms_px"):
            if key not in data:
                raise bad(f"missing field {key!r}")
        size = _numbers(data["image_size"], "image_size", 2, bad)
        if not all(v >= 1 and v == int(v) for v in size):
            raise bad(f"image_size must be two positive integers, found {data['image_size']!r}")
        rows = data["camera_matrix"]
        if not isinstance(rows, list) or len(rows) != 3:
            raise bad("camera_matrix must be 3 rows of 3 numbers")
        matrix = tuple(tuple(_numbers(r, "camera_matrix", 3, bad)) for r in rows)
        fx, fy = matrix[0][0], matrix[1][1]
        if fx <= 0 or fy <= 0 or matrix[2] != (0.0, 0.0, 1.0) or matrix[1][0] != 0 or matrix[0][1] != 0:
            raise bad(f"camera_matrix is not a pinhole matrix [[fx,0,cx],[0,fy,cy],[0,0,1]]: {rows!r}")
        dist = data["dist_coeffs"]
        if not isinstance(dist, list) or len(dist) not in (4, 5, 8, 12, 14):
            raise bad("dist_coeffs must be a list of 4, 5, 8, 12 or 14 numbers")
        dist_t = tuple(_numbers(dist, "dist_coeffs", len(dist), bad))
        rms = _numbers([data["rms_px"]], "rms_px", 1, bad)[0]
        if rms < 0:
            raise bad(f"rms_px must not be negative, found {rms}")
        pattern = _numbers(data.get("pattern", [9, 6]), "pattern", 2, bad)
        square = _numbers([data.get("square_mm", 25.0)], "square_mm", 1, bad)[0]
        per_view = data.get("per_view_rms_px", [])
        per_view_t = tuple(_numbers(per_view, "per_view_rms_px", len(per_view), bad)) if isinstance(per_view, list) else ()
        return cls((int(size[0]), int(size[1])), matrix, dist_t, rms, (int(pattern[0]), int(pattern[1])),
                   square, int(data.get("views", 0)), per_view_t)


def _numbers(value: object, name: str, count: int, bad) -> list[float]:
    if not isinstance(value, list) or len(value) != count:
        raise bad(f"{name} must be a list of {count} numbers, found {value!r}")
    out = []
    for v in value:
        if isinstance(v, bool) or not isinstance(v, (int, float)) or not math.isfinite(v):
            raise bad(f"{name} must hold finite numbers, found {v!r}")
        out.append(float(v))
    return out


def _rows(matrix: np.ndarray) -> tuple[tuple[float, float, float], ...]:
    return tuple(tuple(float(v) for v in row) for row in matrix)


class Undistorter:
    """Removes lens distortion from frames, with the remap tables built once per frame size."""

    def __init__(self, intrinsics: CameraIntrinsics):
        self.intrinsics = intrinsics
        self._maps: dict[tuple[int, int], tuple[np.ndarray, np.ndarray, CameraIntrinsics]] = {}

    def camera_for(self, image_size: tuple[int, int]) -> CameraIntrinsics:
        """The intrinsics matching frames of `image_size` (scaled when needed)."""
        return self._table(image_size)[2]

    def _table(self, size: tuple[int, int]):
        if size not in self._maps:
            cam = self.intrinsics.scaled_to(size)
            # The undistorted image keeps the same K, so board pixels stay where a user expects them.
            m1, m2 = cv2.initUndistortRectifyMap(cam.K, cam.dist, None, cam.K, size, cv2.CV_16SC2)
            self._maps[size] = (m1, m2, cam)
        return self._maps[size]

    def __call__(self, image: np.ndarray) -> np.ndarray:
        h, w = image.shape[:2]
        m1, m2, _ = self._table((w, h))
        return cv2.remap(image, m1, m2, cv2.INTER_LINEAR)


def load_intrinsics(path: str | Path) -> CameraIntrinsics:
    """Reads a calibration file.

    Raises:
        CalibrationError: the file is not valid JSON or a field is missing or wrong.
        OSError: the file cannot be opened.
    """
    p = Path(path)
    text = p.read_text(encoding="utf-8")
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise CalibrationError(f"{p}: not valid JSON (line {exc.lineno}, column {exc.colno}: {exc.msg}); "
                               "re-run `companion calibrate camera` to make a new file") from None
    return CameraIntrinsics.from_json(data, str(p))


def save_intrinsics(intrinsics: CameraIntrinsics, path: str | Path) -> None:
    """Writes a calibration file (JSON), replacing any existing one atomically."""
    p = Path(path)
    tmp = p.with_name(p.name + ".tmp")
    tmp.write_text(json.dumps(intrinsics.to_json(), indent=2) + "\n", encoding="utf-8")
    tmp.replace(p)


def parse_pattern(text: str, counts: str = "inner corners") -> tuple[int, int]:
    """Reads '9x6' (columns x rows of `counts`: a checkerboard's inner corners, a ChArUco board's squares)."""
    cols, sep, rows = text.lower().partition("x")
    if not sep or not cols.strip().isdigit() or not rows.strip().isdigit():
        raise CalibrationError(f"bad pattern {text!r} (expected {counts} as COLSxROWS, e.g. "
                               f"{'7x5' if counts == 'squares' else '9x6'})")
    c, r = int(cols), int(rows)
    if c < 2 or r < 2:
        raise CalibrationError(f"bad pattern {text!r}: need at least 2x2 {counts}")
    return c, r


def find_checkerboard(gray: np.ndarray, pattern: tuple[int, int],
                      config: CalibrateConfig = CalibrateConfig()) -> np.ndarray | None:
    """Sub-pixel inner corners of a checkerboard target, row by row, or None when not found."""
    flags = cv2.CALIB_CB_ADAPTIVE_THRESH | cv2.CALIB_CB_NORMALIZE_IMAGE
    found, corners = cv2.findChessboardCorners(gray, pattern, flags=flags)
    if found:
        criteria = (cv2.TERM_CRITERIA_EPS + cv2.TERM_CRITERIA_MAX_ITER, 50, 1e-4)
        win = config.subpix_window
        return cv2.cornerSubPix(gray, corners, (win, win), (-1, -1), criteria)
    # The sector-based detector is slower but copes with blur and uneven light.
    found, corners = cv2.findChessboardCornersSB(gray, pattern, flags=cv2.CALIB_CB_EXHAUSTIVE | cv2.CALIB_CB_ACCURACY)
    return corners if found else None


@dataclass(frozen=True)
class CalibrationReport:
    intrinsics: CameraIntrinsics
    used: tuple[str, ...]
    rejected: tuple[str, ...]


@dataclass(frozen=True)
class CharucoTarget:
    """A ChArUco board (calibration/charuco-7x5-30mm.pdf): a checkerboard with an ArUco marker in
    each white square, so that its corners are named and a photo showing part of it still counts.

    Attributes:
        squares: (columns, rows) of squares as printed (7x5: 6x4 inner corners).
        square_mm: side of a square; marker_mm: side of a marker inside one.
    """

    squares: tuple[int, int] = (7, 5)
    square_mm: float = 30.0
    marker_mm: float = 22.0
    min_corners: int = 8
    """A view needs this many of the board's inner corners to be used."""

    def board(self):
        if not (min(self.squares) >= 2 and 0 < self.marker_mm < self.square_mm):
            raise CalibrationError(f"bad ChArUco board {self.squares[0]}x{self.squares[1]}, square {self.square_mm} "
                                   f"mm, marker {self.marker_mm} mm (need at least 2x2 squares, markers smaller "
                                   "than squares)")
        dictionary = cv2.aruco.getPredefinedDictionary(cv2.aruco.DICT_4X4_50)
        return cv2.aruco.CharucoBoard(self.squares, self.square_mm, self.marker_mm, dictionary)


def find_charuco(gray: np.ndarray, board, min_corners: int = 8) -> tuple[np.ndarray, np.ndarray] | None:
    """(board points in mm, their image points) of the ChArUco corners seen, or None when fewer
    than `min_corners` are."""
    corners, ids, _, _ = cv2.aruco.CharucoDetector(board).detectBoard(gray)
    if ids is None or len(ids) < min_corners:
        return None
    objects, pixels = board.matchImagePoints(corners, ids)
    return objects.reshape(-1, 1, 3).astype(np.float32), pixels.reshape(-1, 1, 2).astype(np.float32)


def calibrate_camera(images: Iterable[tuple[str, np.ndarray]], pattern: tuple[int, int] = (9, 6),
                     square_mm: float = 25.0, config: CalibrateConfig = CalibrateConfig(),
                     charuco: CharucoTarget | None = None) -> CalibrationReport:
    """Camera intrinsics from photos of a printed checkerboard (or ChArUco board).

    Args:
        images: (name, BGR or gray image) pairs, all of one camera at one resolution.
        pattern: inner corners (columns, rows) of the checkerboard.
        square_mm: side of a square of the printed checkerboard.
        charuco: the ChArUco board photographed instead of a checkerboard (`pattern` and
            `square_mm` are then the board's own).

    Returns:
        The intrinsics (with the RMS reprojection error) and which photos were used.

    Raises:
        CalibrationError: photos of different sizes, or too few photos show the target.
    """
    if charuco is not None:
        square_mm = charuco.square_mm
        pattern = (charuco.squares[0] - 1, charuco.squares[1] - 1)
        board_model = charuco.board()
    if square_mm <= 0:
        raise CalibrationError(f"square size must be positive, got {square_mm} mm")
    cols, rows = pattern
    board = np.zeros((cols * rows, 3), np.float32)
    board[:, :2] = np.mgrid[0:cols, 0:rows].T.reshape(-1, 2) * square_mm
    size = None
    used, rejected, image_points, object_points = [], [], [], []
    for name, image in images:
        gray = image if image.ndim == 2 else cv2.cvtColor(image, cv2.COLOR_BGR2GRAY)
        this = (gray.shape[1], gray.shape[0])
        if size is None:
            size = this
        elif this != size:
            raise CalibrationError(f"{name}: image is {this[0]}x{this[1]} but the first was {size[0]}x{size[1]} "
                                   "(calibrate one camera at one resolution)")
        if charuco is not None:
            seen = find_charuco(gray, board_model, charuco.min_corners)
        else:
            corners = find_checkerboard(gray, pattern, config)
            seen = None if corners is None else (board, corners.reshape(-1, 1, 2).astype(np.float32))
        if seen is None:
            rejected.append(name)
        else:
            used.append(name)
            object_points.append(seen[0])
            image_points.append(seen[1])
    if len(used) < config.min_images:
        what = (f"{charuco.squares[0]}x{charuco.squares[1]} ChArUco board" if charuco is not None
                else f"{cols}x{rows} target")
        hint = "check --charuco counts squares" if charuco is not None else "check --pattern counts inner corners"
        raise CalibrationError(f"the {what} was found in {len(used)} of {len(used) + len(rejected)} "
                               f"photos; at least {config.min_images} are needed ({hint})")
    rms, k, dist, _, _, _, _, per_view = cv2.calibrateCameraExtended(object_points, image_points, size, None, None)
    if rms > config.max_rms_px:
        raise CalibrationError(f"reprojection error {rms:.2f} px is above {config.max_rms_px} px: "
                               "the photos are blurred or the pattern/square size is wrong")
    intr = CameraIntrinsics(size, _rows(k), tuple(float(v) for v in dist.ravel()), float(rms), pattern,
                            float(square_mm), len(used), tuple(float(v) for v in per_view.ravel()))
    return CalibrationReport(intr, tuple(used), tuple(rejected))


def read_images(paths: Sequence[str | Path]) -> list[tuple[str, np.ndarray]]:
    """Loads photos, failing with the name of the first unreadable one."""
    out = []
    for p in paths:
        if not Path(p).is_file():
            raise CalibrationError(f"{p}: no such file")
        image = cv2.imread(str(p), cv2.IMREAD_COLOR)
        if image is None:
            raise CalibrationError(f"{p}: cannot read as an image")
        out.append((str(p), image))
    return out


def checkerboard_target(pattern: tuple[int, int] = (9, 6), square_mm: float = 25.0, dpi: int = 300,
                        margin_mm: float = 15.0) -> np.ndarray:
    """A printable checkerboard with `pattern` inner corners (white margin so detectors see its edge)."""
    cols, rows = pattern
    px = square_mm / 25.4 * dpi
    margin = int(round(margin_mm / 25.4 * dpi))
    w = int(round((cols + 1) * px)) + 2 * margin
    h = int(round((rows + 1) * px)) + 2 * margin
    img = np.full((h, w), 255, np.uint8)
    for j in range(rows + 1):
        for i in range(cols + 1):
            if (i + j) % 2 == 0:
                x0, y0 = margin + int(round(i * px)), margin + int(round(j * px))
                x1, y1 = margin + int(round((i + 1) * px)), margin + int(round((j + 1) * px))
                img[y0:y1, x0:x1] = 0
    return img
