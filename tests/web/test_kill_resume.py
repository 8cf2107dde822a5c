"""A real `companion serve` killed with SIGKILL mid-game resumes with the identical game."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys

from tests.web.livehelpers import LiveClient, free_port


def serve(data_dir, port, *extra):
    cmd = [sys.executable, "-m", "companion.cli", "serve", "--port", str(port), "--data-dir", str(data_dir), *extra]
    return subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


def test_sigkill_mid_game_then_resume_restores_the_game_exactly(tmp_path):
    port = free_port()
    proc = serve(tmp_path, port, "--game", "icebomb-arena", "--players", "Ann,Bob,Cy,Dee", "--source", "manual")
    try:
        client = LiveClient(f"http://127.0.0.1:{port}")
        client.wait_up()
        for _ in range(14):  # bids (secret), bombs, entries...
            view = client.get("/api/state")
            c = view["controls"]
            if c["kind"] == "chance":
                status, _ = client.post("/api/roll", {})
            else:
                action = c["actions"][-1] if c["kind"] == "seat" else sorted(c["per_seat"].items())[0][1][-1]
                status, _ = client.post("/api/action", {"action": action})
            assert status == 200
        seq = client.get("/api/state")["last_seq"]
        sealed_before = [line for line in client.get("/api/state")["html"]["log"].splitlines() if "sealed" in line]
        record_before = client.get("/api/export")
        state_before = client.get("/api/state")
    finally:
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait(10)
    port2 = free_port()
    proc = serve(tmp_path, port2, "--resume")
    try:
        client = LiveClient(f"http://127.0.0.1:{port2}")
        client.wait_up()
        after = client.get("/api/state")
        assert client.get("/api/export") == record_before
        assert after["summary"] == state_before["summary"]
        assert after["last_seq"] == seq and after["log_count"] == 14
        assert [line for line in after["html"]["log"].splitlines() if "sealed" in line] == sealed_before
        lines = record_before.splitlines()
        assert json.loads(lines[0])["players"] == ["Ann", "Bob", "Cy", "Dee"] and len(lines) == 15
    finally:
        proc.send_signal(signal.SIGTERM)
        proc.wait(10)
