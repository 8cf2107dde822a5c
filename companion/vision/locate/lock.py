"""Lock and check: `BoardLock` localises once, then checks each frame cheaply against a small
reference view, and localises again when the board moved or cannot be confirmed (`LockStatus`
says which happened).
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass

import cv2
import numpy as np

from companion.vision.locate.board import BoardLocation, BoardNotFound
from companion.vision.locate.cues import _gray
from companion.vision.locate.geometry import SQRT3, _cell_px
from companion.vision.locate.locator import Locator


@dataclass(frozen=True)
class LockStatus:
    """The outcome of checking one frame against the locked board.

    Attributes:
        state: 'found' (localised afresh, or placed otherwise by the search that confirms a lock),
            'locked' (unchanged), 'unsure' (could not confirm, e.g. a hand over the board; the lock
            is kept), 'moved' (re-localised after a move), 'lost' (moved and not found again).
        location: the board location in force after this frame (None only when never found).
        shift_px: the image shift measured against the locked view.
        error: why the board was not found, when it was not.
    """

    state: str
    location: BoardLocation | None
    shift_px: float = 0.0
    response: float = 0.0
    elapsed_ms: float = 0.0
    error: BoardNotFound | None = None


class BoardLock:
    """Localises once, then checks each frame cheaply against a small reference view.

    A fixed camera is the common case, so after the board is found every later frame is only
    compared (phase correlation at quarter resolution over the board's area); the board is
    localised again when that shows a shift, or when several frames in a row cannot confirm it.

    A board found from scratch is confirmed by a second search: a hand over the board can put a
    hex grid a ring off, and the phase correlation, which follows the camera, would keep that
    placement for good. So until a second search agrees, each still frame (unchanged since the
    frame before it) that shows a new view of the board is searched again: the first one when the
    board was found on a frame not known to be still (the first frame, or one taken while the camera
    moved), later ones when the view changed since (a hand gone, a piece moved). A still frame's
    placement replaces one found on a frame not known to be still, and any one less sure than
    itself (a hand resting over the board is still too; on the referee renders the placements a
    hand put wrong were the less sure in 6 of 7). After `lock_confirm_tries` such searches the board
    is kept as it is.
    """

    def __init__(self, locator: Locator):
        self.locator = locator
        self.location: BoardLocation | None = None
        self._ref: np.ndarray | None = None
        self._roi: tuple[int, int, int, int] = (0, 0, 0, 0)
        self._window: np.ndarray | None = None
        self._unsure = 0
        self._last_view: np.ndarray | None = None  # the frame before's small view, to tell a still frame
        self._found_still = False  # the location was found on a still frame
        self._confirmed = False
        self._tries = 0
        self._a1_near: tuple[float, float] | None = None

    @property
    def confirmed(self) -> bool:
        """Whether a second search on another still view agreed with the board in force."""
        return self._confirmed

    def _small(self, frame: np.ndarray) -> np.ndarray:
        s = self.locator.config.lock_scale
        g = _gray(frame)
        x0, y0, x1, y1 = self._roi
        return cv2.resize(g[y0:y1, x0:x1], None, fx=s, fy=s, interpolation=cv2.INTER_AREA).astype(np.float32)

    def _set_reference(self, frame: np.ndarray, location: BoardLocation) -> None:
        h, w = frame.shape[:2]
        c = location.board_to_image(location.spec.outline())
        pad = 0.05 * max(np.ptp(c[:, 0]), np.ptp(c[:, 1]))
        x0, y0 = max(0, int(c[:, 0].min() - pad)), max(0, int(c[:, 1].min() - pad))
        x1, y1 = min(w, int(c[:, 0].max() + pad)), min(h, int(c[:, 1].max() + pad))
        self._roi = (x0, y0, x1, y1)
        self._ref = self._small(frame)
        self._window = cv2.createHanningWindow(self._ref.shape[::-1], cv2.CV_32F)
        self.location = location
        self._unsure = 0

    def _changed_share(self, view: np.ndarray, other: np.ndarray | None) -> float:
        """Share of the view's pixels that differ from `other`'s (1 when there is nothing to compare)."""
        if other is None or other.shape != view.shape or view.size == 0:
            return 1.0
        return float(np.count_nonzero(cv2.absdiff(view, other) > self.locator.config.lock_change_level)) / view.size

    def check(self, frame: np.ndarray) -> tuple[float, float]:
        """(shift in full-resolution pixels, correlation response) of `frame` against the locked view."""
        shift, response, _ = self._check(frame)
        return shift, response

    def _check(self, frame: np.ndarray) -> tuple[float, float, np.ndarray]:
        cur = self._small(frame)
        (dx, dy), response = cv2.phaseCorrelate(self._ref, cur, self._window)
        return math.hypot(dx, dy) / self.locator.config.lock_scale, float(response), cur

    def update(self, frame: np.ndarray, a1_near: tuple[float, float] | None = None) -> LockStatus:
        """Checks one (raw) frame and re-localises when needed.

        Args:
            frame: the camera frame.
            a1_near: at set-up (nothing locked yet), an image point near a1's corner; kept for the
                frames after it until a board is found, and for the second searches that confirm it.
        """
        start = time.perf_counter()
        cfg = self.locator.config
        image = self.locator.prepare(frame)
        if self.location is None:
            # The point given at set-up stands until a board is found, even if the first frames fail.
            self._a1_near = a1_near if a1_near is not None else self._a1_near
            return self._relocate(image, "found", start, 0.0, 0.0, self._a1_near, still=False)
        shift, response, view = self._check(image)
        still = self._changed_share(view, self._last_view) <= cfg.lock_still_share
        self._last_view = view
        limit = cfg.lock_max_shift_cells * _cell_px(_board_units(self.location))
        if response >= cfg.lock_min_response and shift <= limit:
            self._unsure = 0
            if (not self._confirmed and still
                    and (not self._found_still or self._changed_share(view, self._ref) > cfg.lock_new_view_share)):
                return self._confirm(image, start, shift, response)
            return LockStatus("locked", self.location, shift, response, 1000 * (time.perf_counter() - start))
        if response >= cfg.lock_min_response:
            return self._relocate(image, "moved", start, shift, response, still=still)
        self._unsure += 1
        if self._unsure >= cfg.lock_unsure_frames:
            return self._relocate(image, "moved", start, shift, response, still=still)
        return LockStatus("unsure", self.location, shift, response, 1000 * (time.perf_counter() - start))

    def _relocate(self, image: np.ndarray, state: str, start: float, shift: float, response: float,
                  a1_near: tuple[float, float] | None = None, still: bool = False) -> LockStatus:
        try:
            loc = self.locator.locate(image, previous=self.location, prepared=True, a1_near=a1_near)
        except BoardNotFound as exc:
            if self.location is None:
                return LockStatus("lost", None, shift, response, 1000 * (time.perf_counter() - start), exc)
            self._unsure = 0
            return LockStatus("lost", self.location, shift, response, 1000 * (time.perf_counter() - start), exc)
        self._set_reference(image, loc)
        self._last_view = self._ref
        self._found_still, self._confirmed, self._tries = still, False, 0
        if state == "moved":
            self._a1_near = None  # the point given at set-up marked a1 in the view before the move
        return LockStatus(state, loc, shift, response, 1000 * (time.perf_counter() - start))

    def _confirm(self, image: np.ndarray, start: float, shift: float, response: float) -> LockStatus:
        """A second search on a still frame's new view: agreeing confirms the board in force; a
        placement of its own replaces one found on a frame not known to be still or less sure."""
        self._tries += 1
        current = self.location
        assert current is not None
        try:
            loc = self.locator.locate(image, previous=current, prepared=True, a1_near=self._a1_near)
        except BoardNotFound:
            loc = None
        if loc is not None and _same_placement(loc, current):
            self._confirmed = True
            self._set_reference(image, current)  # the still view is the better one to compare with
            self._last_view = self._ref
        elif loc is not None and (not self._found_still or loc.confidence > current.confidence):
            self._set_reference(image, loc)
            self._last_view = self._ref
            self._found_still = True
            return LockStatus("found", loc, shift, response, 1000 * (time.perf_counter() - start))
        if self._tries >= self.locator.config.lock_confirm_tries:
            self._confirmed = True
        return LockStatus("locked", self.location, shift, response, 1000 * (time.perf_counter() - start))


def _same_placement(a: BoardLocation, b: BoardLocation, cells: float = 0.5) -> bool:
    """Whether two locations of one board put its playing corners within `cells` cells of each other."""
    tolerance = cells * _cell_px(_board_units(b))
    return float(np.max(np.hypot(*(a.corners - b.corners).T))) <= tolerance


def _board_units(location: BoardLocation) -> np.ndarray:
    """The location's homography in cell units (so `_cell_px` measures one cell)."""
    spec = location.spec
    unit = spec.hex_mm * SQRT3 if spec.kind == "hex" else (spec.marker_mm if spec.kind == "table" else spec.cell_mm)
    h = location.H @ np.diag([unit, unit, 1.0])
    if spec.kind == "hex":
        h = h @ np.array([[1, 0, -3], [0, 1, -3], [0, 0, 1]], float)  # _cell_px samples near (3, 3)
    return h
