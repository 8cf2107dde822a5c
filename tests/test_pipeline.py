"""The camera pipeline end to end, and each fault it must survive (issue 12), without a model or camera.

Frames come from `DrawnTable` (an Icebomb Arena table drawn from engine states, hands passing
between moves) through fake frame sources; the detector is `MarkerDetector`, which reads the
drawn markers back, so every stage after the detector is the real one.
"""

from __future__ import annotations

import json
import threading
import time
from pathlib import Path

import cv2
import numpy as np
import pytest

from companion.games.base import state_key
from companion.pipeline import CameraFeed, PipelineConfig, PipelineConfigError, make_feed
from companion.session import CameraSource, SessionHub, SourceError, SourceRunner
from companion.sources import (DrawnTable, Frame, ImageFolderSource, MarkerDetector, VideoFileSource,
                               decode_image, demo_video_path, open_source)

SAMPLE = Path(__file__).resolve().parents[1] / "companion" / "data" / "samples" / "icebomb-arena-4p.jsonl"
LINES = SAMPLE.read_text().splitlines()
TEXTS = [json.loads(line)["action"] for line in LINES[1:]]
SIZE = (640, 360)
FAST = dict(realtime=False, push_fps=0, stall_seconds=0.5)


def wait_until(predicate, limit=15.0):
    deadline = time.monotonic() + limit
    while time.monotonic() < deadline:
        if predicate():
            return True
        time.sleep(0.01)
    return False


@pytest.fixture(scope="module")
def table():
    return DrawnTable(*SIZE)


def scripted_frames(table, state, texts, calm=4, hand=2, shift=(0.0, 0.0)):
    """(frames, indices of hand frames, state after): calm frames of each position, a hand between moves."""
    frames, hands = [], set()
    for _ in range(calm):
        frames.append(table.draw_state(state, shift=shift))
    for step, text in enumerate(texts):
        state = state.apply(text)
        for k in range(hand):
            hands.add(len(frames))
            frames.append(table.draw_state(state, shift=shift, hand_at=(250 + 40 * k + 7 * step, 190 - 20 * k)))
        for _ in range(calm):
            frames.append(table.draw_state(state, shift=shift))
    return frames, hands, state


class ListSource:
    """A fake camera or file: plays a list of frames; `live` makes the frozen and stall checks apply."""

    def __init__(self, frames, live=False, description="fake camera"):
        self.frames, self.live, self.description, self.fps = frames, live, description, 30.0
        self.position = 0
        self.opened = 0

    def open(self):
        self.opened += 1

    def read(self):
        if self.position >= len(self.frames):
            return None
        item = self.frames[self.position]
        self.position += 1
        if isinstance(item, Exception):
            raise item
        if isinstance(item, Frame):
            return item
        return Frame(item, self.position - 1, time.monotonic(), f"#{self.position - 1}")

    def close(self):
        pass


def hub_after_bids(tmp_path) -> SessionHub:
    """A game of the sample record after its four bids: bombs are placed next (beads appear)."""
    hub = SessionHub(tmp_path)
    hub.import_record(LINES[:5])
    return hub


def run_to_end(hub, feed, limit=30.0):
    runner = SourceRunner(hub, feed, first_delay=0.05, max_delay=0.2).start()
    try:
        assert wait_until(lambda: "ended" in hub.faults().get("source", ""), limit), hub.faults()
    finally:
        runner.stop()
    return runner


def camera_moves(hub):
    return [item.text for item in hub.session.snapshot().log if item.source == "camera"]


class HandAwareDetector(MarkerDetector):
    """Records whether it was ever run on a frame with a hand (skin) in it."""

    def __init__(self):
        super().__init__()
        self.saw_hand = 0

    def __call__(self, frame):
        if cv2.inRange(frame, (110, 150, 205), (130, 170, 225)).any():
            self.saw_hand += 1
        return super().__call__(frame)


# ---- the pipeline end to end ---------------------------------------------------------------------------

def test_moves_seen_on_the_table_are_refereed_and_journalled_with_their_observation(tmp_path, table):
    hub = hub_after_bids(tmp_path)
    frames, _, _ = scripted_frames(table, hub.session.snapshot().state, TEXTS[4:10])
    detector = HandAwareDetector()
    feed = CameraFeed("fake", PipelineConfig(**FAST), detector, lambda: ListSource(frames))
    run_to_end(hub, feed)
    assert camera_moves(hub) == TEXTS[4:10]
    assert detector.saw_hand == 0, "the detector ran while a hand was over the board"
    assert detector.calls <= 2 * 7, "the detector ran on still frames it had already seen"
    entries = [e for e in hub.session._journal.entries() if e.kind == "action" and e.source == "camera"]
    assert entries[0].observation["camera"]["position"]["cells"]["d4"] == ["bead"]
    assert hub.frame()[0][:2] == b"\xff\xd8"  # the annotated picture reached the page
    assert hub.session.snapshot().verdicts == ()
    hub.close()


