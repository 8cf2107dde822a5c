"""Stable positions from a video stream: motion gating, calm frames, diffs of stable observations.

A frame counts as calm when little changed over the board since the previous frame (a hand moving
over the board, a piece being slid, the camera knocked: all are motion), and when no hand or arm is
in view: a hand held still is calm but hides pieces, so each calm frame is also compared with the
frame of the last stable position, and a large new patch of skin colour, or a large changed blob
reaching the frame's edge (an arm, sleeve and all), is a hand. Only calm frames are observed (the
detector is not run on the others). A real webcam's noise makes a detector miss a piece now and
then, or see one that is not there, so observations are not required to agree exactly: the
position is what a majority of the last few calm observations show (`consensus`), and it is stable
once that majority view has stayed the same for `calm_frames` observations in a row. When a stable
position differs from the last stable one, the tracker reports a `Change` (before, after, and what
appeared and vanished) for the referee to explain; nothing is ever reported while something moves.
Vision code: no rules here.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field

import cv2
import numpy as np

from companion.vision.observation import Observation, SeenPiece


@dataclass(frozen=True)
class TrackerConfig:
    """Thresholds of the tracker.

    Attributes:
        calm_frames: calm observations in a row over which the majority view must stay the same
            before a position is stable.
        vote_window: how many of the latest calm observations vote on the position (a piece
            missed in one of three frames still counts as there).
        motion_threshold: mean absolute grey-level change (0-255) over the watched region
            above which a frame is in motion.
        motion_pixels: share of the watched region's pixels that may change by more than
            `pixel_threshold` before a frame is in motion (catches a hand over a small part).
        pixel_threshold: grey-level change that counts a pixel as changed.
        work_width: frames are compared at this width.
        hand_skin: a new skin-coloured blob larger than this share of the frame is a hand
            (a piece is far smaller; skin already there at the last stable position, a wooden
            table or an orange pyramid, does not count).
        hand_blob: a changed blob larger than this share of the frame that touches its edge is
            an arm reaching in.
        hand_patience: after this many still frames with a "hand", the view is taken as the new
            normal (a lamp switched on looks like a big change from the edge); the position is
            then observed and judged as usual, never silently accepted.
    """

    calm_frames: int = 3
    vote_window: int = 5
    motion_threshold: float = 4.0
    motion_pixels: float = 0.01
    pixel_threshold: int = 30
    work_width: int = 160
    hand_skin: float = 0.01
    hand_blob: float = 0.03
    hand_patience: int = 300


def position_key(observation: Observation) -> Counter:
    """What must agree between frames for a position to be stable: each object's identity and place.

    Pixels and confidences are left out (they jitter); a stack's id is replaced by its place.
    """
    return Counter(item_text(p) for p in observation.pieces)


def item_text(p: SeenPiece) -> str:
    """One object as a short text: 'red-L N @d4', 'pawn @c3', 'blue-M U @e2#1' (level 1 of a stack)."""
    what = p.piece_text
    if p.is_pyramid:
        what += f" {p.direction or '?'}" if p.pose and p.pose.value == "lying" else " U"
    if p.value is not None:
        what += f"={p.value}"
    level = f"#{p.level}" if p.level else ""
    return f"{what} @{p.where}{level}"


def item_where(text: str) -> str:
    """The place of an item text: 'd4' for 'red-L N @d4#1', 'P2' for a seat zone, 'table'."""
    return text.rsplit(" @", 1)[-1].split("#", 1)[0]


@dataclass(frozen=True)
class Change:
    """A move seen: two stable observations and what differs between them."""

    frame: int
    before: Observation
    after: Observation
    appeared: tuple[str, ...]
    vanished: tuple[str, ...]

    def __str__(self) -> str:
        return (f"frame {self.frame}: +[{', '.join(self.appeared) or '-'}] "
                f"-[{', '.join(self.vanished) or '-'}]")


@dataclass
class TrackerStatus:
    """What the tracker is doing now (for the page): 'motion', 'hand', 'settling', 'stable' or 'waiting'."""

    state: str = "waiting"
    motion: float = 0.0
    calm: int = 0
    frame: int = -1


@dataclass
class Tracker:
    """Feed it frames; it returns a `Change` when a new stable position differs from the last one.

    `region` (optional): a polygon of image pixels (the board and the seat zones around it) where
    motion matters; motion elsewhere (a player leaning back) is ignored.
    """

    config: TrackerConfig = field(default_factory=TrackerConfig)
    region: np.ndarray | None = None
    stable: Observation | None = None
    status: TrackerStatus = field(default_factory=TrackerStatus)
    _previous: np.ndarray | None = None
    _mask: np.ndarray | None = None
    _candidates: list[Observation] = field(default_factory=list)  # the latest calm observations
    _view: Counter | None = None  # their majority view, and for how many observations it has held
    _view_run: int = 0
    _reference: tuple[np.ndarray, np.ndarray] | None = None  # (grey, skin) at the last stable position
    _colour: np.ndarray | None = None
    _hand_frames: int = 0
    settled: Observation | None = None
    """The observation of the latest calm spell that became stable, even when its position is the
    stable one (a piece the detector missed leaves the position unchanged; its picture does not)."""
    settle_count: int = 0
    """How many calm spells have become stable: a new one is a chance to look for such a move."""

    def motion(self, frame: np.ndarray) -> float:
        """How much the watched region changed since the previous frame (0 for the first frame)."""
        small = self._small(frame)
        previous, self._previous = self._previous, small
        if previous is None or previous.shape != small.shape:
            return 0.0
        diff = cv2.absdiff(small, previous)
        if self._mask is not None:
            values = diff[self._mask]
        else:
            values = diff.ravel()
        if values.size == 0:
            return 0.0
        mean = float(values.mean())
        changed = float((values > self.config.pixel_threshold).mean())
        # One number for the page: in units of the mean threshold, whichever test is nearer to firing.
        return max(mean / self.config.motion_threshold, changed / self.config.motion_pixels)

    def hand_in_view(self, frame: np.ndarray | None = None) -> bool:
        """Whether a hand or arm is in view, compared with the frame of the last stable position.

        Call after `motion` (which prepares the small copy of the frame); `frame` is only used
        when called alone.
        """
        if frame is not None:
            self.motion(frame)
        if self._previous is None or self._colour is None:
            return False
        if self._reference is None:
            # Nothing to compare with yet (a wooden table is skin-coloured too): the first stable
            # position is the start, taken as seen, and becomes the reference.
            return False
        skin = skin_mask(self._colour)
        grey, skin_before = self._reference
        if grey.shape != self._previous.shape:
            return False
        new_skin = skin & ~cv2.dilate(skin_before.astype(np.uint8), np.ones((3, 3), np.uint8)).astype(bool)
        if _largest_blob(new_skin) > self.config.hand_skin:
            return True
        changed = cv2.absdiff(self._previous, grey) > self.config.pixel_threshold
        return _largest_blob(changed, edge=True) > self.config.hand_blob

    def _small(self, frame: np.ndarray) -> np.ndarray:
        h, w = frame.shape[:2]
        scale = self.config.work_width / w
        size = (self.config.work_width, max(1, round(h * scale)))
        grey = cv2.cvtColor(frame, cv2.COLOR_BGR2GRAY) if frame.ndim == 3 else frame
        self._colour = cv2.resize(frame, size, interpolation=cv2.INTER_AREA) if frame.ndim == 3 else None
        small = cv2.GaussianBlur(cv2.resize(grey, size, interpolation=cv2.INTER_AREA), (3, 3), 0)
        if self.region is not None and (self._mask is None or self._mask.shape != small.shape):
            mask = np.zeros(small.shape, np.uint8)
            cv2.fillPoly(mask, [np.round(np.asarray(self.region, float) * scale).astype(np.int32)], 1)
            self._mask = mask.astype(bool)
        return small

    def update(self, frame: np.ndarray, observe: Callable[[], Observation]) -> Change | None:
        """Takes the next frame; `observe` is called (to run the detector and mapper) only on calm frames.

        Returns:
            A Change when this frame completes a stable position that differs from the last one.
        """
        st = self.status
        st.frame += 1
        st.motion = self.motion(frame)
        if st.motion > 1.0:
            st.state, st.calm = "motion", 0
            self._forget_candidates()
            return None
        if self.hand_in_view():
            self._hand_frames += 1
            if self._hand_frames <= self.config.hand_patience:
                st.state, st.calm = "hand", 0
                self._forget_candidates()
                return None
            self._set_reference()  # a lasting change of light, not a hand: the new normal
        self._hand_frames = 0
        observation = observe()
        self._candidates.append(observation)
        del self._candidates[:-max(1, self.config.vote_window)]
        view = consensus([position_key(o) for o in self._candidates])
        if view == self._view:
            self._view_run += 1
        else:
            self._view, self._view_run = view, 1
        st.calm = self._view_run
        # The stable observation must be one really seen (its pixels and confidences belong together):
        # the latest whose pieces are exactly the majority view.
        seen = next((o for o in reversed(self._candidates) if position_key(o) == view), None)
        if st.calm < self.config.calm_frames or seen is None:
            st.state = "settling"
            return None
        st.state = "stable"
        self._set_reference()
        if self._view_run == self.config.calm_frames:
            self.settled = seen
            self.settle_count += 1
        if self.stable is not None and position_key(self.stable) == view:
            return None
        before, self.stable = self.stable, seen
        if before is None:
            return None  # the first stable position is the start, not a move
        return diff(before, seen, st.frame)

    def reset(self, stable: Observation | None = None) -> None:
        """Forgets the history (after a correction on the page), optionally with a new stable position."""
        self.stable = stable
        self._forget_candidates()
        self._previous = None
        self._reference = None
        self._hand_frames = 0

    def _forget_candidates(self) -> None:
        self._candidates.clear()
        self._view, self._view_run = None, 0

    def _set_reference(self) -> None:
        if self._previous is not None:
            skin = skin_mask(self._colour) if self._colour is not None else np.zeros(self._previous.shape, bool)
            self._reference = (self._previous, skin)


def consensus(keys: list[Counter]) -> Counter:
    """The majority view of several observations' position keys.

    An item is in it as many times as more than half of the observations show it at least that
    many times (two red pawns seen in three frames out of five, one in the other two: two).
    """
    need = len(keys) // 2 + 1
    view: Counter = Counter()
    for item in set().union(*keys) if keys else ():
        counts = sorted((key[item] for key in keys), reverse=True)
        if counts[need - 1] > 0:
            view[item] = counts[need - 1]
    return view


def skin_mask(bgr: np.ndarray) -> np.ndarray:
    """Pixels of skin colour (any complexion: the chroma box of YCrCb, not too dark)."""
    ycrcb = cv2.cvtColor(bgr, cv2.COLOR_BGR2YCrCb)
    y, cr, cb = ycrcb[..., 0], ycrcb[..., 1], ycrcb[..., 2]
    return (y > 40) & (cr >= 135) & (cr <= 180) & (cb >= 80) & (cb <= 130)


def _largest_blob(mask: np.ndarray, edge: bool = False) -> float:
    """The share of the frame covered by the largest connected blob of `mask` (with `edge`, only
    blobs touching the frame's edge count)."""
    if not mask.any():
        return 0.0
    count, labels, stats, _ = cv2.connectedComponentsWithStats(mask.astype(np.uint8), connectivity=8)
    h, w = mask.shape
    best = 0
    for k in range(1, count):
        x, y, bw, bh, area = stats[k]
        if edge and not (x == 0 or y == 0 or x + bw >= w or y + bh >= h):
            continue
        best = max(best, int(area))
    return best / float(h * w)


def diff(before: Observation, after: Observation, frame: int = -1) -> Change:
    """What appeared and what vanished between two observations, as item texts."""
    a, b = position_key(before), position_key(after)
    return Change(frame, before, after, tuple(sorted((b - a).elements())), tuple(sorted((a - b).elements())))
