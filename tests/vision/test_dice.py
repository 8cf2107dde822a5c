"""A die's top face is read where the view allows (a d6's pips counted, a d8's number matched), and
left unread where not."""

from __future__ import annotations

import math

import cv2
import numpy as np
import pytest

from companion.vision.detection import Detection
from companion.vision.dice import read_dice
from companion.vision.mapper import location_from_truth


def _render_row(game: str, kind: str, spacing_mm: float, faces: int, tints, yaw_step: float, larger: float,
                width: int, height: int):
    """Dice of `kind` in a row on a bare table showing 1 to `faces`, every even one `larger`, seen
    from a webcam 30 cm away and 25 degrees off straight down: (BGR frame, sidecar)."""
    from companion.synth.camera import Camera, look_at
    from companion.synth.labels import sidecar
    from companion.synth.scene import Scene
    from companion.synth.scenes import _Builder, sample_look
    from tests.referee.scripted import renderer_for_tests

    b = _Builder(np.random.default_rng(0), 0.0)
    for value in range(1, faces + 1):
        b.token(kind, (value - (faces + 1) / 2) * spacing_mm, 0, 0.0, tints(value), yaw=yaw_step * value,
                value=value, scale=1.0 if value % 2 else larger)
    r, t = look_at(np.array([0, -120, 260.0]), np.array([0, 0, 0.0]))
    fx = width / 2 / math.tan(math.radians(30))
    look = sample_look(np.random.default_rng(1))
    look.blur_sigma, look.noise_sigma = 0.0, 1.0
    camera = Camera(width, height, fx, fx, width / 2, height / 2, tuple(map(tuple, r)), tuple(t))
    scene = Scene(game, 0, None, b.objects, camera, look, {})
    rendered = renderer_for_tests().render(scene)
    return cv2.cvtColor(rendered.image, cv2.COLOR_RGB2BGR), sidecar(scene, rendered.ids)


@pytest.fixture(scope="module")
def six_dice():
    """Six light d6s showing 1 to 6 at 640x360."""
    from companion.synth.scene import D6

    return _render_row("icebomb-arena", D6, 30, 6, lambda value: (0.9, 0.9, 0.85), 15.0, 1.2, 640, 360)


@pytest.fixture(scope="module")
def eight_dice():
    """Eight d8s showing 1 to 8 at 1280x720: light ones with dark numbers, and two dark blue ones (3
    and 6) with light numbers."""
    from companion.synth.scene import D8

    return _render_row("space-arena", D8, 26, 8,
                       lambda value: (0.2, 0.3, 0.7) if value % 3 == 0 else (0.9, 0.9, 0.85), 20.0, 1.15, 1280, 720)


def _dice(truth, shrink: float = 1.0, kind: str = "d6"):
    return [Detection(kind, tuple(v * shrink for v in o["box_px"]), 0.9, kind) for o in truth["objects"]]


def test_each_face_is_read_from_its_pips(six_dice):
    frame, truth = six_dice
    read = read_dice(frame, _dice(truth), location_from_truth(truth).H)
    assert [d.value for d in read] == [o["value"] for o in truth["objects"]] == [1, 2, 3, 4, 5, 6]


def test_a_die_too_small_in_the_picture_is_left_unread(six_dice):
    frame, truth = six_dice
    small = cv2.resize(frame, None, fx=0.25, fy=0.25, interpolation=cv2.INTER_AREA)
    to_small = np.diag([0.25, 0.25, 1.0]) @ location_from_truth(truth).H
    assert [d.value for d in read_dice(small, _dice(truth, 0.25), to_small)] == [None] * 6


def test_a_d8s_number_is_read_right_or_not_at_all(eight_dice):
    frame, truth = eight_dice
    read = [d.value for d in read_dice(frame, _dice(truth, kind="d8"), location_from_truth(truth).H)]
    shown = [o["value"] for o in truth["objects"]]
    assert shown == list(range(1, 9))
    assert all(value in (None, face) for value, face in zip(read, shown)), (read, shown)
    # Light numbers on the dark blue dice (3 and 6) are the hard ones; the light dice are read.
    assert [read[face - 1] for face in (1, 2, 4, 5, 7, 8)] == [1, 2, 4, 5, 7, 8]


def test_a_d8_too_small_in_the_picture_is_left_unread(eight_dice):
    frame, truth = eight_dice
    small = cv2.resize(frame, None, fx=0.2, fy=0.2, interpolation=cv2.INTER_AREA)
    to_small = np.diag([0.2, 0.2, 1.0]) @ location_from_truth(truth).H
    assert [d.value for d in read_dice(small, _dice(truth, 0.2, "d8"), to_small)] == [None] * 8


