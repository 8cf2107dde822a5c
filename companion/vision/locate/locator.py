"""The localiser: `Locator` finds one board kind in frames (undistorted first when the camera's
intrinsics are known) by that kind's search, falls back on the board model and on corner markers
when the board's own cues fail, and chooses which corner is a1; `locate` is its one-shot form.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import replace

import cv2
import numpy as np

from companion.vision.calibrate import CameraIntrinsics, Undistorter
from companion.vision.locate.board import BoardLocation, BoardNotFound, BoardSpec, _Found, _Hidden
from companion.vision.locate.chess import _locate_chess
from companion.vision.locate.coasters import _coaster_sides_refined, _CoastersApart, _hand_mask, _locate_coasters
from companion.vision.locate.config import LocateConfig
from companion.vision.locate.cues import _check_exposure, _contrast_projection, _gray, _projected
from companion.vision.locate.geometry import _apply_h, _mean_side, _outside, _rows
from companion.vision.locate.hex import _locate_hex
from companion.vision.locate.markers import CORNER_MARKER_KINDS, _locate_by_corner_markers, _locate_table


def _hint_point(hint: str, size: tuple[int, int]) -> np.ndarray:
    w, h = size
    return np.array({"bottom-left": (0, h), "bottom-right": (w, h), "top-right": (w, 0), "top-left": (0, 0)}[hint], float)


class Locator:
    """Finds one board kind in frames; holds the intrinsics and the set-up orientation.

    Args:
        spec: the board to look for.
        intrinsics: camera intrinsics; frames are undistorted first when given.
        config: thresholds.
    """

    def __init__(self, spec: BoardSpec, intrinsics: CameraIntrinsics | None = None,
                 config: LocateConfig = LocateConfig(), board_model: Callable | None = None):
        self.spec = spec
        self.config = config
        self.intrinsics = intrinsics
        # (frame, kind) -> BoardGuess | None: the board model, asked when the board's own cues fail
        # (companion/vision/board_finder.py).
        self.board_model = board_model
        self._undistort = Undistorter(intrinsics) if intrinsics is not None else None

    def prepare(self, frame: np.ndarray) -> np.ndarray:
        """The frame as localisation sees it (undistorted when intrinsics exist)."""
        return self._undistort(frame) if self._undistort is not None else frame

    def locate(self, frame: np.ndarray, previous: BoardLocation | None = None, prepared: bool = False,
               a1_near: tuple[float, float] | None = None) -> BoardLocation:
        """Locates the board in one frame.

        Args:
            frame: a BGR (or gray) camera frame.
            previous: the last known location: its a1 corner is kept (the orientation chosen at
                set-up); without it the set-up hint `spec.a1_hint` chooses.
            prepared: the frame is already undistorted.
            a1_near: at set-up, an image point at or near a1's outer corner (e.g. where the user
                clicked); overrides `previous` and the hint.

        Raises:
            BoardNotFound: with the reason.
        """
        start = time.perf_counter()
        image = frame if prepared else self.prepare(frame)
        hh, ww = image.shape[:2]
        try:
            found = self._search(image)
        except BoardNotFound as exc:
            if self.spec.kind not in CORNER_MARKER_KINDS:
                raise
            # A hand over much of the board can hide the pattern the search needs; the board model
            # guesses the outline from what shows, and the cues in view must confirm it.
            found = self._from_board_model(image) if exc.reason in ("no-board", "wrong-board-kind") else None
            # A board that cannot be found by itself may have markers laid at its corners.
            if found is None:
                found = _locate_by_corner_markers(image, self.spec, self.config)
            if found is None:
                if exc.reason != "no-board":
                    raise
                raise BoardNotFound(exc.reason, f"{exc.detail}; if the board cannot be found by itself, lay "
                                                "corner markers 1-4 round it (calibration/corner-markers-50mm.pdf)") from None
        h = self._choose_orientation(found.candidates, (ww, hh), previous, a1_near)
        pose = self._pose(h, (ww, hh)) if self.intrinsics is not None else None
        return BoardLocation(self.spec, _rows(h / h[2, 2]), (ww, hh), float(found.confidence), found.method,
                             self._undistort is not None, pose, found.cues, 1000 * (time.perf_counter() - start))

    def _search(self, image: np.ndarray) -> _Found:
        """The board from its own cues (the table: from its marker), in `image`'s pixels."""
        cfg = self.config
        full_gray = _gray(image)
        projection = None
        try:
            # A bare table may be plain; only the marker needs contrast, and its detector says so.
            _check_exposure(full_gray, cfg if self.spec.kind != "table" else replace(cfg, min_contrast=0.0))
        except BoardNotFound as exc:
            # Grey levels alike, colours apart: look at the colour mix that differs most instead.
            projection = _contrast_projection(image, cfg.min_contrast) if exc.reason == "low-contrast" else None
            if projection is None:
                raise
            full_gray = _projected(image, projection)
            _check_exposure(full_gray, replace(cfg, min_brightness=0.0))
        hh, ww = full_gray.shape
        scale = min(1.0, cfg.work_width / ww)
        small = cv2.resize(image, (round(ww * scale), round(hh * scale)), interpolation=cv2.INTER_AREA) \
            if scale < 1 else image
        gray = _gray(small) if projection is None else _projected(small, projection)
        kind = self.spec.kind
        if kind == "chess":
            found = _locate_chess(gray, full_gray, scale, self.spec, cfg)
        elif kind == "hex":
            # Hex boards are drawn with thin lines: search them at a finer scale.
            hex_scale = min(1.0, cfg.hex_work_width / ww)
            hex_gray = cv2.resize(full_gray, (round(ww * hex_scale), round(hh * hex_scale)),
                                  interpolation=cv2.INTER_AREA) if hex_scale < 1 else full_gray
            hand = _hand_mask(small, cfg)
            found = _locate_hex(hex_gray, hex_scale, self.spec, cfg, None if hand is None else _Hidden(hand, scale),
                                image)
        elif kind == "coasters":
            try:
                found = _locate_coasters(small, scale, self.spec, cfg)
            except _CoastersApart as exc:
                # A board far off is only a few pixels a cell at the working width: the pieces on it
                # then merge with the coasters of their colour. The full picture keeps them apart.
                # (Only where coaster-like squares were seen: a frame without coasters costs no more.
                # Not from one coaster alone: a hand, not distance, is what leaves one whole.)
                if scale >= 1:
                    raise
                try:
                    found = _locate_coasters(image, 1.0, self.spec,
                                             replace(cfg, coaster_min_agreement=cfg.coaster_full_resolution_agreement,
                                                     coaster_second_look_below=0.0, coaster_single_min_agreement=2.0))
                except BoardNotFound:
                    raise exc from None  # the working copy's reason is the one to report
                outline = _apply_h(found.candidates[0], self.spec.outline())
                if _mean_side(outline) * scale >= cfg.coaster_full_resolution_side_px \
                        or _outside(outline, image.shape, 0.0):
                    raise exc from None
            found = replace(found, candidates=[_coaster_sides_refined(h, image, self.spec, cfg)
                                               for h in found.candidates])
        else:
            found = _locate_table(image, 1.0, self.spec, cfg)
        return found

    def _from_board_model(self, image: np.ndarray) -> _Found | None:
        from companion.vision.board_finder import PLACED_KINDS, locate_from_guess

        if self.board_model is None or self.spec.kind not in PLACED_KINDS:
            return None
        guess = self.board_model(image, self.spec.kind)
        if guess is None:
            return None
        try:
            return locate_from_guess(image, self.spec, guess, self.config)
        except BoardNotFound:
            return None

    def _choose_orientation(self, candidates: list[np.ndarray], size: tuple[int, int],
                            previous: BoardLocation | None, a1_near: tuple[float, float] | None) -> np.ndarray:
        a1 = self.spec.playing_corners[:1]
        if a1_near is not None:
            target = np.asarray(a1_near, float)
        elif previous is not None:
            target = previous.board_to_image(a1)[0]
        else:
            target = _hint_point(self.spec.a1_hint, size)
        return min(candidates, key=lambda h: float(((_apply_h(h, a1)[0] - target) ** 2).sum()))

    def _pose(self, h: np.ndarray, size: tuple[int, int]):
        cam = self._undistort.camera_for(size)
        board = self.spec.outline()
        pts = np.vstack([board, board.mean(0, keepdims=True)])
        img = _apply_h(h, pts)
        obj = np.hstack([pts, np.zeros((len(pts), 1))]).astype(np.float64)
        # The frame was undistorted with the same K, so no distortion remains.
        ok, rvec, tvec = cv2.solvePnP(obj, img, cam.K, None, flags=cv2.SOLVEPNP_IPPE)
        if not ok:
            return None
        return tuple(float(v) for v in rvec.ravel()), tuple(float(v) for v in tvec.ravel())


def locate(frame: np.ndarray, spec: BoardSpec, intrinsics: CameraIntrinsics | None = None,
           config: LocateConfig = LocateConfig()) -> BoardLocation:
    """One-shot localisation (see `Locator.locate`)."""
    return Locator(spec, intrinsics, config).locate(frame)
