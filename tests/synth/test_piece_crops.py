"""The crop classifiers' training pieces (companion/synth/piece_crops.py)."""

from __future__ import annotations

import random

import pytest

from companion.synth.piece_crops import jittered_box, pyramids_in_view


def test_a_box_is_moved_and_scaled_within_the_amounts_given():
    rng = random.Random(3)
    for _ in range(200):
        x1, y1, x2, y2 = jittered_box((100.0, 50.0, 140.0, 110.0), rng, 0.1, 0.05)
        assert abs((x1 + x2) / 2 - 120.0) <= 0.1 * 40 + 1e-9 and abs((y1 + y2) / 2 - 80.0) <= 0.1 * 60 + 1e-9
        assert 0.95 * 40 - 1e-9 <= x2 - x1 <= 1.05 * 40 + 1e-9 and (y2 - y1) / (x2 - x1) == pytest.approx(1.5)


def test_an_unjittered_box_is_the_box_and_draws_as_a_jittered_one_does():
    plain, jittered = random.Random(7), random.Random(7)
    assert jittered_box((1.0, 2.0, 3.0, 5.0), plain, 0.0, 0.0) == (1.0, 2.0, 3.0, 5.0)
    jittered_box((1.0, 2.0, 3.0, 5.0), jittered, 0.2, 0.2)
    assert plain.random() == jittered.random()  # the next crop's draws are the same either way


def test_only_pyramids_enough_in_view_and_with_a_box_are_cut():
    truth = {"objects": [
        {"kind": "pyramid", "visible_fraction": 0.9, "box_px": [0, 0, 1, 1]},
        {"kind": "pyramid", "visible_fraction": 0.2, "box_px": [0, 0, 1, 1]},
        {"kind": "pyramid", "visible_fraction": 0.9, "box_px": None},
        {"kind": "d6", "visible_fraction": 1.0, "box_px": [0, 0, 1, 1]},
    ]}
    assert pyramids_in_view(truth, 0.5) == truth["objects"][:1]
    assert len(pyramids_in_view(truth, 0.15)) == 2
