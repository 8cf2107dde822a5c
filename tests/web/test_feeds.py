"""Feeds and faults: the demo replay, a camera that drops out and comes back, a feed that ends,
a missing camera pipeline or model (manual mode), and a full disk, each with a clear message."""

from __future__ import annotations

import sys
import threading
import time
import types
from pathlib import Path

from companion.records import RecordHeader
from companion.session import CameraSource, DemoReplaySource, SessionHub, SourceError, SourceRunner

SAMPLE = Path(__file__).resolve().parents[2] / "companion" / "data" / "samples" / "icebomb-arena-4p.jsonl"


def wait_until(predicate, limit=10.0):
    deadline = time.monotonic() + limit
    while time.monotonic() < deadline:
        if predicate():
            return True
        time.sleep(0.01)
    return False


def test_demo_replays_the_whole_sample_game_with_one_misread_fixed(tmp_path):
    hub = SessionHub(tmp_path)
    runner = SourceRunner(hub, DemoReplaySource(SAMPLE, interval=0.002, loop=False, misread_at=10)).start()
    try:
        assert wait_until(lambda: "ended" in hub.faults().get("source", ""), 60)
    finally:
        runner.stop()
    snap = hub.session.snapshot()
    assert snap.state.is_terminal() and len(snap.actions) == 188
    assert snap.verdicts == ()  # the misread was confirmed by the demo itself
    kinds = [e.kind for e in hub.session._journal.entries()]
    assert kinds.count("verdict") == 1 and kinds.count("resolve") == 1
    hub.close()


def test_demo_resumes_where_the_journal_stopped(tmp_path):
    hub = SessionHub(tmp_path)
    header_lines = SAMPLE.read_text().splitlines()
    hub.import_record(header_lines[:11])  # the first ten events
    first = hub.session.game_id
    runner = SourceRunner(hub, DemoReplaySource(SAMPLE, interval=0.002, loop=False, misread_at=None)).start()
    try:
        assert wait_until(lambda: hub.session.snapshot().state.is_terminal(), 60)
    finally:
        runner.stop()
    assert hub.session.game_id == first
    hub.close()


def test_demo_steps_aside_when_a_new_game_is_set_up(tmp_path):
    hub = SessionHub(tmp_path)
    runner = SourceRunner(hub, DemoReplaySource(SAMPLE, interval=0.01, loop=False, misread_at=None)).start()
    assert wait_until(lambda: hub.session is not None and len(hub.session.snapshot().actions) > 2)
    hub.new_game(RecordHeader("icetowers", ("a", "b")))
    time.sleep(0.1)
    assert hub.session.snapshot().actions == ()
    runner.stop()
    hub.close()


class FlakyCamera:
    """Fails (unplugged) twice, then delivers frames (re-plugged) until stopped."""

    description = "webcam:0"

    def __init__(self):
        self.calls = 0

    def run(self, hub, stop):
        self.calls += 1
        if self.calls <= 2:
            raise SourceError("camera unplugged (no frames for 2 s)")
        hub.clear_fault("source")
        while not stop.wait(0.01):
            hub.push_frame(b"\xff\xd8frame\xff\xd9")


def test_camera_unplugged_and_replugged_reconnects_with_back_off(tmp_path):
    hub = SessionHub(tmp_path)
    camera = FlakyCamera()
    seen = []
    runner = SourceRunner(hub, camera, first_delay=0.05, max_delay=1.0)
    watcher = threading.Thread(target=lambda: [seen.append(hub.faults().get("source")) or time.sleep(0.005)
                                               for _ in range(100)])
    watcher.start()
    runner.start()
    assert wait_until(lambda: hub.frame()[0] is not None)
    watcher.join()
    runner.stop()
    assert camera.calls == 3
    messages = [m for m in seen if m]
    assert any("unplugged" in m and "retrying in 0.1 s" in m for m in messages)  # the delay doubled
    assert "source" not in hub.faults()  # recovered: the message is gone


def test_a_video_that_ends_says_so_and_leaves_manual_mode(tmp_path):
    class ShortVideo:
        description = "video table.mp4"

        def run(self, hub, stop):
            hub.push_frame(b"\xff\xd8x\xff\xd9")

    hub = SessionHub(tmp_path)
    hub.new_game(RecordHeader("icetowers", ("a", "b")))
    runner = SourceRunner(hub, ShortVideo()).start()
    assert wait_until(lambda: "ended" in hub.faults().get("source", ""))
    runner.stop()
    assert "manual mode" in hub.faults()["source"]
    notes = [e.detail["message"] for e in hub.session._journal.entries() if e.kind == "note"]
    assert any("ended" in n for n in notes)  # the fault is in the journal, not only on screen
    hub.session.apply("P1 done")  # the game goes on by hand
    hub.close()


def test_a_crashing_feed_is_reported_not_fatal(tmp_path):
    class Buggy:
        description = "buggy feed"

        def run(self, hub, stop):
            raise RuntimeError("boom")

    hub = SessionHub(tmp_path)
    runner = SourceRunner(hub, Buggy()).start()
    assert wait_until(lambda: "boom" in hub.faults().get("source", ""))
    runner.stop()


def test_without_the_camera_pipeline_the_page_falls_back_to_manual_mode(tmp_path, monkeypatch):
    monkeypatch.setitem(sys.modules, "companion.pipeline", None)  # import fails
    hub = SessionHub(tmp_path)
    runner = SourceRunner(hub, CameraSource("webcam:0")).start()
    assert wait_until(lambda: "manual mode" in hub.faults().get("source", ""))
    runner.stop()


def test_a_missing_model_file_is_named_and_manual_mode_goes_on(tmp_path, monkeypatch):
    fake = types.ModuleType("companion.pipeline")

    def make_feed(spec):
        raise FileNotFoundError(f"model file models/detector.onnx is missing (needed by {spec})")

    fake.make_feed = make_feed
    monkeypatch.setitem(sys.modules, "companion.pipeline", fake)
    hub = SessionHub(tmp_path)
    runner = SourceRunner(hub, CameraSource("webcam:0")).start()
    assert wait_until(lambda: "detector.onnx" in hub.faults().get("source", ""))
    assert "manual mode" in hub.faults()["source"]
    runner.stop()


def test_full_disk_is_shown_on_the_page_and_the_game_is_kept(tmp_path):
    from companion.server import create_app
    from tests.web.conftest import post

    hub = SessionHub(tmp_path)
    hub.new_game(RecordHeader("icebomb-arena", ("a", "b")))
    app = create_app({"TESTING": True, "HUB": hub})
    client = app.test_client()
    db = hub.session._journal._db
    db.execute(f"PRAGMA max_page_count = {db.execute('PRAGMA page_count').fetchone()[0]}")
    for _ in range(2000):
        try:
            hub.session._journal.append("note", source="")
        except ValueError:
            break
    r = post(client, "/api/action", {"action": "P1 bid -"})
    assert r.status_code == 507 and "full" in r.get_json()["error"]
    assert "full" in client.get("/").get_data(as_text=True)
    assert hub.session.snapshot().actions == ()
    db.execute("PRAGMA max_page_count = 1073741823")
    assert post(client, "/api/action", {"action": "P1 bid -"}).status_code == 200
    hub.close()
