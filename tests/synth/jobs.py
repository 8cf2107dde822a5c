"""Stand-in dataset jobs for the watchdog tests (module level, so spawned workers can import them;
kept free of heavy imports so that a worker starts fast)."""

from __future__ import annotations

import os
import time
from pathlib import Path

# Which item index misbehaves, and how.
SLOW_INDEX = 1
CRASH_INDEX = 2
RAISE_INDEX = 3


def _write_truth(item, root: str) -> int:
    from companion.synth.dataset import item_paths

    path = item_paths(Path(root), item)["truth"]
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(f'{{"pid": {os.getpid()}}}')
    return 1


def slow_job(item, root: str, width: int, height: int, scheme: str) -> int:
    """Hangs on item SLOW_INDEX as a stuck GL call would (sleeping is not interruptible either)."""
    if item.index == SLOW_INDEX:
        time.sleep(3600)
    return _write_truth(item, root)


def faulty_job(item, root: str, width: int, height: int, scheme: str) -> int:
    """Kills its own process on CRASH_INDEX and raises on RAISE_INDEX."""
    if item.index == CRASH_INDEX:
        os._exit(3)
    if item.index == RAISE_INDEX:
        raise RuntimeError("no scene today")
    return _write_truth(item, root)


def steady_job(item, root: str, width: int, height: int, scheme: str) -> int:
    """Takes a second per item, as a slow renderer would."""
    time.sleep(1.0)
    return _write_truth(item, root)


def quick_job(item, root: str, width: int, height: int, scheme: str) -> int:
    """Writes the item's sidecar at once, as a render that went well would."""
    return _write_truth(item, root)