def test_only_a_die_shows_a_value_and_only_one_of_its_faces():
    assert Detection("d6", (0, 0, 10, 10), 0.9, "d6", value=4).value == 4
    assert Detection("d8", (0, 0, 10, 10), 0.9, "d8", value=8).value == 8
    with pytest.raises(ValueError, match="only a die"):
        Detection("pawn", (0, 0, 10, 10), 0.9, "pawn", value=4)
    with pytest.raises(ValueError, match="only a die"):
        Detection("d6", (0, 0, 10, 10), 0.9, "d6", value=7)
    with pytest.raises(ValueError, match="only a die"):
        Detection("d8", (0, 0, 10, 10), 0.9, "d8", value=9)


def test_a_d8s_size_is_fitted_to_its_box_whichever_way_it_is_turned(eight_dice):
    from companion.vision.dice import D8Config, fitted_d8
    from companion.vision.sizing import PlaneCamera

    frame, truth = eight_dice
    camera = PlaneCamera.from_homography(location_from_truth(truth).H, (frame.shape[1], frame.shape[0]))
    for o in truth["objects"]:
        middle, scale = fitted_d8(o["box_px"], camera, D8Config())
        assert scale == pytest.approx(1.0 if o["value"] % 2 else 1.15, abs=0.02), o["value"]
        assert np.hypot(*(middle - np.array(o["contact_mm"][:2]))) < 1.0


def test_a_top_face_patch_turns_with_the_turn_asked(eight_dice):
    from companion.vision.dice import FACE_PX, top_face_patch
    from companion.vision.sizing import PlaneCamera

    frame, truth = eight_dice
    camera = PlaneCamera.from_homography(location_from_truth(truth).H, (frame.shape[1], frame.shape[0]))
    box = truth["objects"][3]["box_px"]
    straight = top_face_patch(frame, "d8", box, camera).astype(float)
    turned = top_face_patch(frame, "d8", box, camera, 90.0).astype(float)
    assert straight.shape == (FACE_PX, FACE_PX, 3)
    # Turning the sampling grid a quarter turn turns the picture a quarter turn the other way.
    candidates = {k: np.abs(np.rot90(straight, k) - turned).mean() for k in (1, 3)}
    assert min(candidates.values()) < 0.3 * np.abs(straight - turned).mean()
    with pytest.raises(ValueError, match="d6 or a d8"):
        top_face_patch(frame, "pawn", box, camera)


class _FakeFaces:
    """Stands in for the face classifier: every die reads as 5."""

    def read(self, image, dice, camera, min_probability=0.0):
        return [(5, 0.99) for _ in dice]


def test_the_face_classifier_a_detector_carries_reads_the_dice_instead_of_the_pips(six_dice):
    from companion.vision.dice import dice_read_on_board

    frame, truth = six_dice
    H = location_from_truth(truth).H
    without = dice_read_on_board(lambda f: [], frame, _dice(truth), H)
    assert [d.value for d in without] == [1, 2, 3, 4, 5, 6]

    class WithFaces:
        faces_of = _FakeFaces()

    assert [d.value for d in dice_read_on_board(WithFaces(), frame, _dice(truth), H)] == [5] * 6


def test_the_shipped_face_classifier_reads_each_d6_and_d8_right_or_not_at_all(six_dice, eight_dice):
    from companion.models import DICE_WEIGHTS
    from companion.vision.dice import DiceFaceClassifier

    if not DICE_WEIGHTS.exists():
        pytest.skip("no dice face classifier in models/")
    faces = DiceFaceClassifier(DICE_WEIGHTS)
    for (frame, truth), kind in ((six_dice, "d6"), (eight_dice, "d8")):
        read = [d.value for d in read_dice(frame, _dice(truth, kind=kind), location_from_truth(truth).H, faces=faces)]
        shown = [o["value"] for o in truth["objects"]]
        assert all(value in (None, face) for value, face in zip(read, shown)), (kind, read, shown)
        assert sum(value is not None for value in read) >= len(shown) - 1, (kind, read)


def test_a_less_sure_reading_stands_only_where_the_pips_counted_agree(six_dice):
    from companion.vision.dice import MIN_AGREED_PROBABILITY, MIN_FACE_PROBABILITY

    class UnsureThree:
        def read(self, image, dice, camera, min_probability=0.0):
            return [(3, (MIN_AGREED_PROBABILITY + MIN_FACE_PROBABILITY["d6"]) / 2) for _ in dice]

    frame, truth = six_dice
    read = read_dice(frame, _dice(truth), location_from_truth(truth).H, faces=UnsureThree())
    assert [d.value for d in read] == [None, None, 3, None, None, None]
