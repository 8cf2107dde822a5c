#!/usr/bin/env python3
"""Trains the tip classifier (companion/vision/tips.py) on crops cut by scripts/make_tip_crops.py.

    python scripts/train_tips.py datasets/tips-v1 [--epochs 10] [--name tips] [--model yolo11n-cls.yaml | WEIGHTS]
"""

from __future__ import annotations

from companion.training import classifier_command, train_tip_classifier

if __name__ == "__main__":
    classifier_command(train_tip_classifier, __doc__, epochs=10, name="tips")
