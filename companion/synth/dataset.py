"""Writing a ready ultralytics dataset: parallel, resumable, split by seed, with a progress bar.

Layout under the dataset root:
    data.yaml                       the dataset description ultralytics reads
    images/<split>/<name>.jpg       rendered images (split: train, val, test)
    labels/<split>/<name>.txt       YOLO-pose labels (regenerable from the sidecars)
    truth/<split>/<name>.json       sidecars: the full truth of each image
An item is finished when its sidecar exists (written last, atomically), so an interrupted run
resumes where it stopped. Item i's game, seed and split depend only on (dataset seed, i).
"""

from __future__ import annotations

import json
import multiprocessing
import os
import sys
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass
from multiprocessing import connection
from pathlib import Path

import numpy as np

from companion.synth.labels import sidecar, yolo_lines
from companion.synth.scenes import GAMES, SCENE_KINDS, sample_scene
from companion.vision.classes import DEFAULT_SCHEME, FLIP_INDEX, KEYPOINTS, ClassScheme, get_scheme

SPLITS = ("train", "val", "test")
SPLIT_FRACTIONS = (0.8, 0.1, 0.1)


@dataclass(frozen=True)
class Item:
    index: int
    game: str
    seed: int
    split: str
    framing: str = "free"
    """How the camera frames a board (companion.synth.scenes.sample_scene)."""

    @property
    def name(self) -> str:
        return f"{self.index:06d}-{self.game}"


def plan_item(dataset_seed: int, index: int, games: tuple[str, ...] = GAMES, referee_share: float = 0.0) -> Item:
    """Game (round robin), scene seed, split and framing of item `index`; the same for the same
    inputs. `referee_share`: the share of items framed as a referee's camera (whole board in view)."""
    rng = np.random.default_rng([dataset_seed, index])
    scene_seed = int(rng.integers(0, 2**31 - 1))
    u = rng.random()
    split = SPLITS[int(np.searchsorted(np.cumsum(SPLIT_FRACTIONS), u, side="right"))] if u < 1 else SPLITS[-1]
    framing = "referee" if rng.random() < referee_share else "free"
    return Item(index, games[index % len(games)], scene_seed, split, framing)


def render_item(renderer, game: str, seed: int, width: int = 640, height: int = 480, framing: str = "free"):
    """(jpeg bytes, sidecar dict) of one scene (`framing`: see sample_scene)."""
    from companion.synth.render import encode_jpeg

    scene = sample_scene(game, seed, width, height, framing)
    rendered = renderer.render(scene)
    truth = sidecar(scene, rendered.ids)
    return encode_jpeg(rendered.image, scene.look.jpeg_quality), truth


def _atomic_write(path: Path, data: bytes) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(path.name + f".tmp{os.getpid()}")
    tmp.write_bytes(data)
    os.replace(tmp, path)


def item_paths(root: Path, item: Item) -> dict[str, Path]:
    return {"image": root / "images" / item.split / f"{item.name}.jpg",
            "label": root / "labels" / item.split / f"{item.name}.txt",
            "truth": root / "truth" / item.split / f"{item.name}.json"}


def write_item(renderer, root: Path, item: Item, width: int, height: int, scheme: ClassScheme) -> int:
    """Renders and writes one item; returns its number of labelled objects."""
    jpeg, truth = render_item(renderer, item.game, item.seed, width, height, item.framing)
    truth["item"] = {"index": item.index, "split": item.split, "name": item.name, "framing": item.framing}
    lines = yolo_lines(truth, scheme)
    paths = item_paths(root, item)
    _atomic_write(paths["image"], jpeg)
    _atomic_write(paths["label"], ("\n".join(lines) + ("\n" if lines else "")).encode())
    _atomic_write(paths["truth"], json.dumps(truth, separators=(",", ":")).encode())
    return len(lines)


def dataset_yaml(root: Path, scheme: ClassScheme) -> str:
    """The ultralytics dataset description (written by hand: no YAML library is needed)."""
    lines = [f"# Synthetic Icehouse table scenes; class scheme {scheme.name!r} (companion/vision/classes.py)",
             f"path: {Path(root).resolve()}", "train: images/train", "val: images/val", "test: images/test",
             f"kpt_shape: [{len(KEYPOINTS)}, 3]  # {', '.join(KEYPOINTS)}; x, y, visibility",
             f"flip_idx: [{', '.join(str(i) for i in FLIP_INDEX)}]", "names:"]
    lines += [f"  {i}: {name}" for i, name in enumerate(scheme.names)]
    return "\n".join(lines) + "\n"


