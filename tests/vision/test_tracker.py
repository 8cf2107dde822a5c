"""The tracker: motion gating, stability over calm frames, diffs of stable observations."""

from __future__ import annotations

import numpy as np

from companion.pieces import Colour, Pose, Size
from companion.vision.observation import Observation, SeenPiece
from companion.vision.tracker import Tracker, TrackerConfig, diff, item_text


def _obs(*cells: str) -> Observation:
    return Observation("icebomb-arena", tuple(SeenPiece(kind="pawn", cell=c) for c in cells))


def _frame(value: int = 100, patch: int | None = None) -> np.ndarray:
    frame = np.full((120, 160, 3), value, np.uint8)
    if patch is not None:
        frame[20:80, 30:90] = patch
    return frame


def test_a_change_is_reported_once_after_enough_calm_frames():
    tracker = Tracker(TrackerConfig(calm_frames=3))
    events = [tracker.update(_frame(), lambda: _obs("a1")) for _ in range(4)]
    assert events == [None] * 4 and tracker.stable is not None
    events = [tracker.update(_frame(), lambda: _obs("a2")) for _ in range(5)]
    assert [e is not None for e in events] == [False, False, True, False, False]
    assert events[2].appeared == ("pawn @a2",) and events[2].vanished == ("pawn @a1",)


def test_frames_in_motion_are_not_observed_and_reset_the_calm_count():
    tracker = Tracker(TrackerConfig(calm_frames=2))
    calls = []

    def observe(cell):
        def run():
            calls.append(cell)
            return _obs(cell)
        return run

    for _ in range(3):
        tracker.update(_frame(), observe("a1"))
    assert tracker.update(_frame(patch=220), observe("hand")) is None  # a hand comes in
    assert tracker.status.state == "motion"
    assert tracker.update(_frame(patch=30), observe("hand")) is None  # and moves
    assert tracker.update(_frame(), observe("a3")) is None  # leaves: this frame still differs from the last
    assert "hand" not in calls
    assert tracker.update(_frame(), observe("a3")) is None  # calm 1
    change = tracker.update(_frame(), observe("a3"))  # calm 2: stable
    assert change is not None and change.appeared == ("pawn @a3",)


def test_flickering_observations_never_become_stable():
    tracker = Tracker(TrackerConfig(calm_frames=3))
    for k in range(10):
        tracker.update(_frame(), lambda k=k: _obs("a1" if k % 2 else "b1"))
    assert tracker.stable is None and tracker.status.state == "settling"


def test_motion_outside_the_watched_region_is_ignored():
    region = np.array([[100, 0], [160, 0], [160, 120], [100, 120]], float)
    tracker = Tracker(TrackerConfig(calm_frames=1), region=region)
    tracker.update(_frame(), lambda: _obs("a1"))
    tracker.update(_frame(patch=250), lambda: _obs("a1"))  # the patch is left of x=90
    assert tracker.status.state == "stable"


def test_item_texts_name_piece_pose_direction_place_and_level():
    lying = SeenPiece(kind="pyramid", colour=Colour.RED, size=Size.LARGE, pose=Pose.LYING, direction="N", cell="d4")
    stacked = SeenPiece(kind="pyramid", colour=Colour.BLUE, size=Size.MEDIUM, pose=Pose.UPRIGHT, cell="e2", stack=0, level=1)
    assert item_text(lying) == "red-L N @d4"
    assert item_text(stacked) == "blue-M U @e2#1"
    change = diff(_obs("a1", "a1"), _obs("a1"))
    assert change.vanished == ("pawn @a1",) and change.appeared == ()
