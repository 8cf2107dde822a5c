"""A d6's top face is read by counting its pips where the view allows, and left unread where not."""

from __future__ import annotations

import math

import cv2
import numpy as np
import pytest

from companion.vision.detection import Detection
from companion.vision.dice import read_dice
from companion.vision.mapper import location_from_truth


@pytest.fixture(scope="module")
def six_dice():
    """Six dice in a row on a bare table, showing 1 to 6, some larger than others, seen from a
    webcam 30 cm away and 25 degrees off straight down: (BGR frame, sidecar)."""
    from companion.synth.camera import Camera, look_at
    from companion.synth.labels import sidecar
    from companion.synth.scene import D6, Scene
    from companion.synth.scenes import _Builder, sample_look
    from tests.referee.scripted import renderer_for_tests

    renderer = renderer_for_tests()
    b = _Builder(np.random.default_rng(0), 0.0)
    for value in range(1, 7):
        b.token(D6, (value - 3.5) * 30, 0, 0.0, (0.9, 0.9, 0.85), yaw=15.0 * value, value=value,
                scale=1.0 if value % 2 else 1.2)
    r, t = look_at(np.array([0, -120, 260.0]), np.array([0, 0, 0.0]))
    fx = 320 / math.tan(math.radians(30))
    look = sample_look(np.random.default_rng(1))
    look.blur_sigma, look.noise_sigma = 0.0, 1.0
    scene = Scene("icebomb-arena", 0, None, b.objects, Camera(640, 360, fx, fx, 320, 180, tuple(map(tuple, r)), tuple(t)),
                  look, {})
    rendered = renderer.render(scene)
    return cv2.cvtColor(rendered.image, cv2.COLOR_RGB2BGR), sidecar(scene, rendered.ids)


def _dice(truth, shrink: float = 1.0):
    return [Detection("d6", tuple(v * shrink for v in o["box_px"]), 0.9, "d6") for o in truth["objects"]]


def test_each_face_is_read_from_its_pips(six_dice):
    frame, truth = six_dice
    read = read_dice(frame, _dice(truth), location_from_truth(truth).H)
    assert [d.value for d in read] == [o["value"] for o in truth["objects"]] == [1, 2, 3, 4, 5, 6]


def test_a_die_too_small_in_the_picture_is_left_unread(six_dice):
    frame, truth = six_dice
    small = cv2.resize(frame, None, fx=0.25, fy=0.25, interpolation=cv2.INTER_AREA)
    to_small = np.diag([0.25, 0.25, 1.0]) @ location_from_truth(truth).H
    assert [d.value for d in read_dice(small, _dice(truth, 0.25), to_small)] == [None] * 6


def test_only_a_d6_shows_a_value():
    assert Detection("d6", (0, 0, 10, 10), 0.9, "d6", value=4).value == 4
    with pytest.raises(ValueError, match="only a d6"):
        Detection("pawn", (0, 0, 10, 10), 0.9, "pawn", value=4)
    with pytest.raises(ValueError, match="only a d6"):
        Detection("d6", (0, 0, 10, 10), 0.9, "d6", value=7)
