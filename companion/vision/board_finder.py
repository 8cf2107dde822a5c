"""The board found as a whole by a YOLO pose model, then fitted to the picture's own cues.

The lattice and colour searches in `locate/` need enough of the board's pattern in view; a hand
over half the board, or pieces over most of its corners, can leave too little for them. The board
model (`models/boards.pt`, `scripts/train_detector.py --boards`) looks at the whole frame and says
where the board's outline is, hidden corners included, as a person would guess them; that guess is
only a start: the cells are then put where the picture's own cues are (a chessboard's corners),
and a guess the cues do not confirm is refused.
So the model never places a board by itself, and a wrong guess costs a refusal, not wrong cells.

`Locator` uses it when its own search found no chessboard (docs/calibration.md, "The board model");
the model also finds coasters and hex boards, but its guesses of those are too rough to place them.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import cv2
import numpy as np

from companion.vision.board_keypoints import BOARD_CLASSES, outline_size, symmetric_homographies
from companion.vision.locate import BoardNotFound, BoardSpec, LocateConfig, chess_turns_with_a1_dark, xcorner_cues
from companion.vision.locate.board import _Found
from companion.vision.locate.coasters import _hand_mask
from companion.vision.locate.geometry import _apply_h, _outside


@dataclass(frozen=True)
class BoardGuess:
    """Where the board model puts a board: its outline's corners in picture order and the outline's
    bounding box (x0, y0, x1, y1), full-frame pixels. The box is the surer of the two (on the referee
    renders its sides 1-2 % of the board's side off at the median, the corners 3.5-14 %: where along
    the outline a hidden corner lies is harder to say than how far the board reaches)."""

    kind: str
    corners: np.ndarray
    confidence: float
    box: np.ndarray | None = None

    def __post_init__(self) -> None:
        if self.box is None:
            object.__setattr__(self, "box", np.concatenate([self.corners.min(axis=0), self.corners.max(axis=0)]))


# The boards the model's guesses place: chessboards only. Placed from the model's guesses, coasters
# (their sides looked for round the guess, the colours judging) and hex boards (cell middles snapped
# to) came out on wrong cells more often than they were found: the model's corners are 4 % (coasters)
# and 14 % (hex) of the side off at the median, 14 % and 39 % at the 90th percentile
# (docs/calibration.md, "The board model"), too far to name cells by; their own searches do better.
PLACED_KINDS = ("chess",)


class BoardFinder:
    """The board model: call it with a BGR frame and a board kind; it returns its best guess or None.

    Args:
        weights: the model (a .pt file or an exported OpenVINO folder).
        imgsz: input size (the model was trained at 416 on whole frames).
        confidence: guesses below this score are not returned.
    """

    def __init__(self, weights: str | Path, imgsz: int = 416, confidence: float = 0.25):
        from companion.vision.yolo_env import import_ultralytics

        ultralytics = import_ultralytics()
        self.model = ultralytics.YOLO(str(weights), task="pose")
        self.imgsz = imgsz
        self.confidence = confidence

    def __call__(self, image: np.ndarray, kind: str) -> BoardGuess | None:
        if kind not in BOARD_CLASSES:
            return None
        if image.ndim == 2:
            image = cv2.cvtColor(image, cv2.COLOR_GRAY2BGR)
        result = self.model.predict(image, imgsz=self.imgsz, conf=self.confidence, verbose=False,
                                    classes=[BOARD_CLASSES.index(kind)])[0]
        if result.boxes is None or len(result.boxes) == 0 or result.keypoints is None:
            return None
        best = int(np.argmax(result.boxes.conf.cpu().numpy()))
        corners = result.keypoints.xy.cpu().numpy()[best][:outline_size(kind)].astype(float)
        box = result.boxes.xyxy.cpu().numpy()[best].astype(float)
        # The corners stretched to the box: the keypoints' shape, the box's reach.
        low, high = corners.min(axis=0), corners.max(axis=0)
        if (high - low).min() > 1:
            corners = box[:2] + (corners - low) / (high - low) * (box[2:] - box[:2])
        return BoardGuess(kind, corners, float(result.boxes.conf[best]), box)


def shipped_board_finder() -> BoardFinder | None:
    """The shipped board model (models/), or None when it is not there or cannot be loaded: boards
    are then found by their own cues only."""
    from companion.models import board_model_for_inference

    weights = board_model_for_inference()
    if weights is None:
        return None
    try:
        return BoardFinder(weights)
    except Exception:  # noqa: BLE001 - a broken model file must not stop the board's own search
        return None


def locate_from_guess(image: np.ndarray, spec: BoardSpec, guess: BoardGuess, config: LocateConfig) -> _Found:
    """The board where `guess` says, fitted to the picture's cues (full-resolution pixels throughout).

    Raises:
        BoardNotFound: when the cues do not confirm the guess, or a playing cell is out of view.
    """
    if spec.kind not in PLACED_KINDS:
        raise BoardNotFound("wrong-board-kind", f"a {spec.kind} board is not placed from the board model")
    rough = symmetric_homographies(spec, guess.corners)
    if not rough:
        raise BoardNotFound("no-board", "the board model's corners do not make a board seen from above")
    found = _chess_from_guess(image, spec, rough[0], config)
    middles = np.array([polygon.mean(axis=0) for _, polygon in spec.cells()])
    if _outside(_apply_h(found.candidates[0], middles), image.shape, config.frame_margin_px):
        raise BoardNotFound("cut-by-frame", "the board runs past the edge of the picture")
    return _Found(found.confidence * min(1.0, guess.confidence / 0.5), found.method, found.cues, found.candidates)


def _snapped(h: np.ndarray, model_mm: np.ndarray, cues: np.ndarray, cell_mm: float,
             anchors: tuple[np.ndarray, np.ndarray] | None = None,
             reaches: tuple[float, ...] = (0.4, 0.3, 0.2)) -> tuple[np.ndarray, int] | None:
    """`h` refitted to the cues nearest where it puts each model point, ever closer; (h, inliers).

    `anchors` (board mm, pixels): the guessed outline corners, fitted beside the cues while fewer
    than half the model points have one: a few cues on one side of a board under a hand say little
    about its far side, which the guess still places."""
    if len(cues) < 4:
        return None
    inliers = 0
    for reach in reaches:
        projected = _apply_h(h, model_mm)
        # Each point's own cell size in pixels: the board shrinks with distance.
        step = _apply_h(h, model_mm + [cell_mm, 0.0]) - projected
        cell_px = np.hypot(step[:, 0], step[:, 1])
        distance = np.hypot(*(projected[:, None, :] - cues[None, :, :]).transpose(2, 0, 1))
        nearest = distance.argmin(axis=1)
        close = distance[np.arange(len(model_mm)), nearest] < reach * cell_px
        # A cue claimed by two model points belongs to neither.
        claimed = np.bincount(nearest[close], minlength=len(cues))
        close &= claimed[nearest] == 1
        if close.sum() < 6:
            return None
        src, dst = model_mm[close], cues[nearest[close]]
        refit, mask = cv2.findHomography(src, dst, cv2.RANSAC, max(1.0, 0.12 * float(np.median(cell_px))))
        if refit is None:
            return None
        inside = mask.ravel().astype(bool)
        inliers = int(inside.sum())
        if anchors is not None and inliers < 0.5 * len(model_mm):
            refit, _ = cv2.findHomography(np.vstack([src[inside], anchors[0]]), np.vstack([dst[inside], anchors[1]]), 0)
            if refit is None:
                return None
        h = refit / refit[2, 2]
    return h, inliers


def _chess_from_guess(image: np.ndarray, spec: BoardSpec, rough: np.ndarray, config: LocateConfig) -> _Found:
    gray = cv2.cvtColor(image, cv2.COLOR_BGR2GRAY) if image.ndim == 3 else image
    scale = min(1.0, config.work_width / gray.shape[1])
    small = cv2.resize(gray, None, fx=scale, fy=scale, interpolation=cv2.INTER_AREA) if scale < 1 else gray
    cues, _ = xcorner_cues(small, config)
    inner = np.array([(u, v) for v in range(1, 8) for u in range(1, 8)], float) * spec.cell_mm
    snapped = _snapped(rough, inner, cues / scale, spec.cell_mm, (spec.outline(), _apply_h(rough, spec.outline())))
    if snapped is None or snapped[1] < config.min_lattice_points:
        raise BoardNotFound("no-board", "the board model's chessboard is not confirmed by corner cues")
    h, inliers = snapped
    even_dark, alternation = _checker_parity(image, h, spec, config)
    candidates = chess_turns_with_a1_dark(h, spec, even_dark)
    if not alternation >= 0.5:
        raise BoardNotFound("wrong-board-kind", "the board model's chessboard has no light/dark alternation")
    return _Found(min(1.0, inliers / 49.0) * float(alternation), "board-model", inliers, candidates)


def _checker_parity(image: np.ndarray, h: np.ndarray, spec: BoardSpec, config: LocateConfig) -> tuple[bool, float]:
    """(whether the squares of even file + rank are the dark ones, how clearly the squares alternate: -1..1).

    Judged between neighbouring squares, not against one threshold: a hand's shadow darkens light
    and dark squares alike, but the light one of two neighbours stays the lighter. Squares under a
    hand are left out."""
    gray = cv2.cvtColor(image, cv2.COLOR_BGR2GRAY) if image.ndim == 3 else image
    centres = (np.array([(f, r) for r in range(8) for f in range(8)], float) + 0.5) * spec.cell_mm
    xy = np.round(_apply_h(h, centres)).astype(int)
    seen = (xy[:, 0] >= 0) & (xy[:, 0] < gray.shape[1]) & (xy[:, 1] >= 0) & (xy[:, 1] < gray.shape[0])
    hand = _hand_mask(image, config) if image.ndim == 3 else None
    if hand is not None:
        seen[seen] &= ~hand[xy[seen, 1], xy[seen, 0]]
    blur = cv2.blur(gray, (5, 5)).astype(float)
    tone = np.zeros(64)
    tone[seen] = blur[xy[seen, 1], xy[seen, 0]]
    votes = []
    for r in range(8):
        for f in range(8):
            for df, dr in ((1, 0), (0, 1)):
                a, b = r * 8 + f, (r + dr) * 8 + f + df
                if f + df < 8 and r + dr < 8 and seen[a] and seen[b]:
                    # +1 when the even square of the two is the darker one.
                    even, odd = (a, b) if (f + r) % 2 == 0 else (b, a)
                    votes.append(float(np.sign(tone[odd] - tone[even])))
    if len(votes) < 8:
        return True, 0.0
    mean = float(np.mean(votes))
    return mean > 0, abs(mean)
