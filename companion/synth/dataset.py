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
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from companion.synth.labels import sidecar, yolo_lines
from companion.synth.scenes import GAMES, sample_scene
from companion.vision.classes import DEFAULT_SCHEME, FLIP_INDEX, KEYPOINTS, ClassScheme, get_scheme

SPLITS = ("train", "val", "test")
SPLIT_FRACTIONS = (0.8, 0.1, 0.1)


@dataclass(frozen=True)
class Item:
    index: int
    game: str
    seed: int
    split: str

    @property
    def name(self) -> str:
        return f"{self.index:06d}-{self.game}"


def plan_item(dataset_seed: int, index: int, games: tuple[str, ...] = GAMES) -> Item:
    """Game (round robin), scene seed and split of item `index`; the same for the same inputs."""
    rng = np.random.default_rng([dataset_seed, index])
    scene_seed = int(rng.integers(0, 2**31 - 1))
    u = rng.random()
    split = SPLITS[int(np.searchsorted(np.cumsum(SPLIT_FRACTIONS), u, side="right"))] if u < 1 else SPLITS[-1]
    return Item(index, games[index % len(games)], scene_seed, split)


def render_item(renderer, game: str, seed: int, width: int = 640, height: int = 480):
    """(jpeg bytes, sidecar dict) of one scene."""
    from companion.synth.render import encode_jpeg

    scene = sample_scene(game, seed, width, height)
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
    jpeg, truth = render_item(renderer, item.game, item.seed, width, height)
    truth["item"] = {"index": item.index, "split": item.split, "name": item.name}
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


_worker_renderer = None
_worker_args: tuple = ()


def _init_worker(args: tuple) -> None:
    global _worker_renderer, _worker_args
    from companion.synth.render import Renderer

    _worker_renderer = Renderer()
    _worker_args = args


def _work(item: Item) -> tuple[int, int]:
    root, width, height, scheme_name = _worker_args
    return item.index, write_item(_worker_renderer, Path(root), item, width, height, get_scheme(scheme_name))


class Progress:
    """A one-line text progress bar on stderr (no dependency)."""

    def __init__(self, total: int, stream=None, enabled: bool = True):
        self.total, self.done, self.start = total, 0, time.monotonic()
        self.stream = stream or sys.stderr
        self.enabled = enabled

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
                          f"{rate:.2f} img/s, {eta:.0f}s left ")
        if self.done >= self.total:
            self.stream.write("\n")
        self.stream.flush()


def write_dataset(root: Path, count: int, seed: int = 0, games: tuple[str, ...] = GAMES, width: int = 640,
                  height: int = 480, workers: int | None = None, scheme: ClassScheme = DEFAULT_SCHEME,
                  progress: bool = True) -> dict:
    """Writes (or completes) a dataset of `count` items; returns a summary.

    Raises:
        ValueError: for an unknown game name or a count below one.
    """
    if count < 1:
        raise ValueError(f"dataset size {count} must be at least 1")
    for game in games:
        if game not in GAMES:
            raise ValueError(f"no scene sampler for game {game!r} (expected one of: {', '.join(GAMES)})")
    root = Path(root)
    root.mkdir(parents=True, exist_ok=True)
    (root / "data.yaml").write_text(dataset_yaml(root, scheme))
    items = [plan_item(seed, i, tuple(games)) for i in range(count)]
    pending = [it for it in items if not item_paths(root, it)["truth"].exists()]
    bar = Progress(len(pending), enabled=progress)
    workers = workers or os.cpu_count() or 1
    args = (str(root), width, height, scheme.name)
    objects = 0
    started = time.monotonic()
    if pending:
        if workers == 1:
            _init_worker(args)
            for it in pending:
                objects += _work(it)[1]
                bar.step()
        else:
            ctx = multiprocessing.get_context("spawn")  # a fresh GL context per worker
            with ctx.Pool(workers, initializer=_init_worker, initargs=(args,)) as pool:
                for _, n in pool.imap_unordered(_work, pending, chunksize=1):
                    objects += n
                    bar.step()
    elapsed = time.monotonic() - started
    splits = {s: sum(1 for it in items if it.split == s) for s in SPLITS}
    return {"root": str(root), "items": count, "rendered": len(pending), "skipped": count - len(pending),
            "labelled_objects": objects, "seconds": round(elapsed, 2), "splits": splits}
