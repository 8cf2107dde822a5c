"""The tracker: motion gating, stability over calm frames, diffs of stable observations."""

from __future__ import annotations

from collections import Counter

import numpy as np

from companion.pieces import Colour, Pose, Size
from companion.vision.observation import Observation, SeenPiece
from companion.vision.tracker import Tracker, TrackerConfig, consensus, diff, item_text, position_key


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
    tracker.update(_frame(patch=220), lambda: _obs("hand"))  # the move: something moved
    events = [tracker.update(_frame(), lambda: _obs("a2")) for _ in range(6)]
    # The first frame still differs from the moving one; then three calm observations.
    assert [e is not None for e in events] == [False, False, False, True, False, False]
    assert events[3].appeared == ("pawn @a2",) and events[3].vanished == ("pawn @a1",)


def test_the_same_position_settling_again_after_a_hand_is_told_but_is_no_change():
    tracker = Tracker(TrackerConfig(calm_frames=3))
    for _ in range(4):
        tracker.update(_frame(), lambda: _obs("a1"))
    first = tracker.stable
    assert tracker.settle_count == 1 and tracker.settled is first
    tracker.update(_frame(patch=220), lambda: _obs("hand"))
    # A bead put down that the detector misses: the position seen is the same as before.
    events = [tracker.update(_frame(), lambda: _obs("a1")) for _ in range(5)]
    assert events == [None] * 5 and tracker.stable is first
    assert tracker.settle_count == 2 and tracker.settled is not first
    assert position_key(tracker.settled) == position_key(first)


def test_a_piece_missed_in_one_frame_out_of_three_is_still_there():
    tracker = Tracker(TrackerConfig(calm_frames=3))
    for _ in range(3):
        tracker.update(_frame(), lambda: _obs("a1", "b1"))
    tracker.update(_frame(patch=220), lambda: _obs())
    seen = [("a1", "b1", "c1"), ("a1", "b1", "c1"), ("a1", "c1"), ("a1", "b1", "c1"), ("b1", "c1")]
    events = [tracker.update(_frame(), lambda cells=cells: _obs(*cells)) for cells in [seen[0]] + seen]
    changes = [e for e in events if e is not None]
    assert len(changes) == 1 and changes[0].appeared == ("pawn @c1",) and changes[0].vanished == ()
    assert position_key(tracker.stable) == position_key(_obs("a1", "b1", "c1"))


def test_a_piece_seen_in_one_frame_only_is_not_a_move():
    tracker = Tracker(TrackerConfig(calm_frames=3))
    seen = [("a1",), ("a1",), ("a1", "h8"), ("a1",), ("a1",), ("a1",)]
    events = [tracker.update(_frame(), lambda cells=cells: _obs(*cells)) for cells in seen]
    assert events == [None] * len(seen)
    assert position_key(tracker.stable) == position_key(_obs("a1"))


def test_the_majority_view_counts_repeated_pieces():
    keys = [Counter({"pawn @a1": 2}), Counter({"pawn @a1": 2, "bead @b2": 1}), Counter({"pawn @a1": 1}),
            Counter({"pawn @a1": 2, "bead @b2": 1}), Counter()]
    assert consensus(keys) == Counter({"pawn @a1": 2})
    assert consensus(keys[:2]) == Counter({"pawn @a1": 2})
    assert consensus([]) == Counter()


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


SKIN_BGR = (120, 160, 220)  # a light complexion, in BGR


def _scene(hand: str | None = None, piece: bool = False) -> np.ndarray:
    """A grey table; optionally a hand (skin blob) over it, an arm (dark blob from the edge), a piece."""
    frame = np.full((120, 160, 3), 90, np.uint8)
    frame[10:110, 20:140] = (60, 110, 60)  # the board
    if piece:
        frame[50:58, 70:76] = (30, 30, 200)
    if hand == "hand":
        frame[40:75, 50:85] = SKIN_BGR
    elif hand == "arm":
        frame[60:80, 0:90] = (40, 20, 20)
    return frame


def _run(frames, tracker=None):
    tracker = tracker or Tracker(TrackerConfig(calm_frames=2))
    observed, states = [], []
    for k, (frame, cells) in enumerate(frames):
        tracker.update(frame, lambda k=k, cells=cells: observed.append(k) or _obs(*cells))
        states.append(tracker.status.state)
    return tracker, observed, states


def test_a_hand_held_still_over_the_board_is_not_observed():
    calm = [(_scene(), ("a1",))] * 3
    still_hand = [(_scene("hand"), ("b1",))] * 6  # were it observed, the pawn would seem to move
    tracker, observed, states = _run(calm + still_hand + calm)
    assert not set(observed) & set(range(3, 9))
    assert states[3] == "motion" and states[4:9] == ["hand"] * 5
    assert tracker.stable is not None and item_text(tracker.stable.pieces[0]) == "pawn @a1"


def test_an_arm_reaching_in_from_the_edge_is_a_hand_whatever_its_colour():
    calm = [(_scene(), ("a1",))] * 3
    _, observed, states = _run(calm + [(_scene("arm"), ("b1",))] * 4)
    assert states[-3:] == ["hand"] * 3 and max(observed) < 3


def test_a_piece_set_down_is_not_a_hand():
    calm = [(_scene(), ("a1",))] * 3
    _, observed, states = _run(calm + [(_scene(piece=True), ("a1", "c3"))] * 3)
    assert "hand" not in states and observed[-1] == 5


def test_a_lasting_change_of_light_becomes_the_new_normal_after_patience():
    tracker = Tracker(TrackerConfig(calm_frames=2, hand_patience=4))
    calm = [(_scene(), ("a1",))] * 3
    lamp = _scene()
    lamp[:, :40] = 200  # a lamp lights the left of the view, up to the frame's edge
    _, observed, states = _run(calm + [(lamp, ("a1",))] * 8, tracker)
    assert states[4:8] == ["hand"] * 4 and observed[-1] == 10
