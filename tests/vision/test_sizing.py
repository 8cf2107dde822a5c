"""The geometric size check: each size's solid projected through the board's camera."""

import math

import cv2
import numpy as np
import pytest

from companion.geometry import resting_corners
from companion.pieces import Pose, Size
from companion.vision.detection import Detection
from companion.vision.sizing import PlaneCamera, check_sizes, view_misfit

IMAGE = (1280, 720)


def look_at(eye, focal: float = 900.0) -> np.ndarray:
    """3x4 projection of a camera at `eye` (mm) looking at the board's centre, +z up."""
    eye = np.asarray(eye, float)
    forward = -eye / np.linalg.norm(eye)
    right = np.cross(forward, [0.0, 0.0, 1.0])
    right /= np.linalg.norm(right)
    down = np.cross(forward, right)
    rotation = np.stack([right, down, forward])  # rows: camera x, y, z in board coordinates
    k = np.array([[focal, 0, IMAGE[0] / 2], [0, focal, IMAGE[1] / 2], [0, 0, 1.0]])
    return k @ np.column_stack([rotation, -rotation @ eye])


def plane_homography(projection: np.ndarray) -> np.ndarray:
    return projection[:, [0, 1, 3]]


def project(projection: np.ndarray, points: np.ndarray) -> np.ndarray:
    q = np.column_stack([points, np.ones(len(points))]) @ projection.T
    return q[:, :2] / q[:, 2:3]


def seen(projection, size: Size, pose: Pose, at=(0.0, 0.0), turn_deg: float = 20.0, read_as: Size | None = None,
         box_noise: float = 0.0) -> Detection:
    """The detection a perfect detector would give for a piece, with its size read as `read_as`."""
    c, s = math.cos(math.radians(turn_deg)), math.sin(math.radians(turn_deg))
    solid = resting_corners(size, lying=pose == Pose.LYING) @ np.array([[c, s, 0], [-s, c, 0], [0, 0, 1.0]])
    solid = solid + np.array([at[0], at[1], 0.0])
    pixels = project(projection, solid)
    (x1, y1), (x2, y2) = pixels.min(axis=0), pixels.max(axis=0)
    pad = box_noise * (x2 - x1)
    apex = project(projection, solid[4:5])[0]
    contact = project(projection, np.array([[at[0], at[1], 0.0]]))[0]
    return Detection(kind="pyramid", box=(x1 - pad, y1 - pad, x2 + pad, y2 + pad), confidence=0.9,
                     class_name=f"{(read_as or size).name[0]}-{pose.value}", size=read_as or size, pose=pose,
                     apex=tuple(apex), contact=tuple(contact), keypoint_confidence=(0.9, 0.9))


@pytest.mark.parametrize("eye", [(0, -500, 450), (300, -350, 600), (-200, 250, 380)])
def test_the_focal_length_is_recovered_from_a_tilted_boards_homography(eye):
    projection = look_at(eye, focal=900.0)
    camera = PlaneCamera.from_homography(plane_homography(projection), IMAGE)
    assert camera is not None
    # The recovered camera puts a point 40 mm above the board where the real one does.
    point = np.array([[30.0, -20.0, 40.0]])
    assert np.allclose(camera.project(point), project(projection, point), atol=0.5)


@pytest.mark.parametrize("eye, focal", [((0, -500, 450), 900.0), ((300, -350, 600), 700.0), ((-200, 250, 380), 1500.0)])
def test_a_cameras_view_of_a_plane_has_no_misfit_and_a_stretched_square_has(eye, focal):
    h = plane_homography(look_at(eye, focal))
    assert view_misfit(h, IMAGE) < 0.02
    # Drawn without perspective, the square board twice as long as wide: seen from straight above a
    # square stays a square, and at a slant its far side would shrink, so no camera sees it so.
    stretched = np.array([[2.0, 0.0, 640.0], [0.0, 1.0, 360.0], [0.0, 0.0, 1.0]])
    assert view_misfit(stretched, IMAGE) > 0.6
    assert view_misfit(np.array([[1.0, 0.0, 640.0], [0.0, 1.0, 360.0], [0.0, 0.0, 1.0]]), IMAGE) < 1e-6


