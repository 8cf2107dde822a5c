#!/usr/bin/env python3
"""The camera pipeline end to end: frames/s and ms per stage at 1280x720, stable-frame-to-browser
latency, peak memory, and start-up time to a served page.

    python scripts/bench_pipeline.py [--frames demo|drawn] [--events 12] [--model WEIGHTS]
                                     [--no-serve] [--json OUT]

Frames: the bundled demo video (companion/data/demo/) when it exists and a detector model is
there to read it; otherwise a drawn Icebomb Arena table (companion.sources.DrawnTable: the sample
record's first events, hands passing between moves) read by the marker stand-in detector. The
figure names which was used: with the stand-in, the detector's own cost is bench_detector.py's.

1. Throughput: every frame processed (lossless), all stages on: lock check, motion gate, detector
   (calm frames only), mapper, tracker, referee, annotation, JPEG, push to the hub.
2. Latency: `companion serve`'s app served in-process on loopback with the feed running in real
   time (15 frames/s); an SSE client reads /events; for each move, the time from the frame that
   completed the stable position to the browser's event carrying the move.
3. Peak resident memory of this process (ru_maxrss) after both (the demo's frames are held as their
   JPEG files' bytes and decoded as the feed reads them, as a camera's stream is).
4. Start-up: `companion serve` started as a subprocess, timed until GET / answers 200.
"""

from __future__ import annotations

import argparse
import http.client
import json
import os
import resource
import socket
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path


ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from companion.models import detector_for_inference  # noqa: E402
from companion.records import actions_differing, agreeing_prefix  # noqa: E402
from companion.pipeline import CameraFeed, PipelineConfig  # noqa: E402
from companion.session import SessionHub, SourceRunner  # noqa: E402
from companion.sources import (DrawnTable, Frame, MarkerDetector, decode_image, demo_video_path,  # noqa: E402
                               open_source)

SAMPLE = ROOT / "companion" / "data" / "samples" / "icebomb-arena-4p.jsonl"


class ListSource:
    """Frames from a list: pictures, or JPEG files' bytes decoded as they are read (as a camera's
    MJPEG stream is), so that the benchmark's own buffer does not swell the memory it measures."""

    def __init__(self, frames, fps=30.0):
        self.frames, self.fps, self.live, self.description = frames, fps, False, "bench frames"
        self.i = 0

    def open(self):
        self.i = 0

    def read(self):
        if self.i >= len(self.frames):
            return None
        self.i += 1
        frame = self.frames[self.i - 1]
        image, problem = decode_image(frame, f"#{self.i - 1}") if isinstance(frame, bytes) else (frame, None)
        return Frame(image, self.i - 1, time.monotonic(), f"#{self.i - 1}", problem)

    def close(self):
        pass


def drawn_frames(events: int, start: int) -> tuple[list, list[str]]:
    """The sample game after `start` events, then `events` more: 6 calm + 3 hand frames each."""
    from companion.records import read_record

    header, record = read_record(SAMPLE)
    texts = [e.action for e in record]
    state = header.initial_state()
    for t in texts[:start]:
        state = state.apply(t)
    table = DrawnTable(1280, 720)
    frames = [table.draw_state(state, noise=2.0, seed=0) for _ in range(6)]
    for k, text in enumerate(texts[start:start + events]):
        state = state.apply(text)
        for h in range(3):
            frames.append(table.draw_state(state, hand_at=(450 + 50 * h, 420 - 40 * h), noise=2.0, seed=k * 10 + h))
        frames += [table.draw_state(state, noise=2.0, seed=k * 10 + 5 + c) for c in range(6)]
    return frames, texts[:start]


def demo_frames(limit: int) -> list:
    """The demo's frames as its JPEG files' bytes (a still table's file is listed for each frame
    that shows it, and read once); decoded pictures when the demo is a video file."""
    source = open_source("demo-video")
    source.open()
    frames = []
    if hasattr(source, "paths"):
        files: dict[Path, bytes] = {}
        for path in source.paths[:limit]:
            if path not in files:
                files[path] = path.read_bytes()
            frames.append(files[path])
    else:
        while len(frames) < limit and (f := source.read()) is not None:
            if f.image is not None:
                frames.append(f.image)
    source.close()
    return frames


def hub_with(data_dir: str, prefix: list[str]) -> SessionHub:
    hub = SessionHub(data_dir)
    lines = SAMPLE.read_text().splitlines()
    hub.import_record(lines[:1 + len(prefix)])
    return hub


