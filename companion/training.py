"""Training the piece detector: an ultralytics YOLO pose model from scratch, offline, on the CPU.

One detection per object with two keypoints (apex, contact); the class scheme is the dataset's
(`companion/vision/classes.py`). Runs go under runs/ (git-ignored); `scripts/train_detector.py`
is the command, and `models/` receives the chosen weights.
"""

from __future__ import annotations

import argparse
import os
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from companion.vision.yolo_env import import_ultralytics


@dataclass
class TrainConfig:
    data: Path
    model: str = "yolo11n-pose.yaml"  # an architecture (from scratch) or a .pt to continue from
    imgsz: int = 416
    epochs: int = 30
    hours: float | None = None  # a time budget: ultralytics then fits the epochs (and LR schedule) to it
    batch: int = 16
    name: str = "pieces"
    project: Path = Path("runs/detector")
    threads: int = 2
    # "cpu", or a CUDA device ("0") on the lent GPU machine (scripts/device-train); the CPU loads
    # batches in the training process itself, a GPU needs loader processes to keep it busy.
    device: str = "cpu"
    workers: int = 0
    resume: bool = False
    patience: int = 50
    seed: int = 0
    # Continuing from trained weights, ultralytics' default warm-up (3 epochs, bias LR starting at 0.1)
    # and its automatic AdamW rate knocked validation mAP50 back 1-2.5 points in the first two epochs of
    # sessions 5-7 (runs/detector/pieces-s*/results.csv). None keeps ultralytics' defaults.
    lr0: float | None = None  # given, the optimiser is AdamW at this rate instead of "auto"
    warmup_epochs: float | None = None
    # Colour is part of the class: hue jitter would teach red and orange to swap, so keep it tiny.
    augment: dict[str, Any] = field(default_factory=lambda: {
        "hsv_h": 0.004, "hsv_s": 0.5, "hsv_v": 0.45, "degrees": 0.0, "translate": 0.1, "scale": 0.4,
        "fliplr": 0.5, "mosaic": 1.0, "close_mosaic": 5})


# The board model (companion/vision/board_keypoints.py): its keypoints are ordered by where they lie in
# the picture, which a mirror or a turn would reorder, and a mosaic would cut most boards into pieces
# no frame shows; so no flips, turns or mosaics, and colour jitter is harmless (a board is not told by hue).
BOARD_AUGMENT: dict[str, Any] = {"hsv_h": 0.015, "hsv_s": 0.5, "hsv_v": 0.45, "degrees": 0.0, "translate": 0.1,
                                 "scale": 0.3, "fliplr": 0.0, "mosaic": 0.0, "close_mosaic": 0}


def train(config: TrainConfig) -> Path:
    """Trains (or resumes) and returns the path of the best weights."""
    os.environ.setdefault("YOLO_VERBOSE", "true")  # show per-epoch progress while training
    ultralytics = import_ultralytics()
    import torch

    run_dir = config.project.resolve() / config.name
    last = run_dir / "weights" / "last.pt"
    if config.resume and last.exists():
        model = ultralytics.YOLO(str(last))
    else:
        model = ultralytics.YOLO(config.model)

    def use_all_threads(trainer) -> None:
        # Ultralytics leaves one core idle on CPU; on a 2-core laptop that halves the speed.
        torch.set_num_threads(config.threads)

    model.add_callback("on_train_start", use_all_threads)
    if config.resume and last.exists():
        model.train(resume=True)
    else:
        model.train(data=str(config.data), imgsz=config.imgsz, epochs=config.epochs, batch=config.batch,
                    device=config.device, workers=config.workers, plots=False,
                    # No mixed precision: its check downloads a model (and a nano model gains little).
                    amp=False, project=str(config.project.resolve()),
                    name=config.name, exist_ok=True, patience=config.patience, seed=config.seed,
                    deterministic=False, verbose=True, **({"time": config.hours} if config.hours else {}),
                    **_schedule(config), **config.augment)
    best = run_dir / "weights" / "best.pt"
    return best if best.exists() else last


def _schedule(config: TrainConfig) -> dict[str, Any]:
    schedule: dict[str, Any] = {}
    if config.lr0 is not None:
        # Ultralytics' automatic choice warms the biases up from 0, but a named optimiser from 0.1,
        # which on weights already trained throws the biases far off: session 8's deep restart dip.
        schedule.update(optimizer="AdamW", lr0=config.lr0, warmup_bias_lr=0.0)
    if config.warmup_epochs is not None:
        schedule["warmup_epochs"] = config.warmup_epochs
    return schedule


