#!/usr/bin/env python3
"""Trains the crop colour classifier on crops cut by scripts/make_colour_crops.py.

    python scripts/train_colour.py datasets/colours-v1 [--epochs 15] [--name colours]      # from scratch
    python scripts/train_colour.py datasets/colours-v2 --model models/colours.pt --epochs 2 # continue
"""

from __future__ import annotations

from companion.training import classifier_command, train_colour_classifier

if __name__ == "__main__":
    classifier_command(train_colour_classifier, __doc__, epochs=15, name="colours")