def test_a_stray_pawn_on_the_board_all_game_is_reported_once_and_moves_are_read_past_it(tmp_path, table):
    from companion.sources import PAWN_BGR

    class StrayPawn(MarkerDetector):
        """The table with a pawn that is no part of the game yet (bombs are being placed) lying
        on one cell throughout: to the referee, a misread the camera repeats in every frame."""

        def __call__(self, frame):
            frame = frame.copy()
            x, y = (round(v * frame.shape[1] / SIZE[0]) for v in table.cell_centre("f3"))
            cv2.circle(frame, (x, y), max(4, frame.shape[1] // 100), PAWN_BGR, -1)
            return super().__call__(frame)

    hub = hub_after_bids(tmp_path)
    frames, _, _ = scripted_frames(table, hub.session.snapshot().state, TEXTS[4:10])
    run_to_end(hub, CameraFeed("fake", PipelineConfig(**FAST), StrayPawn(), lambda: ListSource(frames)))
    # The first position already shows the pawn: one verdict; every later move is read from the
    # change since the last agreed position, in which the pawn cancels out.
    verdicts = hub.session.snapshot().verdicts
    assert len(verdicts) == 1 and "pawn @" in verdicts[0].reason
    assert camera_moves(hub) == TEXTS[4:10]
    entries = [e for e in hub.session._journal.entries() if e.kind == "action" and e.source == "camera"]
    stray = [e.observation["persistent_differences"] for e in entries]
    assert len(stray[0]) == 1 and stray[0][0].startswith("pawn @") and all(d == stray[0] for d in stray)
    hub.close()


def test_beads_the_detector_never_sees_are_read_from_where_the_picture_changed(tmp_path, table):
    from companion.sources import BEAD_BGR

    def pale_beads(frame):
        """The beads on a6 and g6 drawn pale, as clear glass on a white square looks: plain to the
        picture's change, invisible to the (marker) detector."""
        frame = frame.copy()
        mm = np.array([[table.cell_centre(c) for c in ("a6", "g6")]], np.float64)
        near = np.zeros(frame.shape[:2], np.uint8)
        for x, y in cv2.perspectiveTransform(mm, table.homography)[0]:
            cv2.circle(near, (round(x), round(y)), 12, 1, -1)
        bead = cv2.inRange(frame, np.clip(np.array(BEAD_BGR) - 30, 0, 255), np.clip(np.array(BEAD_BGR) + 30, 0, 255))
        frame[(bead > 0) & (near > 0)] = (170, 200, 170)
        return frame

    hub = hub_after_bids(tmp_path)
    frames, _, _ = scripted_frames(table, hub.session.snapshot().state, TEXTS[4:14])
    assert [t.split()[-1] for t in TEXTS[4:14] if "bomb" in t][3::4] == ["a6", "g6"]
    detector = MarkerDetector()
    feed = CameraFeed("fake", PipelineConfig(**FAST), detector, lambda: ListSource([pale_beads(f) for f in frames]))
    run_to_end(hub, feed)
    assert camera_moves(hub) == TEXTS[4:14]
    assert feed.stats.counts["actions_from_picture"] == 2
    entries = [e for e in hub.session._journal.entries() if e.kind == "action" and e.source == "camera"]
    assert [e.observation.get("picture_changed_cells") for e in entries if e.action.endswith(("a6", "g6"))] == [["a6"], ["g6"]]
    # Later moves are read past the beads the camera still misses: no verdict all game.
    assert hub.session.snapshot().verdicts == ()
    hub.close()


def test_the_demo_enters_the_secret_bids_from_its_record_and_the_camera_reads_the_rest(tmp_path, table):
    hub = SessionHub(tmp_path)
    hub.import_record(LINES[:1])  # the sample game, nothing played: the bids come first
    after_bids = hub.session.snapshot().state
    for text in TEXTS[:4]:
        after_bids = after_bids.apply(text)
    frames, _, _ = scripted_frames(table, after_bids, TEXTS[4:8])
    run_to_end(hub, CameraFeed("fake", PipelineConfig(**FAST), MarkerDetector(), lambda: ListSource(frames),
                               demo_record=SAMPLE))
    log = [(item.source, item.text) for item in hub.session.snapshot().log]
    assert log == [("demo", t) for t in TEXTS[:4]] + [("camera", t) for t in TEXTS[4:8]]
    assert hub.session.snapshot().verdicts == ()
    hub.close()


def demo_feed_after_bids(tmp_path):
    """(hub, feed, its game's context) of the demo's record once the players entered the secret bids."""
    hub = SessionHub(tmp_path)
    hub.import_record(LINES[:1])
    feed = CameraFeed("fake", PipelineConfig(**FAST), MarkerDetector(), lambda: ListSource([]), demo_record=SAMPLE)
    feed._start_demo_game(hub)
    context = feed._game(hub)
    feed.demo_players.enter_unseen_moves(context)
    return hub, feed, context


def test_the_demo_s_players_type_in_what_the_table_shows_when_no_fix_offered_is_it(tmp_path):
    from companion.vision.observation import Observation, SeenPiece

    hub, feed, context = demo_feed_after_bids(tmp_path)
    assert [item.text for item in hub.session.snapshot().log] == TEXTS[:4]
    assert TEXTS[4:7] == ["P3 bomb d4", "P4 bomb h5", "P1 bomb c1"]

    def seen(*cells_of_beads, stray=None):
        pieces = [SeenPiece("bead", cell=c) for c in cells_of_beads]
        pieces += [SeenPiece("pawn", cell=stray)] if stray else []
        return Observation("icebomb-arena", tuple(pieces))

    image = np.zeros((8, 8, 3), np.uint8)
    # A pawn the camera imagines, and no bead of theirs: the players have nothing to type in.
    nothing = seen(stray="a1")
    verdict = hub.session.add_verdict("illegal", "+[pawn @a1]", "illegal or misread", source="camera")
    feed.demo_players.answer_verdict(context, verdict, [], nothing, image)
    assert len(hub.session.snapshot().actions) == 4 and len(hub.session.snapshot().verdicts) == 1
    # Two bombs placed and the same stray pawn: the players type in the two bombs the table shows
    # (not the third, which it does not), and that position becomes the camera's baseline.
    two_bombs = seen("d4", "h5", stray="a1")
    feed.demo_players.answer_verdict(context, verdict, [], two_bombs, image)
    log = [(item.source, item.text) for item in hub.session.snapshot().log]
    assert log[4:] == [("demo", "P3 bomb d4"), ("demo", "P4 bomb h5")]
    assert hub.session.snapshot().verdicts == () and feed.stats.counts["demo_entries"] == 1
    assert context.baseline is two_bombs
    hub.close()


def test_the_demo_s_players_click_the_fix_that_is_what_they_played_in_any_order(tmp_path):
    from companion.vision.observation import Observation

    hub, feed, context = demo_feed_after_bids(tmp_path)
    assert TEXTS[4:7] == ["P3 bomb d4", "P4 bomb h5", "P1 bomb c1"]
    verdict = hub.session.add_verdict("illegal", "+[bead @d4] +[bead @h5]", "illegal or misread", source="camera")
    # Not theirs next (P1's bomb comes third), then their next two in another order: the second is clicked.
    fixes = ["P1 bomb c1", "P4 bomb h5; P3 bomb d4"]
    feed.demo_players.answer_verdict(context, verdict, fixes, Observation("icebomb-arena", ()),
                                     np.zeros((8, 8, 3), np.uint8))
    log = [(item.source, item.text) for item in hub.session.snapshot().log]
    assert log[4:] == [("demo", "P3 bomb d4"), ("demo", "P4 bomb h5")]
    assert hub.session.snapshot().verdicts == ()
    assert feed.stats.counts["demo_fixes"] == 1 and feed.stats.counts["demo_entries"] == 0
    hub.close()


def test_the_demo_s_players_correct_a_move_the_camera_read_as_another_and_leave_the_right_ones(tmp_path):
    hub, feed, context = demo_feed_after_bids(tmp_path)
    assert TEXTS[4:6] == ["P3 bomb d4", "P4 bomb h5"]
    # The camera took P3's bomb for one a cell off and read P4's right.
    hub.session.apply("P3 bomb d5", source="camera")
    hub.session.apply("P4 bomb h5", source="camera")
    feed.demo_players.correct_camera_moves(context)
    log = hub.session.snapshot().log
    assert [(item.source, item.text, item.corrected_from) for item in log[4:]] == [
        ("demo", "P3 bomb d4", "P3 bomb d5"), ("camera", "P4 bomb h5", None)]
    assert feed.stats.counts["demo_corrections"] == 1
    assert context.baseline_state == state_key(hub.session.snapshot().state)
    # What the players corrected is theirs: it is not looked at again.
    feed.demo_players.correct_camera_moves(context)
    assert feed.stats.counts["demo_corrections"] == 1
    hub.close()


def test_a_pawn_before_the_bombs_are_placed_is_a_verdict_and_the_game_does_not_change(tmp_path, table):
    hub = hub_after_bids(tmp_path)
    state = hub.session.snapshot().state
    frames = [table.draw_state(state)] * 4
    frames += [table.draw({0: "e4"}, hand_at=(300, 180))] + [table.draw({0: "e4"})] * 4
    feed = CameraFeed("fake", PipelineConfig(**FAST), MarkerDetector(), lambda: ListSource(frames))
    run_to_end(hub, feed)
    snapshot = hub.session.snapshot()
    assert len(snapshot.actions) == 4  # only the bids
    (verdict,) = snapshot.verdicts
    assert verdict.kind == "illegal" and verdict.source == "camera"
    assert feed.stats.counts["verdicts_illegal"] == 1 and feed.stats.counts["verdicts_misread"] == 0
    assert "+[pawn @e4]" in verdict.seen
    assert verdict.reason.startswith("illegal or misread") and "seen pawn @e4" in verdict.reason
    assert verdict.observation["expected"] == [], "no bead or pawn is expected before the bombs"
    hub.close()


def test_the_a1_corner_chosen_on_the_page_reaches_the_board_locator(tmp_path, table):
    hub = hub_after_bids(tmp_path)
    feed = CameraFeed("fake", PipelineConfig(**FAST), MarkerDetector(), lambda: ListSource([]))
    assert feed._game(hub).spec.a1_hint == PipelineConfig(**FAST).a1_hint
    hub.session.set_a1_corner("far-right")
    assert feed._game(hub).spec.a1_hint == "top-right"
    hub.close()


def test_the_capture_thread_keeps_only_the_newest_frame_in_real_time(tmp_path, table):
    hub = hub_after_bids(tmp_path)
    frames = [table.draw_state(hub.session.snapshot().state)] * 60
    source = ListSource(frames)
    source.fps = 200.0  # faster than the slowed detector below
    feed = CameraFeed("fake", PipelineConfig(realtime=True, push_fps=0, redetect_pixels=0),
                      MarkerDetector(delay=0.02), lambda: source)
    run_to_end(hub, feed)
    assert feed.frames < 45, "every frame was processed: stale frames were queued"
    hub.close()


# ---- faults (issue 12) --------------------------------------------------------------------------------

class Unpluggable:
    """A live camera: delivers `before`, is unplugged (read fails, then open fails once), then delivers `after`."""

    description = "webcam:9"
    live = True
    fps = 30.0

    def __init__(self, before, after):
        self.before, self.after = before, after
        self.connection = 0
        self.position = 0
        self.frames = before

    def open(self):
        self.connection += 1
        if self.connection == 2:
            raise SourceError("camera 9 cannot be opened (unplugged, or in use by another program)")
        self.frames = self.before if self.connection == 1 else self.after
        self.position = 0

    def read(self):
        if self.position >= len(self.frames):
            if self.connection == 1:
                raise SourceError("camera 9 was unplugged")
            return None
        frame = Frame(self.frames[self.position], self.position, time.monotonic(), f"#{self.position}")
        self.position += 1
        return frame

    def close(self):
        pass


def test_camera_unplugged_and_replugged_reconnects_and_loses_nothing(tmp_path, table):
    hub = hub_after_bids(tmp_path)
    state = hub.session.snapshot().state
    before, _, state = scripted_frames(table, state, TEXTS[4:6])
    after, _, _ = scripted_frames(table, state, TEXTS[6:8])
    camera = Unpluggable(before, after)
    seen = []
    feed = CameraFeed("webcam:9", PipelineConfig(**FAST), MarkerDetector(), lambda: camera)
    feed.on_stable = lambda *_: seen.append(hub.faults().get("source"))
    runner = SourceRunner(hub, feed, first_delay=0.05, max_delay=0.2).start()
    messages = []
    try:
        assert wait_until(lambda: messages.append(hub.faults().get("source")) or len(camera_moves(hub)) == 4)
    finally:
        runner.stop()
    assert camera_moves(hub) == TEXTS[4:8]
    assert any(m and "unplugged" in m and "retrying" in m for m in messages)
    assert camera.connection == 3
    notes = [e.detail["message"] for e in hub.session._journal.entries() if e.kind == "note"]
    assert any("unplugged" in n for n in notes)
    hub.close()


def test_a_live_camera_that_stops_delivering_is_taken_as_unplugged(tmp_path, table):
    class Stalled(ListSource):
        closed = False

        def read(self):
            while self.position >= 3 and not self.closed:
                time.sleep(0.02)  # the driver blocks: no picture, no error
            return None if self.closed else super().read()

        def close(self):
            self.closed = True

    hub = hub_after_bids(tmp_path)
    frame = table.draw_state(hub.session.snapshot().state)
    feed = CameraFeed("webcam:3", PipelineConfig(**{**FAST, "stall_seconds": 0.3}), MarkerDetector(),
                      lambda: Stalled([frame] * 3, live=True))
    runner = SourceRunner(hub, feed, first_delay=5.0).start()
    try:
        assert wait_until(lambda: "no picture for" in hub.faults().get("source", ""), 10)
    finally:
        runner.stop()
    assert "camera unplugged?" in hub.faults()["source"]
    hub.close()


def test_unreadable_and_truncated_frames_are_skipped_with_a_message(tmp_path, table):
    hub = hub_after_bids(tmp_path / "data")
    frames, _, _ = scripted_frames(table, hub.session.snapshot().state, TEXTS[4:6])
    folder = tmp_path / "frames"
    folder.mkdir()
    for i, frame in enumerate(frames):
        cv2.imwrite(str(folder / f"{i:03d}.jpg"), frame, [cv2.IMWRITE_JPEG_QUALITY, 95])
    whole = (folder / "005.jpg").read_bytes()
    (folder / "005.jpg").write_bytes(whole[: len(whole) // 2])  # a half-written file
    (folder / "009.jpg").write_bytes(b"not a picture at all")
    reports = []
    original = hub.report_fault
    hub.report_fault = lambda key, message: reports.append((key, message)) or original(key, message)
    feed = CameraFeed(str(folder), PipelineConfig(**FAST), MarkerDetector())
    run_to_end(hub, feed)
    assert camera_moves(hub) == TEXTS[4:6]
    frame_faults = [m for k, m in reports if k == "frames"]
    assert any("005.jpg" in m and "truncated JPEG" in m for m in frame_faults)
    assert any("009.jpg" in m and "not a readable image" in m for m in frame_faults)
    assert feed.stats.counts["bad_frames"] == 2
    hub.close()


def test_decode_image_refuses_a_truncated_jpeg_that_libjpeg_would_pad_with_grey(table):
    ok, data = cv2.imencode(".jpg", table.draw())
    image, problem = decode_image(data.tobytes(), "x.jpg")
    assert problem is None and image.shape == (SIZE[1], SIZE[0], 3)
    image, problem = decode_image(data.tobytes()[:-400], "x.jpg")
    assert image is None and "truncated" in problem


def test_a_video_that_ends_leaves_the_game_in_manual_mode_with_its_moves_kept(tmp_path, table):
    hub = hub_after_bids(tmp_path / "data")
    frames, _, _ = scripted_frames(table, hub.session.snapshot().state, TEXTS[4:6])
    video = tmp_path / "table.avi"
    writer = cv2.VideoWriter(str(video), cv2.VideoWriter_fourcc(*"MJPG"), 10.0, SIZE)
    for frame in frames:
        writer.write(frame)
    writer.release()
    feed = make_feed(str(video), PipelineConfig(**FAST), MarkerDetector())
    run_to_end(hub, feed)
    assert "the feed ended; manual mode" in hub.faults()["source"]
    assert camera_moves(hub) == TEXTS[4:6]
    hub.session.apply(TEXTS[6])  # the game goes on by hand
    hub.close()


def test_a_frozen_picture_is_reported_then_the_camera_reopened(tmp_path, table):
    hub = hub_after_bids(tmp_path)
    frame = table.draw_state(hub.session.snapshot().state)

    class Frozen(ListSource):
        def read(self):
            time.sleep(0.01)
            return Frame(frame, 0, time.monotonic(), "#0")  # the same picture for ever

    sources = []
    config = PipelineConfig(**{**FAST, "frozen_seconds": 0.2, "frozen_restart_seconds": 0.6})
    feed = CameraFeed("webcam:1", config, MarkerDetector(),
                      lambda: sources.append(Frozen([], live=True)) or sources[-1])
    runner = SourceRunner(hub, feed, first_delay=0.05, max_delay=0.1).start()
    frozen_messages = []
    try:
        assert wait_until(lambda: frozen_messages.append(hub.faults().get("camera picture")) or len(sources) >= 2)
    finally:
        runner.stop()
    assert any(m and "has not changed" in m and "frozen" in m for m in frozen_messages)
    notes = [e.detail["message"] for e in hub.session._journal.entries() if e.kind == "note"]
    assert any("reopening the camera" in n for n in notes)
    assert len(hub.session.snapshot().actions) == 4
    hub.close()


def test_the_board_bumped_is_located_again_and_later_moves_still_read_right(tmp_path, table):
    hub = hub_after_bids(tmp_path)
    state = hub.session.snapshot().state
    before, _, state = scripted_frames(table, state, TEXTS[4:6])
    bump = [table.draw_state(state, shift=(12.0, 5.0))]
    after, _, _ = scripted_frames(table, state, TEXTS[6:8], shift=(30.0, 14.0))
    feed = CameraFeed("fake", PipelineConfig(**FAST), MarkerDetector(), lambda: ListSource(before + bump + after))
    run_to_end(hub, feed)
    assert camera_moves(hub) == TEXTS[4:8]
    assert feed.stats.counts["board_moved"] >= 1
    notes = [e.detail["message"] for e in hub.session._journal.entries() if e.kind == "note"]
    assert any("board moved" in n and "located again" in n for n in notes)
    assert hub.session.snapshot().verdicts == ()
    hub.close()


def test_a_board_placed_a_row_off_at_set_up_is_put_right_on_a_still_frame_and_moves_read_right(
        tmp_path, table, monkeypatch):
    from dataclasses import replace

    import companion.pipeline as pipeline

    class FirstSearchOff(pipeline.Locator):
        """The first search places the board one row off, as a hand over it can."""

        searches = 0

        def locate(self, frame, *args, **kwargs):
            found = super().locate(frame, *args, **kwargs)
            FirstSearchOff.searches += 1
            if FirstSearchOff.searches > 1:
                return found
            row_up = np.array([[1.0, 0, 0], [0, 1.0, found.spec.cell_mm], [0, 0, 1.0]])
            return replace(found, homography=tuple(map(tuple, found.H @ row_up)))

    monkeypatch.setattr(pipeline, "Locator", FirstSearchOff)
    hub = hub_after_bids(tmp_path)
    frames, _, _ = scripted_frames(table, hub.session.snapshot().state, TEXTS[4:8])
    feed = CameraFeed("fake", PipelineConfig(**FAST), MarkerDetector(), lambda: ListSource(frames))
    run_to_end(hub, feed)
    assert FirstSearchOff.searches >= 2 and feed.stats.counts["board_found"] == 2
    notes = [e.detail["message"] for e in hub.session._journal.entries() if e.kind == "note"]
    assert any("located again on a still view" in n for n in notes)
    assert camera_moves(hub) == TEXTS[4:8]
    assert hub.session.snapshot().verdicts == ()
    hub.close()


def test_a_board_knocked_out_of_view_is_a_fault_and_the_game_is_unchanged(tmp_path, table):
    hub = hub_after_bids(tmp_path)
    state = hub.session.snapshot().state
    frames = [table.draw_state(state)] * 4 + [np.full((SIZE[1], SIZE[0], 3), 115, np.uint8)] * 20
    feed = CameraFeed("fake", PipelineConfig(**FAST), MarkerDetector(), lambda: ListSource(frames))
    run_to_end(hub, feed)
    assert "not found" in hub.faults()["board"]
    assert len(hub.session.snapshot().actions) == 4 and hub.session.snapshot().verdicts == ()
    hub.close()


def test_a_missing_model_says_so_and_stays_in_manual_mode_with_the_picture_shown(tmp_path, table):
    hub = hub_after_bids(tmp_path / "data")
    frames, _, _ = scripted_frames(table, hub.session.snapshot().state, TEXTS[4:6])
    config = PipelineConfig(**FAST, model=tmp_path / "models" / "pieces.pt", colour_model=None)
    feed = CameraFeed("fake", config, None, lambda: ListSource(frames))
    run_to_end(hub, feed)
    message = hub.faults()["model"]
    assert "pieces.pt does not exist" in message and "manual mode" in message
    assert hub.frame()[0] is not None
    assert camera_moves(hub) == []
    hub.session.apply(TEXTS[4])  # the page still referees by hand
    hub.close()


def test_a_corrupt_model_file_says_so_and_stays_in_manual_mode(tmp_path, table):
    from companion.vision.yolo_env import import_ultralytics

    try:
        import_ultralytics()  # offline first: a bare import here would leave it online for the rest of the run
    except ImportError:
        pytest.skip("ultralytics is not installed")
    hub = hub_after_bids(tmp_path / "data")
    weights = tmp_path / "pieces.pt"
    weights.write_bytes(b"\x00\x01 this is not a torch checkpoint")
    frames = [table.draw_state(hub.session.snapshot().state)] * 3
    feed = CameraFeed("fake", PipelineConfig(**FAST, model=weights, colour_model=None), None,
                      lambda: ListSource(frames))
    run_to_end(hub, feed, 60)
    message = hub.faults()["model"]
    assert "cannot load model" in message and "manual mode" in message
    hub.close()


def _needs_the_shipped_detector() -> None:
    from companion import models
    from companion.vision.yolo_env import import_ultralytics

    try:
        import_ultralytics()  # offline first, as above
    except ImportError:
        pytest.skip("ultralytics is not installed")
    if not models.DETECTOR_WEIGHTS.exists():
        pytest.skip("models/pieces.pt is not in this tree")


def test_a_corrupt_size_model_is_reported_and_the_detector_keeps_its_own_sizes(tmp_path):
    from companion import models
    from companion.pipeline import load_detector
    _needs_the_shipped_detector()
    sizes = tmp_path / "sizes.pt"
    sizes.write_bytes(b"\x00\x01 this is not a torch checkpoint")
    detector, warning = load_detector(PipelineConfig(model=models.DETECTOR_WEIGHTS, colour_model=None, size_model=sizes))
    assert detector.size_of is None
    assert warning is not None and f"size model {sizes} unusable" in warning and "the detector's own" in warning


def test_a_corrupt_dice_model_is_reported_and_the_dice_are_read_by_their_pips(tmp_path):
    from companion import models
    from companion.pipeline import load_detector
    _needs_the_shipped_detector()
    dice = tmp_path / "dice.pt"
    dice.write_bytes(b"\x00\x01 this is not a torch checkpoint")
    detector, warning = load_detector(PipelineConfig(model=models.DETECTOR_WEIGHTS, colour_model=None, size_model=None,
                                                     dice_model=dice))
    assert detector.faces_of is None
    assert warning is not None and f"dice model {dice} unusable" in warning and "counting pips" in warning


def test_a_corrupt_tip_model_is_reported_and_the_detector_runs_without_it(tmp_path):
    from companion import models
    from companion.pipeline import load_detector
    _needs_the_shipped_detector()
    tips = tmp_path / "tips.pt"
    tips.write_bytes(b"\x00\x01 this is not a torch checkpoint")
    detector, warning = load_detector(PipelineConfig(model=models.DETECTOR_WEIGHTS, colour_model=None, size_model=None,
                                                     dice_model=None, tip_model=tips))
    assert detector.tips_of is None
    assert warning is not None and f"tip model {tips} unusable" in warning


def test_a_corrupt_board_model_is_reported_and_boards_are_found_by_their_own_cues(tmp_path, table):
    from companion import models
    _needs_the_shipped_detector()
    hub = hub_after_bids(tmp_path / "data")
    boards = tmp_path / "boards.pt"
    boards.write_bytes(b"\x00\x01 this is not a torch checkpoint")
    frames = [table.draw_state(hub.session.snapshot().state)] * 3
    config = PipelineConfig(**FAST, model=models.DETECTOR_WEIGHTS, colour_model=None, size_model=None, board_model=boards)
    feed = CameraFeed("fake", config, None, lambda: ListSource(frames))
    run_to_end(hub, feed, 60)
    message = hub.faults()["model"]
    assert f"board model {boards} unusable" in message and "own cues" in message
    assert "board" not in hub.faults()  # found all the same
    assert feed.stats.counts["board_found"] >= 1
    hub.close()


def test_a_corrupt_calibration_file_is_reported_and_the_pipeline_works_without_it(tmp_path, table):
    hub = hub_after_bids(tmp_path / "data")
    frames, _, _ = scripted_frames(table, hub.session.snapshot().state, TEXTS[4:6])
    calibration = tmp_path / "camera.json"
    calibration.write_text('{"format": "icehouse-companion/camera-intrinsics", "version": 1, "image_si')
    feed = CameraFeed("fake", PipelineConfig(**FAST, calibration=calibration), MarkerDetector(),
                      lambda: ListSource(frames))
    run_to_end(hub, feed)
    message = hub.faults()["calibration"]
    assert "camera.json: not valid JSON" in message and "without lens correction" in message
    assert camera_moves(hub) == TEXTS[4:6]
    hub.close()


# ---- sources, specs and settings ---------------------------------------------------------------------

def test_source_specs(tmp_path):
    assert open_source("webcam:2").description == "webcam:2"
    with pytest.raises(ValueError, match="webcam:N"):
        open_source("webcam:front")
    with pytest.raises(FileNotFoundError):
        open_source(str(tmp_path / "nothing.mp4"))
    (tmp_path / "one.jpg").write_bytes(b"x")
    with pytest.raises(ValueError, match="one image is not a feed"):
        open_source(str(tmp_path / "one.jpg"))
    assert isinstance(open_source(str(tmp_path)), ImageFolderSource)


def test_an_image_folder_lists_the_pictures_it_will_play_in_name_order(tmp_path):
    for name in ("b.jpg", "a.png", "notes.txt", "c.jpeg"):
        (tmp_path / name).write_bytes(b"x")
    source = ImageFolderSource(tmp_path)
    assert source.paths == ()
    source.open()
    assert [p.name for p in source.paths] == ["a.png", "b.jpg", "c.jpeg"]
    source.read()
    assert len(source.paths) == 3  # reading does not use them up
    source.close()
    assert source.paths == ()


def test_a_missing_source_on_the_command_line_is_a_fault_and_manual_mode(tmp_path):
    hub = SessionHub(tmp_path)
    runner = SourceRunner(hub, CameraSource(str(tmp_path / "nowhere.avi"))).start()
    try:
        assert wait_until(lambda: "manual mode" in hub.faults().get("source", ""), 10)
    finally:
        runner.stop()
    assert "nowhere.avi" in hub.faults()["source"]


def test_a_video_file_source_reads_every_frame_then_ends(tmp_path, table):
    video = tmp_path / "v.avi"
    writer = cv2.VideoWriter(str(video), cv2.VideoWriter_fourcc(*"MJPG"), 12.0, SIZE)
    for _ in range(5):
        writer.write(table.draw())
    writer.release()
    source = VideoFileSource(video)
    source.open()
    got = []
    while (frame := source.read()) is not None:
        got.append(frame)
    source.close()
    assert len(got) == 5 and all(f.image.shape == (SIZE[1], SIZE[0], 3) for f in got)
    assert source.fps == pytest.approx(12.0)


def test_settings_file_defaults_and_errors(tmp_path, monkeypatch):
    from companion.models import COLOUR_WEIGHTS, MODELS_DIR, detector_for_inference

    assert PipelineConfig.load().model == detector_for_inference()
    assert PipelineConfig.load().model.parent == MODELS_DIR and MODELS_DIR.is_absolute()
    assert PipelineConfig().colour_model == COLOUR_WEIGHTS
    path = tmp_path / "pipeline.json"
    path.write_text(json.dumps({"model": "m/p.pt", "seat_colours": ["blue", "red"], "push_fps": 2,
                                "tracker": {"calm_frames": 5}, "board_model": None}))
    monkeypatch.setenv("COMPANION_PIPELINE_CONFIG", str(path))
    config = PipelineConfig.load()
    assert config.model == Path("m/p.pt") and config.seat_colours == ("blue", "red")
    assert config.push_fps == 2.0 and config.tracker.calm_frames == 5 and config.board_model is None
    path.write_text(json.dumps({"modle": "x"}))
    with pytest.raises(PipelineConfigError, match="unknown setting 'modle'"):
        PipelineConfig.load()
    path.write_text(json.dumps({"push_fps": "fast"}))
    with pytest.raises(PipelineConfigError, match="setting 'push_fps'"):
        PipelineConfig.load()


def test_the_demo_video_spec(tmp_path):
    try:
        path = demo_video_path()
    except FileNotFoundError:
        with pytest.raises(FileNotFoundError, match="demo video"):
            make_feed("demo-video", PipelineConfig(**FAST), MarkerDetector())
        pytest.skip("companion/data/demo/ is not rendered yet: only the missing-demo message is checked")
    feed = make_feed("demo-video", PipelineConfig(**FAST), lambda frame: [])
    assert feed.demo_record is not None and path.exists()
    hub = SessionHub(tmp_path)
    stop = threading.Event()
    threading.Timer(3.0, stop.set).start()
    feed.run(hub, stop)
    assert hub.session.header.game == "icebomb-arena"
    assert hub.frame()[0] is not None
    hub.close()
