"""The bundled demo: its index agrees with the sample record, and its scenes with the positions."""

from __future__ import annotations

import math

import numpy as np
import pytest

from companion.games.icebomb_arena import Phase
from companion.pieces import Pose
from companion.synth import demo
from companion.synth.scene import BEAD, PAWN, PYRAMID


@pytest.fixture(scope="module")
def planned():
    return demo.plan_demo()


@pytest.fixture(scope="module")
def index():
    return demo.read_index()


def test_the_index_follows_the_sample_record_event_by_event(index, planned):
    verdicts, positions = planned
    assert index["events"] == verdicts and len(positions) == len(verdicts) + 1
    assert all(v["legal"] for v in verdicts)  # the sample game is a legal one
    frames = index["frames"]
    assert [f["frame"] for f in frames] == list(range(len(frames)))
    events = [f["event"] for f in frames]
    assert events == sorted(events) and events[0] == 0 and events[-1] == len(verdicts)
    calm = [f for f in frames if not f["hand"]]
    for k in range(len(verdicts) + 1):
        assert sum(f["event"] == k for f in calm) == demo.CALM_FRAMES, k


def test_a_hand_passes_exactly_when_the_table_changes(index, planned):
    _, positions = planned
    frames = index["frames"]
    expected = 0
    for k in range(1, len(positions)):
        changed = demo._visible(positions[k - 1]) != demo._visible(positions[k])
        first_calm = next(i for i, f in enumerate(frames) if f["event"] == k and not f["hand"])
        run = frames[first_calm - demo.HAND_FRAMES:first_calm]
        if changed:
            assert all(f["hand"] for f in run), k
            expected += demo.HAND_FRAMES
        else:
            assert not frames[first_calm - 1]["hand"] and frames[first_calm - 1]["event"] == k - 1
    assert sum(f["hand"] for f in frames) == expected
    # Calm frames of one position share one image; every hand frame is an image of its own.
    by_event = {}
    for f in frames:
        if not f["hand"]:
            by_event.setdefault(f["event"], set()).add(f["file"])
    assert all(len(files) == 1 for files in by_event.values())
    assert index["files"] == len({f["file"] for f in frames})


def test_the_demo_is_small_fixed_in_view_and_its_frames_are_there(index):
    folder = demo.OUT / "frames"
    files = {f["file"] for f in index["frames"]}
    assert all((folder / name).exists() for name in files)
    assert sum((folder / name).stat().st_size for name in files) < 15e6
    assert index["camera"] == demo.demo_camera().to_json()
    assert index["image"] == {"width": 1280, "height": 720}
    cv2 = pytest.importorskip("cv2")
    first = cv2.imread(str(folder / index["frames"][0]["file"]))
    assert first.shape == (720, 1280, 3)


def test_the_camera_is_a_webcam_on_a_stand_that_sees_every_seat():
    camera = demo.demo_camera()
    cx, cy = demo.BOARD.centre
    eye = camera.position
    distance = math.dist(eye, (cx, cy - 40, demo.BOARD.thickness_mm))
    tilt = math.degrees(math.acos((eye[2] - demo.BOARD.thickness_mm) / distance))
    assert 600 <= distance <= 800 and 20 <= tilt <= 35
    for seat in range(4):
        x, y, _ = demo.seat_point(seat)
        px = camera.project(np.array([[x - 50, y - 30, 0], [x + 50, y + 30, 0]]))
        assert (px >= 0).all() and (px[:, 0] < 1280).all() and (px[:, 1] < 720).all(), seat


def test_scenes_show_the_positions_and_unmoved_pieces_stay_put(planned):
    _, positions = planned
    action = next(k for k, s in enumerate(positions) if s.phase is Phase.ACTION)
    for k in (action - 1, action, action + 1, len(positions) - 1):
        state = positions[k]
        objects = demo.table_objects(state)
        grid = state.grid
        pawns = {o.cell for o in objects if o.kind == PAWN}
        assert pawns == {grid.name(c) for p, c in enumerate(state.gladiators) if c is not None and state.alive[p]}
        assert {o.cell for o in objects if o.kind == BEAD} == {grid.name(c) for c in state.bombs}
        blocks = {o.cell: (o.colour, o.size) for o in objects if o.kind == PYRAMID and o.cell}
        assert blocks == {grid.name(c): (demo.COLOURS[b[0]], b[1]) for c, b in enumerate(state.blocks) if b}
        plans = [o for o in objects if o.zone]
        shown = sum(len(h) for p, h in enumerate(state.hands) if h and state.alive[p]) if demo.shows_plans(state) else 0
        assert len(plans) == shown
        for o in plans:
            if o.piece_pose is Pose.LYING:
                assert o.direction in "NESW"
    # A pawn that did not move between two positions is drawn at exactly the same spot.
    a, b = positions[action], positions[action + 1]
    before = {o.cell: o.pose for o in demo.table_objects(a) if o.kind in (PAWN, BEAD)}
    after = {o.cell: o.pose for o in demo.table_objects(b) if o.kind in (PAWN, BEAD)}
    common = set(before) & set(after)
    assert common and all(np.array_equal(before[c], after[c]) for c in common)
