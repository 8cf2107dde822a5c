#!/usr/bin/env python3
"""Trains the dice face classifier (companion/vision/dice.py) on patches cut by scripts/make_die_crops.py.

    python scripts/train_dice.py datasets/dice-faces-v1 [--epochs 10] [--name dice] [--model yolo11n-cls.yaml | WEIGHTS]
"""

from __future__ import annotations

from companion.training import classifier_command, train_dice_classifier

if __name__ == "__main__":
    classifier_command(train_dice_classifier, __doc__, epochs=10, name="dice")
