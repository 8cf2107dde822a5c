#!/usr/bin/env python3
"""Trains the piece detector from scratch on a synthetic dataset (scripts/synth dataset ...).

    python scripts/train_detector.py --data DATASET/data.yaml [--imgsz 416] [--epochs 30] [--name pieces]
    python scripts/train_detector.py --data DATASET/data.yaml --name pieces --resume   # continue a stopped run
    python scripts/train_detector.py --data DATASET/data.yaml --model models/pieces.pt # continue from shipped weights
    python scripts/train_detector.py --boards --data datasets/boards-v1/data.yaml --model models/pieces.pt --name boards
        # the board model, its backbone taken from the piece detector's

Long runs belong in the background (nohup ... &): ultralytics saves runs/detector/NAME/weights/last.pt
every epoch, and --resume picks it up.
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

from companion.training import BOARD_AUGMENT, TrainConfig, describe, train


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, required=True)
    parser.add_argument("--model", default="yolo11n-pose.yaml")
    parser.add_argument("--imgsz", type=int, default=416)
    parser.add_argument("--epochs", type=int, default=30)
    parser.add_argument("--hours", type=float, help="train for this long instead of a fixed number of epochs")
    parser.add_argument("--batch", type=int, default=16)
    parser.add_argument("--name", default="pieces")
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--device", default="cpu", help='"cpu", or a CUDA device such as "0" (scripts/device-train)')
    parser.add_argument("--workers", type=int, default=0, help="batch-loading processes (0: in this one, as on the CPU)")
    parser.add_argument("--resume", action="store_true")
    parser.add_argument("--lr0", type=float, help="AdamW at this learning rate (default: ultralytics' automatic choice)")
    parser.add_argument("--warmup-epochs", type=float, help="default: ultralytics' 3; less when continuing from trained weights")
    parser.add_argument("--seed", type=int, default=0,
                        help="shuffling and augmentation seed; runs with different seeds make ingredients for averaging")
    parser.add_argument("--boards", action="store_true",
                        help="train the board model (scripts/make_board_set.py's set): its augmentation, runs/boards/")
    args = parser.parse_args()
    extra = {"augment": dict(BOARD_AUGMENT), "project": Path("runs/boards")} if args.boards else {}
    config = TrainConfig(data=args.data, model=args.model, imgsz=args.imgsz, epochs=args.epochs, hours=args.hours, batch=args.batch,
                         name=args.name, threads=args.threads, device=args.device, workers=args.workers,
                         resume=args.resume,
                         lr0=args.lr0, warmup_epochs=args.warmup_epochs, seed=args.seed, **extra)
    print(json.dumps(describe(config)))
    start = time.time()
    best = train(config)
    print(f"done in {time.time() - start:.0f} s: {best}")


if __name__ == "__main__":
    main()