def describe(config: TrainConfig) -> dict[str, Any]:
    out = asdict(config)
    out["data"], out["project"] = str(config.data), str(config.project)
    return out


def train_colour_classifier(data: Path, epochs: int = 15, imgsz: int = 64, batch: int = 128,
                            name: str = "colours", project: Path = Path("runs/colour"), threads: int = 2,
                            model: str = "yolo11n-cls.yaml", hours: float | None = None) -> Path:
    """Trains the crop colour classifier (companion/vision/colour.py); returns the best weights.

    `data` is a folder of train/val/<colour>/*.jpg crops (scripts/make_colour_crops.py); `model`
    an architecture (from scratch) or weights to continue from; `hours` a time budget.
    """
    # No RandAugment (its solarize and colour ops relabel colours); only mild light changes,
    # and almost no hue shift, since hue is what we are teaching.
    return _train_classifier(data, model, project / name, threads, hours, epochs=epochs, imgsz=imgsz, batch=batch,
                             hsv_h=0.004, hsv_s=0.35, hsv_v=0.4)


def train_size_classifier(data: Path, epochs: int = 6, batch: int = 128, name: str = "sizes",
                          project: Path = Path("runs/size"), threads: int = 2, model: str = "yolo11n-cls.yaml",
                          hours: float | None = None, lr0: float | None = None) -> Path:
    """Trains the size classifier (companion/vision/size_reader.py) on crops at the board's scale
    (scripts/make_size_crops.py: train/val/{S,M,L}/*.jpg); returns the best weights.

    A crop's scale is what it teaches, so the random resized crop every classifier trains with is
    held at the whole crop (`scale=0`); colours and light may change freely. `lr0` continues trained
    weights gently: AdamW at that rate without a warm-up (ultralytics' automatic choice ignores lr0
    and warms up from scratch for three epochs).
    """
    from companion.vision.size_reader import CROP_PX

    gentle = {"optimizer": "AdamW", "lr0": lr0, "warmup_epochs": 0} if lr0 else {}
    return _train_classifier(data, model, project / name, threads, hours, epochs=epochs, imgsz=CROP_PX, batch=batch,
                             scale=0.0, hsv_h=0.015, hsv_s=0.5, hsv_v=0.4, **gentle)


def train_dice_classifier(data: Path, epochs: int = 10, batch: int = 128, name: str = "dice",
                          project: Path = Path("runs/dice"), threads: int = 2, model: str = "yolo11n-cls.yaml",
                          hours: float | None = None) -> Path:
    """Trains the dice face classifier (companion/vision/dice.py) on top-face patches
    (scripts/make_die_crops.py: train/val/<d6|d8>-<value>/*.png); returns the best weights.

    A mirrored number is no number, so no mirroring; the patch's scale is the die's, so the random
    resized crop is held at the whole patch (`scale=0`); the patches come already turned at random.
    """
    from companion.vision.dice import FACE_PX

    return _train_classifier(data, model, project / name, threads, hours, epochs=epochs, imgsz=FACE_PX, batch=batch,
                             fliplr=0.0, scale=0.0, hsv_h=0.2, hsv_s=0.5, hsv_v=0.4)


def train_tip_classifier(data: Path, epochs: int = 10, batch: int = 128, name: str = "tips",
                         project: Path = Path("runs/tips"), threads: int = 2, model: str = "yolo11n-cls.yaml",
                         hours: float | None = None) -> Path:
    """Trains the tip classifier (companion/vision/tips.py) on crops round candidate pieces
    (scripts/make_tip_crops.py: train/val/{piece,tip}/*.jpg); returns the best weights.

    Where the crop's bottom edge falls is what it teaches (the rim a stacked piece sits on), so the
    random resized crop is held at the whole crop (`scale=0`); a tip has no colour of its own, so
    hues may change freely.
    """
    from companion.vision.tips import CROP_PX

    return _train_classifier(data, model, project / name, threads, hours, epochs=epochs, imgsz=CROP_PX, batch=batch,
                             scale=0.0, hsv_h=0.3, hsv_s=0.5, hsv_v=0.4)