ITEM_TIMEOUT_S = 60.0
FAILURE_LOG = "failures.jsonl"

_worker_renderer = None


def render_and_write(item: Item, root: str, width: int, height: int, scheme_name: str) -> int:
    """Writes one item with this process's renderer (made on first use); the workers' default job."""
    global _worker_renderer
    if _worker_renderer is None:
        from companion.synth.render import Renderer

        _worker_renderer = Renderer()
    return write_item(_worker_renderer, Path(root), item, width, height, get_scheme(scheme_name))


def _worker_main(conn, job: Callable, args: tuple) -> None:
    """A worker process: receives items, answers ("done", index, objects) or ("error", index, text)."""
    while True:
        try:
            item = conn.recv()
        except EOFError:
            return
        if item is None:
            return
        try:
            conn.send(("done", item.index, job(item, *args)))
        except Exception as exc:  # reported and logged by the parent; the run goes on
            conn.send(("error", item.index, f"{type(exc).__name__}: {exc}"))


class _Worker:
    """A spawned worker process (its own GL context) and the item it is working on."""

    def __init__(self, ctx, job: Callable, args: tuple):
        self.conn, child = ctx.Pipe()
        self.process = ctx.Process(target=_worker_main, args=(child, job, args), daemon=True)
        self.process.start()
        child.close()
        self.item: Item | None = None
        self.since = 0.0

    def give(self, item: Item) -> None:
        self.item, self.since = item, time.monotonic()
        self.conn.send(item)

    def stop(self, kill: bool = False) -> None:
        if kill:
            self.process.kill()
        else:
            try:
                self.conn.send(None)
            except OSError:
                pass
        self.process.join(5)
        if self.process.is_alive():
            self.process.kill()
            self.process.join()
        self.conn.close()


def _run_workers(pending: list[Item], workers: int, job: Callable, args: tuple, item_timeout: float | None,
                 on_done: Callable[[Item, int], None], on_failure: Callable[[Item, str], None],
                 stop_at: float | None = None) -> int:
    """Runs `job` on every pending item in `workers` spawned processes; returns how many were started.

    After `stop_at` (a `time.monotonic()` reading) no further item is begun; those begun are finished.

    An item running longer than `item_timeout` seconds is abandoned: its worker is killed (a GL
    call stuck in the driver cannot be interrupted any other way) and a fresh one takes its place.
    """
    ctx = multiprocessing.get_context("spawn")  # a fresh GL context per worker
    queue = deque(pending)
    pool = [_Worker(ctx, job, args) for _ in range(min(workers, len(pending)))]
    started = len(pool)
    try:
        while queue or any(w.item is not None for w in pool):
            if stop_at is not None and time.monotonic() > stop_at:
                queue.clear()
            for w in pool:
                if w.item is None and queue:
                    w.give(queue.popleft())
            busy = {w.conn: w for w in pool if w.item is not None}
            for conn in connection.wait(list(busy), timeout=0.5):
                w = busy[conn]
                item, w.item = w.item, None
                try:
                    status, _, value = conn.recv()
                except (EOFError, OSError):
                    w.process.join(5)  # the pipe closes a moment before the exit code is known
                    status, value = "died", f"worker process ended (exit code {w.process.exitcode})"
                if status == "done":
                    on_done(item, value)
                    continue
                on_failure(item, value)
                if status == "died":
                    pool[pool.index(w)] = _Worker(ctx, job, args)
                    started += 1
                    w.stop(kill=True)
            now = time.monotonic()
            for k, w in enumerate(pool):
                if w.item is not None and item_timeout is not None and now - w.since > item_timeout:
                    on_failure(w.item, f"abandoned after {item_timeout:g} s")
                    w.stop(kill=True)
                    pool[k] = _Worker(ctx, job, args)
                    started += 1
    finally:
        for w in pool:
            w.stop(kill=w.item is not None)
    return started


class Progress:
    """A one-line text progress bar on stderr (no dependency)."""

    def __init__(self, total: int, stream=None, enabled: bool = True):
        self.total, self.done, self.failed, self.start = total, 0, 0, time.monotonic()
        self.stream = stream or sys.stderr
        self.enabled = enabled

    def fail(self) -> None:
        """Counts an abandoned item (it counts towards the total done, and is shown apart)."""
        self.failed += 1
        self.step()

    def step(self, n: int = 1) -> None:
        self.done += n
        if not self.enabled:
            return
        elapsed = time.monotonic() - self.start
        rate = self.done / elapsed if elapsed > 0 else 0.0
        width = 30
        filled = int(width * self.done / max(1, self.total))
        eta = (self.total - self.done) / rate if rate > 0 else 0
        self.stream.write(f"\r[{'#' * filled}{'.' * (width - filled)}] {self.done}/{self.total} "
                          f"{rate:.2f} img/s, {eta:.0f}s left" + (f", {self.failed} failed " if self.failed else " "))
        if self.done >= self.total:
            self.stream.write("\n")
        self.stream.flush()


