"""Load: 50 viewers on loopback follow a game, each sees a new move within the latency goal.

A benchmark as well as a test: run with `-s` to print the figures (docs/guide.md quotes them).
"""

from __future__ import annotations

import json
import statistics
import threading
import time
import urllib.request

from werkzeug.serving import make_server

from companion.records import RecordHeader
from companion.server import create_app
from companion.session import SessionHub
from tests.web.livehelpers import free_port

VIEWERS = 50
MOVES = 4
GOAL_S = 0.250


def test_fifty_viewers_see_each_move_within_250_ms(tmp_path):
    hub = SessionHub(tmp_path)
    hub.new_game(RecordHeader("icebomb-arena", ("Ann", "Bob", "Cy", "Dee"), seed=2))
    app = create_app({"HUB": hub, "SSE_MAX_SECONDS": 30, "SSE_HEARTBEAT": 5})
    port = free_port()
    server = make_server("127.0.0.1", port, app, threaded=True)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    moves = ["P1 bid -", "P2 bid SS", "P3 bid MS", "P4 bid SS"][:MOVES]
    sent: dict[int, float] = {}
    latencies: list[float] = []
    lock = threading.Lock()
    ready = threading.Barrier(VIEWERS + 1)

    def viewer() -> None:
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/events", timeout=20) as stream:
            seen = 0
            first = True
            for raw in stream:  # bounded: stops after the last move's update
                line = raw.decode()
                if not line.startswith("data: "):
                    continue
                if first:
                    first = False
                    ready.wait(10)
                    continue
                count = json.loads(line[6:])["log_count"]
                if count > seen:
                    seen = count
                    with lock:
                        latencies.append(time.perf_counter() - sent[count])
                if seen >= len(moves):
                    return

    threads = [threading.Thread(target=viewer, daemon=True) for _ in range(VIEWERS)]
    for t in threads:
        t.start()
    ready.wait(20)
    try:
        for i, move in enumerate(moves, start=1):
            sent[i] = time.perf_counter()
            hub.session.apply(move)
            time.sleep(0.4)
        for t in threads:
            t.join(15)
    finally:
        server.shutdown()
        hub.close()
    assert len(latencies) >= VIEWERS * len(moves) * 0.95, len(latencies)
    latencies.sort()
    p95 = latencies[int(len(latencies) * 0.95) - 1]
    print(f"\n{VIEWERS} viewers, {len(moves)} moves: median {statistics.median(latencies) * 1000:.0f} ms, "
          f"p95 {p95 * 1000:.0f} ms, max {latencies[-1] * 1000:.0f} ms")
    assert p95 <= GOAL_S