@pytest.mark.parametrize("pose", [Pose.UPRIGHT, Pose.LYING])
@pytest.mark.parametrize("truth, read_as", [(Size.MEDIUM, Size.LARGE), (Size.SMALL, Size.MEDIUM),
                                            (Size.LARGE, Size.MEDIUM)])
def test_a_size_read_one_off_is_corrected_by_the_box_it_makes(pose, truth, read_as):
    projection = look_at((150, -480, 420))
    wrong = seen(projection, truth, pose, at=(40.0, 25.0), read_as=read_as, box_noise=0.03)
    checked = check_sizes([wrong], plane_homography(projection), IMAGE)
    assert checked[0].size == truth
    assert checked[0].pose == pose and checked[0].box == wrong.box  # only the size changes


def test_a_size_the_size_classifier_read_surely_is_left_alone():
    from dataclasses import replace

    projection = look_at((150, -480, 420))
    read = seen(projection, Size.MEDIUM, Pose.UPRIGHT, at=(40.0, 25.0), read_as=Size.LARGE, box_noise=0.03)
    assert check_sizes([read], plane_homography(projection), IMAGE)[0].size == Size.MEDIUM  # the premise
    sure = replace(read, size_confidence=0.97)
    assert check_sizes([sure], plane_homography(projection), IMAGE) == [sure]


def test_a_right_size_stays_right_even_with_a_loose_box():
    projection = look_at((0, -520, 400))
    pieces = [seen(projection, size, Pose.UPRIGHT, at=(60.0 * k - 60, 0.0), box_noise=0.06)
              for k, size in enumerate(Size)]
    assert [d.size for d in check_sizes(pieces, plane_homography(projection), IMAGE)] == list(Size)


def test_pieces_partly_hidden_or_cut_by_the_frame_keep_the_detectors_size():
    projection = look_at((0, -520, 400))
    lower = seen(projection, Size.LARGE, Pose.UPRIGHT)
    # A medium read as large, its box overlapping the large one's: part of it may be hidden.
    hidden = seen(projection, Size.MEDIUM, Pose.UPRIGHT, at=(4.0, 3.0), read_as=Size.LARGE)
    assert [d.size for d in check_sizes([lower, hidden], plane_homography(projection), IMAGE)] == [Size.LARGE] * 2
    alone = seen(projection, Size.MEDIUM, Pose.UPRIGHT, read_as=Size.LARGE)
    x1, y1, x2, y2 = alone.box
    cut = Detection(**{**{f: getattr(alone, f) for f in alone.__dataclass_fields__}, "box": (0.0, y1, x2 - x1, y2)})
    assert check_sizes([cut], plane_homography(projection), IMAGE)[0].size == Size.LARGE


def test_tokens_and_pieces_without_keypoints_pass_unchanged():
    projection = look_at((0, -520, 400))
    bead = Detection(kind="bead", box=(600, 300, 612, 310), confidence=0.8, class_name="bead")
    blind = Detection(kind="pyramid", box=(500, 300, 530, 340), confidence=0.8, class_name="L-upright",
                      size=Size.LARGE, pose=Pose.UPRIGHT)
    assert check_sizes([bead, blind], plane_homography(projection), IMAGE) == [bead, blind]


def test_a_board_seen_nearly_straight_down_never_gives_a_wild_camera():
    # Seen 6-9 degrees from straight down, half a pixel of error in the board's corners moves the
    # plain least-squares focal length by up to 40 %; weighed against the prior round a webcam's
    # focal, a point 45 mm above the board stays within 3.5 px of where it shows (5.4 px before).
    rng = np.random.default_rng(7)
    square = np.array([[-150, -150], [150, -150], [150, 150], [-150, 150]], np.float32)
    above = np.array([[60.0, -40.0, 45.0]])
    worst = 0.0
    for eye in [(20, -60, 600), (60, -90, 700), (80, 40, 650)]:
        projection = look_at(eye, focal=900.0)
        corners = project(projection, np.column_stack([square, np.zeros(4)]))
        for _ in range(30):
            noisy = (corners + rng.normal(0, 0.5, corners.shape)).astype(np.float32)
            camera = PlaneCamera.from_homography(cv2.getPerspectiveTransform(square, noisy), IMAGE)
            worst = max(worst, float(np.linalg.norm(camera.project(above) - project(projection, above))))
    assert worst < 3.5
