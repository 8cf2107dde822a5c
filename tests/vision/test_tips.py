"""A piece's tip taken for a piece stacked on it (companion/vision/tips.py): which detections are
looked at, the crop, what is dropped; and the training side's tip boxes (companion/synth/tip_crops.py)."""

from __future__ import annotations

import numpy as np
import pytest

from companion.geometry import apply, pyramid_corners, stack_rise, upright_pose
from companion.pieces import Pose, Size
from companion.synth.camera import Camera, look_at
from companion.synth.tip_crops import labelled_boxes, stack_tops, tip_box
from companion.vision.detection import Detection
from companion.vision.tips import CROP_PX, PIECE, TIP, candidates, tip_crop, without_tips

LARGE_BOX = (100.0, 100.0, 140.0, 160.0)


def test_a_box_sitting_on_the_top_of_another_is_a_candidate():
    on_top = (106.0, 98.0, 134.0, 140.0)  # narrower, across its middle, ending above its bottom
    assert candidates([LARGE_BOX, on_top]) == [1]


@pytest.mark.parametrize("box", [
    (150.0, 100.0, 180.0, 140.0),   # beside it
    (104.0, 110.0, 136.0, 165.0),   # reaching below its bottom: standing in front of it
    (95.0, 98.0, 145.0, 140.0),     # wider than it
    (106.0, 40.0, 134.0, 80.0),     # well above it: standing behind it, farther away
])
def test_a_box_that_does_not_sit_on_another_is_no_candidate(box):
    assert candidates([LARGE_BOX, box]) == []


def test_the_crop_is_the_box_and_the_space_under_it_at_a_fixed_size():
    frame = np.zeros((200, 300, 3), np.uint8)
    frame[100:160, 100:140] = 255  # the box, white on black
    crop = tip_crop(frame, LARGE_BOX)
    assert crop.shape == (CROP_PX, CROP_PX, 3)
    white = crop[..., 0] > 128
    ys, xs = np.nonzero(white)
    # 1.6 box widths across with the box in the middle; 1.6 box heights down, the box
    # from 0.15 / 1.6 to 1.15 / 1.6 of the crop.
    assert xs.min() == pytest.approx(0.3 / 1.6 * CROP_PX, abs=1.5)
    assert xs.max() == pytest.approx(1.3 / 1.6 * CROP_PX, abs=1.5)
    assert ys.min() == pytest.approx(0.15 / 1.6 * CROP_PX, abs=1.5)
    assert ys.max() == pytest.approx(1.15 / 1.6 * CROP_PX, abs=1.5)


def test_the_crop_beyond_the_picture_s_edge_is_grey():
    crop = tip_crop(np.zeros((100, 100, 3), np.uint8), (0.0, 0.0, 30.0, 40.0))
    assert (crop[0, 0] == 114).all()


def _pyramid(box, pose=Pose.UPRIGHT, size=Size.LARGE):
    return Detection(kind="pyramid", box=box, confidence=0.9, class_name="x", size=size, pose=pose)


class _CallsEverythingATip:
    def __init__(self):
        self.seen = 0

    def tip_probabilities(self, crops):
        self.seen += len(crops)
        return np.ones(len(crops))


def test_only_candidates_the_classifier_calls_tips_are_dropped():
    host, on_top, beside = _pyramid(LARGE_BOX), _pyramid((106.0, 98.0, 134.0, 140.0), size=Size.MEDIUM), \
        _pyramid((200.0, 100.0, 240.0, 160.0))
    lying_on_it = _pyramid((106.0, 98.0, 134.0, 140.0), Pose.LYING)
    frame = np.zeros((300, 300, 3), np.uint8)
    classifier = _CallsEverythingATip()
    kept = without_tips(frame, [host, on_top, beside, lying_on_it], classifier)
    assert kept == [host, beside, lying_on_it] and classifier.seen == 1


def test_a_candidate_the_classifier_doubts_is_kept():
    class Unsure:
        def tip_probabilities(self, crops):
            return np.full(len(crops), 0.3)

    found = [_pyramid(LARGE_BOX), _pyramid((106.0, 98.0, 134.0, 140.0), size=Size.MEDIUM)]
    assert without_tips(np.zeros((300, 300, 3), np.uint8), found, Unsure()) == found


# --- the training side -------------------------------------------------------------------------

def _camera() -> Camera:
    r, t = look_at(np.array([0.0, -300.0, 250.0]), np.array([0.0, 0.0, 20.0]))
    return Camera(640, 480, 600.0, 600.0, 320.0, 240.0, tuple(map(tuple, r)), tuple(t))