def throughput(frames, prefix, detect, config, demo_record=None) -> dict:
    hub = hub_with(tempfile.mkdtemp(prefix="bench-pipeline-"), prefix)
    # The demo video plays the sample record: its secret bids are entered as the players would on
    # the page (the feed takes them from the record), the rest is the camera's to read.
    feed = CameraFeed("bench", config, detect, lambda: ListSource(frames), demo_record)
    stop = threading.Event()
    t0 = time.perf_counter()
    feed.run(hub, stop)
    elapsed = time.perf_counter() - t0
    log = hub.session.snapshot().log
    moves = [i.text for i in log if i.source == "camera"]
    hub.close()
    right = {}
    if demo_record is not None:
        # The record is what was played: the game's moves so far must be its first ones, in order.
        played = [a for line in Path(demo_record).read_text().splitlines()[1:] if (a := json.loads(line).get("action"))]
        agree = agreeing_prefix([i.text for i in log], played, together=lambda a: " plan " in a)
        differing = actions_differing([i.text for i in log], played, together=lambda a: " plan " in a)
        right = {"log_actions": len(log), "log_actions_by_demo_players": sum(1 for i in log if i.source == "demo"),
                 "record_moves_in_order": sum(1 for i in log[:agree] if i.source == "camera"),
                 "camera_moves_off_record": len(moves) - sum(1 for i in log[:agree] if i.source == "camera"),
                 "camera_moves_differing": [log[k].text for k in differing if log[k].source == "camera"],
                 # What the camera read where the demo's players corrected it on the page (their own move).
                 "camera_moves_corrected": [i.corrected_from for i in log if i.source == "demo" and i.corrected_from],
                 "record_moves": len(played)}
    return {"frames": len(frames), "seconds": round(elapsed, 3), "frames_per_s": round(len(frames) / elapsed, 1),
            "moves_recognised": len(moves), "verdicts": feed.stats.counts.get("verdicts", 0),
            "verdicts_illegal": feed.stats.counts.get("verdicts_illegal", 0),
            "verdicts_misread": feed.stats.counts.get("verdicts_misread", 0), **right,
            **feed.stats.summary()}


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def latency(frames, prefix, detect, config, demo_record=None) -> dict:
    """Stable frame -> SSE event in a browser-like client, with the server in this process."""
    from werkzeug.serving import make_server

    from companion.server import create_app

    data_dir = tempfile.mkdtemp(prefix="bench-latency-")
    hub = hub_with(data_dir, prefix)
    feed = CameraFeed("bench", config, detect, lambda: ListSource(frames, fps=15.0), demo_record)
    stable_times: dict[int, float] = {}

    def on_stable(_observation, at):
        stable_times[len(hub.session.snapshot().log)] = at

    feed.on_stable = on_stable
    app = create_app({"HUB": hub, "DATA_DIR": data_dir, "SSE_HEARTBEAT": 1.0, "SSE_MAX_SECONDS": 600})
    port = free_port()
    server = make_server("127.0.0.1", port, app, threaded=True)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    received: dict[int, float] = {}
    done = threading.Event()

    def client():
        conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
        conn.request("GET", "/events")
        response = conn.getresponse()
        while not done.is_set():
            chunk = response.fp.readline()
            if not chunk:
                break
            if chunk.startswith(b"data: "):
                view = json.loads(chunk[6:])
                count = view.get("log_count")
                if count is not None and count not in received:
                    received[count] = time.perf_counter()
        conn.close()

    reader = threading.Thread(target=client, daemon=True)
    reader.start()
    time.sleep(0.3)
    runner = SourceRunner(hub, feed).start()
    deadline = time.monotonic() + len(frames) / 15.0 + 20
    while "ended" not in hub.faults().get("source", "") and time.monotonic() < deadline:
        time.sleep(0.05)
    time.sleep(0.5)
    done.set()
    runner.stop()
    server.shutdown()
    hub.close()
    gaps = sorted(1000 * (received[n] - t) for n, t in stable_times.items() if n in received and n > len(prefix))
    if not gaps:
        return {"moves": 0}
    return {"moves": len(gaps), "median_ms": round(gaps[len(gaps) // 2], 1), "max_ms": round(gaps[-1], 1),
            "frames_dropped_note": "real-time: frames the pipeline cannot keep up with are dropped"}


def startup(timeout: float = 30.0) -> dict:
    """`companion serve` as a user starts it (default demo feed), until its page answers."""
    port = free_port()
    data_dir = tempfile.mkdtemp(prefix="bench-startup-")
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    t0 = time.perf_counter()
    proc = subprocess.Popen([sys.executable, "-m", "companion.cli", "serve", "--port", str(port),
                             "--data-dir", data_dir], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env)
    try:
        while time.perf_counter() - t0 < timeout:
            try:
                conn = http.client.HTTPConnection("127.0.0.1", port, timeout=1)
                conn.request("GET", "/")
                if conn.getresponse().status == 200:
                    return {"seconds_to_page": round(time.perf_counter() - t0, 2)}
            except OSError:
                time.sleep(0.05)
        return {"seconds_to_page": None, "error": f"no page within {timeout} s"}
    finally:
        proc.terminate()
        try:
            proc.wait(10)
        except subprocess.TimeoutExpired:
            proc.kill()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--frames", choices=("auto", "demo", "drawn"), default="auto")
    parser.add_argument("--events", type=int, default=12, help="moves in the drawn sequence")
    parser.add_argument("--model", type=Path, default=detector_for_inference(),
                        help="detector weights (default: what the companion runs, the exported copy when it exists)")
    parser.add_argument("--no-size-model", action="store_true",
                        help="keep the detector's sizes: no size classifier (companion/vision/size_reader.py)")
    parser.add_argument("--no-serve", action="store_true", help="skip the latency and start-up parts")
    parser.add_argument("--json", type=Path)
    args = parser.parse_args()
    start = 4  # after the bids: bombs are placed, then gladiators enter (both seen on the table)
    use_demo = args.frames == "demo" or (args.frames == "auto" and args.model.exists())
    if use_demo:
        try:
            demo_video_path()
        except FileNotFoundError:
            use_demo = False
    sizes = {"size_model": None} if args.no_size_model else {}
    config = PipelineConfig(realtime=False, model=args.model, **sizes)
    if use_demo:
        from companion.pipeline import load_detector

        frames, prefix = demo_frames(2000), []
        detect, _ = load_detector(config)
        kind, detector_name = "demo video", os.path.relpath(args.model)
    else:
        frames, prefix = drawn_frames(args.events, start)
        detect, kind, detector_name = MarkerDetector(), "drawn table", "marker stand-in (no model)"
    first = decode_image(frames[0], "first frame")[0] if isinstance(frames[0], bytes) else frames[0]
    result = {"frames_from": kind, "detector": detector_name, "size": f"{first.shape[1]}x{first.shape[0]}",
              "cpu_count": os.cpu_count(), "load_average": [round(v, 2) for v in os.getloadavg()]}
    demo_record = SAMPLE if use_demo else None
    result["throughput"] = throughput(frames, prefix, detect, config, demo_record)
    if not args.no_serve:
        result["latency"] = latency(frames, prefix, detect, PipelineConfig(realtime=True, model=args.model, **sizes), demo_record)
    result["peak_rss_mb"] = round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1)
    if not args.no_serve:
        result["startup"] = startup()
    t = result["throughput"]
    print(f"{kind} {result['size']}, detector: {detector_name}; load average {result['load_average']}")
    print(f"end to end: {t['frames_per_s']} frames/s over {t['frames']} frames "
          f"({t['moves_recognised']} moves recognised, {t['verdicts']} verdicts: {t['verdicts_illegal']} illegal, "
          f"{t['verdicts_misread']} misread)")
    if "record_moves_in_order" in t:
        print(f"the record's moves read right, in order from the start: {t['record_moves_in_order']} by the camera "
              f"(of {t['record_moves']} in the record, secret bids entered from it); "
              f"camera moves after the first wrong one: {t['camera_moves_off_record']}")
        print(f"the game's log: {t['log_actions']} actions, {t['log_actions_by_demo_players']} of them entered by the "
              f"demo's players (secret bids, verdicts' fixes clicked, moves typed in, camera moves corrected)")
        print(f"camera moves the demo's players corrected (what the camera read): "
              f"{len(t['camera_moves_corrected'])} {t['camera_moves_corrected']}")
        print(f"camera moves that differ from the record's in the same place (plans as sets): "
              f"{len(t['camera_moves_differing'])} {t['camera_moves_differing']}")
    for stage, s in t["stages"].items():
        print(f"  {stage:10} mean {s['mean_ms']:8.2f} ms  p95 {s['p95_ms']:8.2f} ms  (n={s['n']})")
    print(f"  counts: {t['counts']}")
    if "latency" in result:
        print(f"stable frame -> browser: {result['latency']}")
        print(f"start-up to a served page: {result['startup']}")
    print(f"peak RSS: {result['peak_rss_mb']} MB")
    if args.json:
        args.json.write_text(json.dumps(result, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