def classifier_command(train: Callable[..., Path], doc: str, epochs: int, name: str) -> None:
    """A crop classifier's training command (scripts/train_colour.py, train_dice.py, train_tips.py):
    DATA [--epochs] [--name] [--model] [--hours] passed to `train`, its time and best weights printed."""
    parser = argparse.ArgumentParser(description=doc.splitlines()[0])
    parser.add_argument("data", type=Path)
    parser.add_argument("--epochs", type=int, default=epochs)
    parser.add_argument("--name", default=name)
    parser.add_argument("--model", default="yolo11n-cls.yaml",
                        help="an architecture (from scratch) or weights to start from (another classifier's: its head is replaced)")
    parser.add_argument("--hours", type=float, help="train for this long instead of a fixed number of epochs")
    args = parser.parse_args()
    start = time.time()
    best = train(args.data, epochs=args.epochs, name=args.name, model=args.model, hours=args.hours)
    print(f"done in {time.time() - start:.0f} s: {best}")


def _train_classifier(data: Path, model: str, run: Path, threads: int, hours: float | None, **settings) -> Path:
    os.environ.setdefault("YOLO_VERBOSE", "true")
    ultralytics = import_ultralytics()
    import torch

    net = ultralytics.YOLO(model)
    net.add_callback("on_train_start", lambda trainer: torch.set_num_threads(threads))
    settings = {"fliplr": 0.5, **settings}
    net.train(data=str(data), device="cpu", workers=0, plots=False, amp=False, project=str(run.parent.resolve()),
              name=run.name, exist_ok=True, auto_augment=None, erasing=0.0, verbose=True,
              **settings, **({"time": hours} if hours else {}))
    weights = run.resolve() / "weights"
    return weights / "best.pt" if (weights / "best.pt").exists() else weights / "last.pt"


def average_checkpoints(checkpoints: list[Path], out: Path) -> Path:
    """Writes the mean of several detector checkpoints' weights to `out` (a "model soup").

    Runs continued from the same weights on different data stay in one basin of the loss, so their
    mean is a model too, often better than either: session 21's two runs each traded the board views
    against the close-up views, and their mean keeps some of both (docs/training.md, session 22).
    The checkpoints must share one architecture and class scheme; the first one's metadata is kept.
    A run's `last.pt` written while it still trains holds only its moving average ("ema"), which
    is what a finished run keeps as its model, so either kind can be averaged.
    """
    if len(checkpoints) < 2:
        raise ValueError("averaging needs at least two checkpoints")
    import_ultralytics()  # ultralytics' classes must be importable to unpickle its checkpoints
    import torch

    loaded = [_load_checkpoint(torch, path) for path in checkpoints]
    models = [_weights_of(ckpt) for ckpt in loaded]
    states = [model.state_dict() for model in models]
    names = set(states[0])
    for path, state, model in zip(checkpoints[1:], states[1:], models[1:]):
        if set(state) != names or any(state[k].shape != states[0][k].shape for k in names):
            raise ValueError(f"{path} has a different architecture from {checkpoints[0]}")
        if getattr(model, "names", None) != getattr(models[0], "names", None):
            raise ValueError(f"{path} has different classes from {checkpoints[0]}")
    mean = {}
    for key, first in states[0].items():
        if first.is_floating_point():
            stacked = torch.stack([state[key].float() for state in states])
            mean[key] = stacked.mean(dim=0).to(first.dtype)
        else:  # counters such as BatchNorm's num_batches_tracked: not weights
            mean[key] = first.clone()
    soup = loaded[0]
    soup["model"] = models[0]
    soup["model"].load_state_dict(mean)
    soup["ema"] = None
    soup["optimizer"] = None
    soup["train_args"] = {**(soup.get("train_args") or {}), "averaged_from": [str(p) for p in checkpoints]}
    out.parent.mkdir(parents=True, exist_ok=True)
    torch.save(soup, out)
    return out


def _load_checkpoint(torch, path: Path) -> dict:
    try:
        checkpoint = torch.load(path, map_location="cpu", weights_only=False)
    except Exception as error:  # torch raises several kinds for a file that is not a checkpoint
        raise ValueError(f"{path} is not a checkpoint torch can read ({error.__class__.__name__})") from error
    if not isinstance(checkpoint, dict) or not any(hasattr(checkpoint.get(k), "state_dict") for k in ("model", "ema")):
        raise ValueError(f"{path} is not an ultralytics checkpoint (no model in it)")
    return checkpoint


def _weights_of(checkpoint: dict):
    ema = checkpoint.get("ema")
    return ema if hasattr(ema, "state_dict") else checkpoint["model"]