def _piece(size: Size, z: float, camera: Camera, **extra) -> dict:
    matrix = upright_pose(0.0, 0.0, z, 20.0)
    px = camera.project(apply(matrix, pyramid_corners(size)))
    box = [float(px[:, 0].min()), float(px[:, 1].min()), float(px[:, 0].max()), float(px[:, 1].max())]
    return {"kind": "pyramid", "pose": "upright", "size": size.name[0], "matrix": matrix.reshape(-1).tolist(),
            "box_px": box, "visible_fraction": 1.0, **extra}


def test_a_large_s_tip_box_is_a_medium_s_box_at_the_tip_of_the_large():
    camera = _camera()
    large = _piece(Size.LARGE, 0.0, camera)
    tip = tip_box(large, Size.MEDIUM, camera)
    real = _piece(Size.MEDIUM, stack_rise(Size.LARGE, Size.MEDIUM), camera)["box_px"]
    # The same width as a medium stacked there, its top at the large's apex, which a real medium
    # (its walls resting on the large's faces) overtops by a few pixels.
    assert tip[2] - tip[0] == pytest.approx(real[2] - real[0], rel=0.05)
    assert tip[1] == pytest.approx(large["box_px"][1], abs=0.01)
    assert 0 < tip[1] - real[1] < 0.2 * (tip[3] - tip[1])
    assert candidates([tuple(large["box_px"]), tip]) == [1]


def test_the_truth_gives_real_stacked_pieces_and_the_tips_of_the_stacks_tops():
    camera = _camera()
    large = _piece(Size.LARGE, 0.0, camera, stack=0, level=0)
    medium = _piece(Size.MEDIUM, stack_rise(Size.LARGE, Size.MEDIUM), camera, stack=0, level=1)
    lone_small = _piece(Size.SMALL, 0.0, camera)
    lone_small["matrix"] = upright_pose(200.0, 0.0, 0.0, 0.0).reshape(-1).tolist()
    px = camera.project(apply(upright_pose(200.0, 0.0, 0.0, 0.0), pyramid_corners(Size.SMALL)))
    lone_small["box_px"] = [float(px[:, 0].min()), float(px[:, 1].min()), float(px[:, 0].max()), float(px[:, 1].max())]
    truth = {"camera": camera.to_json(), "objects": [large, medium, lone_small]}
    assert stack_tops(truth["objects"]) == [medium, lone_small]
    labels = labelled_boxes(truth, min_visible=0.3)
    # The medium on the large is a piece; the medium's tip (a small's outline) is a tip; a lone
    # small has no smaller size's tip.
    assert [label for label, _ in labels] == [PIECE, TIP]
    assert labels[0][1] == tuple(medium["box_px"])
    assert labels[1][1] == pytest.approx(tip_box(medium, Size.SMALL, camera))


# --- the shipped classifier ----------------------------------------------------------------------

def test_the_shipped_tip_classifier_tells_the_scripted_arena_trees_from_their_tips():
    from companion import models
    from companion.vision.tips import MIN_TIP_PROBABILITY, TipClassifier
    from tests.referee import scripted, scripted_games
    from tests.referee.test_games_video import ARENA_COLOURS, SCRIPTS

    if not models.TIP_WEIGHTS.exists():
        pytest.skip(f"{models.TIP_WEIGHTS} is not shipped")
    renderer = scripted.renderer_for_tests()
    classifier = TipClassifier(models.TIP_WEIGHTS)
    script = SCRIPTS["space-arena"]
    state, right, seen = script.start(), 0, 0
    for move in script.moves:
        for action in script.actions(move):
            state = state.apply(action)
        image, truth = scripted.render(renderer, scripted_games.arena_scene(state, ARENA_COLOURS, None, size=(640, 480)))
        labels = labelled_boxes(truth, 0.3)
        bgr = np.ascontiguousarray(image[..., ::-1])
        tips = classifier.tip_probabilities([tip_crop(bgr, box) for _, box in labels])
        right += sum((p >= MIN_TIP_PROBABILITY) == (label == TIP) for (label, _), p in zip(labels, tips))
        seen += len(labels)
    # Twelve crops over the three positions: the trees' real upper pieces and the tips of every top.
    # One is known to be misread: the red medium on its large at b2, seen low from the side, whose
    # rim hardly shows (tip 0.93).
    assert seen == 12 and right >= 11