def write_dataset(root: Path, count: int, seed: int = 0, games: tuple[str, ...] = GAMES, width: int = 640,
                  height: int = 480, workers: int | None = None, scheme: ClassScheme = DEFAULT_SCHEME,
                  progress: bool = True, item_timeout: float | None = ITEM_TIMEOUT_S,
                  job: Callable[..., int] = render_and_write, referee_share: float = 0.0,
                  seconds: float | None = None, splits: tuple[str, ...] = SPLITS) -> dict:
    """Writes (or completes) a dataset of `count` items; returns a summary.

    Items are rendered in worker processes. One that takes longer than `item_timeout` seconds (or
    fails) is abandoned and logged, with its index and seed, to `failures.jsonl` in the dataset and
    to stderr; the run goes on, and a later run of the same command tries it again. With one
    worker and no time limit the items are rendered in this process. Given `seconds`, no item is
    begun after that long: the dataset holds what was done by then (`rendered`), and the same
    command resumes it later.

    Args:
        job: what a worker does with an item (`render_and_write`; tests inject slow ones). It must
            be a module-level function, since spawned workers import it.

    Raises:
        ValueError: for an unknown game name, a count below one or a time limit that is not positive.
    """
    if count < 1:
        raise ValueError(f"dataset size {count} must be at least 1")
    if not 0.0 <= referee_share <= 1.0:
        raise ValueError(f"referee share {referee_share!r} must be between 0 and 1")
    if item_timeout is not None and not item_timeout > 0:
        raise ValueError(f"item time limit {item_timeout!r} s must be positive")
    if seconds is not None and not seconds > 0:
        raise ValueError(f"time limit {seconds!r} s must be positive")
    unknown = sorted(set(splits) - set(SPLITS))
    if unknown or not splits:
        raise ValueError(f"unknown split {', '.join(unknown) or '(none given)'} (expected some of: {', '.join(SPLITS)})")
    for game in games:
        if game not in SCENE_KINDS:
            raise ValueError(f"no scene sampler for game {game!r} (expected one of: {', '.join(SCENE_KINDS)})")
    root = Path(root)
    root.mkdir(parents=True, exist_ok=True)
    (root / "data.yaml").write_text(dataset_yaml(root, scheme))
    items = [plan_item(seed, i, tuple(games), referee_share) for i in range(count)]
    pending = [it for it in items if it.split in splits and not item_paths(root, it)["truth"].exists()]
    bar = Progress(len(pending), enabled=progress)
    workers = workers or os.cpu_count() or 1
    args = (str(root), width, height, scheme.name)
    objects = 0
    rendered = 0
    failures: list[dict] = []
    processes = 0
    started = time.monotonic()

    def done(item: Item, n: int) -> None:
        nonlocal objects, rendered
        objects += n
        rendered += 1
        bar.step()

    def failed(item: Item, reason: str) -> None:
        record = {"index": item.index, "game": item.game, "seed": item.seed, "split": item.split,
                  "reason": reason, "dataset_seed": seed}
        failures.append(record)
        with open(root / FAILURE_LOG, "a") as log:
            log.write(json.dumps(record) + "\n")
        bar.fail()
        print(f"\nsynth dataset: item {item.index} ({item.game}, seed {item.seed}) failed: {reason}",
              file=sys.stderr)

    if pending:
        stop_at = None if seconds is None else started + seconds
        if workers == 1 and item_timeout is None:
            for it in pending:
                if stop_at is not None and time.monotonic() > stop_at:
                    break
                try:
                    done(it, job(it, *args))
                except Exception as exc:
                    failed(it, f"{type(exc).__name__}: {exc}")
        else:
            processes = _run_workers(pending, workers, job, args, item_timeout, done, failed, stop_at)
    elapsed = time.monotonic() - started
    split_sizes = {s: sum(1 for it in items if it.split == s) for s in SPLITS}
    return {"root": str(root), "items": count, "rendered": rendered,
            "skipped": sum(it.split in splits for it in items) - len(pending), "left": len(pending) - rendered - len(failures),
            "failed": failures, "worker_processes": processes,
            "labelled_objects": objects, "seconds": round(elapsed, 2), "splits": split_sizes}
