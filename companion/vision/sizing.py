"""Sizes checked against the board's geometry: a piece's box must be as big as its size makes it.

The detector reads a pyramid's size from its looks, and at a whole board's distance a medium and a
large differ by a few pixels (session 6's model read 18 % of the validation split's mediums as
larges, by a throwaway probe). Once the board is located, its homography gives the camera too: with
square pixels and the principal point at the image centre, a plane's homography fixes the focal
length (two constraints on one unknown; weighed against a webcam's usual focal, since a board seen
nearly straight down hardly fixes it), and with it where any point above the board appears. So
each size's solid, resting where the contact keypoint says (upright, or lying towards the apex
keypoint), projects to a box; the size whose box matches the detected box best (log width and log
height errors added) is kept, with a small preference for the detector's own reading.

A piece whose box overlaps another detection's (stacked, nested, half behind another) or is cut by
the frame edge shows only part of itself, so its box says nothing about its size: it keeps the
detector's reading. So does a piece without a contact keypoint.

Measured with session 6's model on the test split (`companion eval datasets/pieces-hd --split test`,
and again with `--no-size-check`): sizes right 90.8 % -> 94.7 % of matched pieces (123 changed: 105 to
right, 18 to wrong); recall with colour and size right 0.693 -> 0.724, precision 0.825 -> 0.862.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, replace

import numpy as np

from companion.geometry import resting_corners
from companion.pieces import Pose, Size
from companion.vision.classes import PYRAMID
from companion.vision.detection import Detection, box_area, box_intersection

# A board's homography fixes the focal length only when the board is seen at a slant; seen nearly
# straight down it says almost nothing (from the true homographies of 500 rendered scenes, the plain
# least-squares estimate was off by more than 20 % for half the boards tilted under 10 degrees). So the
# focal is the most probable one: how well the homography's two board axes come out orthogonal and of
# equal length (each off by about FOCAL_FIT_NOISE), against a prior round a webcam's usual focal
# (about 64 degrees across the frame's width), within the range webcams have. On the test split's 307
# boards (true homographies) estimates off by more than 20 %: 40 -> 17 (session 16, throwaway probe);
# sizes with the detector unchanged (95.3 -> 95.2 % of matched pieces; close-ups 94.0 -> 94.1 %).
DEFAULT_FOCAL_PER_WIDTH = 0.8
FOCAL_PER_WIDTH_RANGE = (0.4, 2.0)
FOCAL_FIT_NOISE = 0.005
FOCAL_PRIOR_SPREAD = 0.25  # standard deviation of ln(focal / default focal)
_FOCAL_GRID = np.exp(np.linspace(math.log(FOCAL_PER_WIDTH_RANGE[0]), math.log(FOCAL_PER_WIDTH_RANGE[1]), 161))


@dataclass(frozen=True)
class SizingConfig:
    """Attributes:
        prefer_detector: how much lower (in summed log-size error) the detector's size scores; 0.1 was
            best of 0 / 0.05 / 0.1 / 0.15 / 0.2 on the validation split (throwaway script).
        crowd_overlap: a box sharing more than this fraction of the smaller box with another
            detection's is taken as partly hidden (and keeps the detector's size).
        edge_px: a box this close to the frame's edge may be cut by it.
        yaw_step_deg: an upright piece's turn about its axis is unknown: tried in these steps.
    """

    prefer_detector: float = 0.1
    crowd_overlap: float = 0.5
    edge_px: float = 2.0
    yaw_step_deg: float = 10.0


@dataclass(frozen=True)
class PlaneCamera:
    """A pinhole camera looking at a plane (z = 0, millimetres; z grows towards the camera)."""

    projection: np.ndarray  # 3 x 4

    @classmethod
    def from_homography(cls, plane_to_image: np.ndarray, image_size: tuple[int, int],
                        focal: float | None = None) -> PlaneCamera | None:
        """The camera that sees the plane through `plane_to_image` (plane mm -> pixels), assuming
        square pixels and the principal point at the image centre; `focal` in pixels when known
        (intrinsics), else estimated from the homography. None when the homography is degenerate."""
        w, h = image_size
        k = np.array([[1.0, 0, w / 2], [0, 1.0, h / 2], [0, 0, 1.0]])
        if focal is None:
            focal = most_probable_focal(_centred(plane_to_image, image_size)) * w
        k[0, 0] = k[1, 1] = focal
        m = np.linalg.inv(k) @ np.asarray(plane_to_image, float)
        n1, n2 = np.linalg.norm(m[:, 0]), np.linalg.norm(m[:, 1])
        if not (n1 > 0 and n2 > 0 and math.isfinite(n1 + n2)):
            return None
        m = m * (2 / (n1 + n2))
        r1, r2, t = m[:, 0], m[:, 1], m[:, 2]
        if t[2] < 0:  # the plane must lie in front of the camera
            r1, r2, t = -r1, -r2, -t
        r3 = np.cross(r1, r2)
        r3 /= np.linalg.norm(r3)
        if r3 @ t > 0:  # +z must point from the plane towards the camera
            r3 = -r3
        return cls(k @ np.column_stack([r1, r2, r3, t]))

    def project(self, points_mm: np.ndarray) -> np.ndarray:
        """(N, 3) plane-frame millimetres -> (N, 2) pixels."""
        p = np.asarray(points_mm, float)
        q = np.column_stack([p, np.ones(len(p))]) @ self.projection.T
        return q[:, :2] / q[:, 2:3]


def _axes_misfit(centred: np.ndarray) -> np.ndarray | None:
    """For each focal of the grid, the squared cosine between the plane's two axes seen through it plus
    the squared log of their lengths' ratio (0 for a true view); None when an axis vanishes."""
    h = np.asarray(centred, float)
    xy = h[:2, :2][None] / _FOCAL_GRID[:, None, None]  # each grid focal's first two rows, columns 1-2
    z = np.broadcast_to(h[2, :2], (len(_FOCAL_GRID), 2))
    first = np.concatenate([xy[:, :, 0], z[:, :1]], axis=1)
    second = np.concatenate([xy[:, :, 1], z[:, 1:]], axis=1)
    n1, n2 = np.linalg.norm(first, axis=1), np.linalg.norm(second, axis=1)
    if not (np.all(n1 > 0) and np.all(n2 > 0)):
        return None
    cosine = np.einsum("ij,ij->i", first, second) / (n1 * n2)
    return cosine ** 2 + np.log(n1 / n2) ** 2


def _centred(plane_to_image: np.ndarray, image_size: tuple[int, int]) -> np.ndarray:
    """The homography with the principal point (the image centre) moved to the origin and pixels
    divided by the image width."""
    w, h = image_size
    return np.array([[1 / w, 0, -0.5], [0, 1 / w, -0.5 * h / w], [0, 0, 1.0]]) @ np.asarray(plane_to_image, float)


def most_probable_focal(centred: np.ndarray) -> float:
    """The focal length, in image widths, that best makes the plane's two axes orthogonal and of equal
    length (`centred`: plane-to-image homography with the principal point moved to the origin and
    pixels divided by the image width), weighed against the prior round DEFAULT_FOCAL_PER_WIDTH."""
    misfit = _axes_misfit(centred)
    if misfit is None:
        return DEFAULT_FOCAL_PER_WIDTH
    prior = (np.log(_FOCAL_GRID / DEFAULT_FOCAL_PER_WIDTH) / FOCAL_PRIOR_SPREAD) ** 2
    cost = misfit / FOCAL_FIT_NOISE ** 2 + prior
    return float(_FOCAL_GRID[int(np.argmin(cost))]) if np.all(np.isfinite(cost)) else DEFAULT_FOCAL_PER_WIDTH


def view_misfit(plane_to_image: np.ndarray, image_size: tuple[int, int]) -> float:
    """How far `plane_to_image` (plane mm -> pixels) is from any view a camera with square pixels and
    its principal point at the image centre has of a plane: at the best focal of the webcams' range,
    the square root of the squared cosine between the plane's axes plus the squared log of their
    lengths' ratio (0 for a true view; inf when an axis vanishes). A square seen by a real camera
    comes out a near-square (a few hundredths on the renders); a quadrilateral no camera sees it as,
    far off."""
    misfit = _axes_misfit(_centred(plane_to_image, image_size))
    if misfit is None or not np.all(np.isfinite(misfit)):
        return math.inf
    return float(math.sqrt(misfit.min()))


def check_sizes(detections: Sequence[Detection], plane_to_image: np.ndarray, image_size: tuple[int, int],
                focal: float | None = None, config: SizingConfig = SizingConfig()) -> list[Detection]:
    """The detections with each fully visible pyramid's size chosen by how well each size's
    projected box matches its detected box (see the module's text), unless the size classifier read
    it surely (`size_confidence`). Other detections are unchanged.

    Args:
        detections: one frame's detections, in that frame's pixels.
        plane_to_image: homography from the plane the pieces rest on (mm) to the frame's pixels.
        image_size: (width, height) of the frame.
        focal: the camera's focal length in pixels when its intrinsics are known.
    """
    camera = PlaneCamera.from_homography(plane_to_image, image_size, focal)
    if camera is None:
        return list(detections)
    to_plane = np.linalg.inv(np.asarray(plane_to_image, float))
    out = list(detections)
    for k, d in enumerate(out):
        if d.kind != PYRAMID or d.size is None or d.pose is None or d.contact is None:
            continue
        if d.size_confidence is not None:
            # The size classifier read this size at the board's scale and was sure
            # (companion/vision/size_reader.py). Since it came (session 25) the check changed more
            # sizes to wrong than to right; leaving its sure readings alone, on the validation
            # split (session 30, cached detections): sizes changed 32 -> 18 (19 -> 14 to right,
            # 13 -> 4 to wrong), recall / precision with colour and size right 0.8987 / 0.9220 ->
            # 0.9001 / 0.9235.
            continue
        if d.pose == Pose.LYING and d.apex is None:
            continue
        if _cut_by_edge(d, image_size, config.edge_px) or _crowded(d, out, config.crowd_overlap):
            continue
        size = _best_size(d, camera, to_plane, config)
        if size is not None and size != d.size:
            out[k] = replace(d, size=size)
    return out


def _best_size(d: Detection, camera: PlaneCamera, to_plane: np.ndarray, config: SizingConfig) -> Size | None:
    contact = _to_plane(to_plane, d.contact)
    width, height = d.box[2] - d.box[0], d.box[3] - d.box[1]
    if width <= 0 or height <= 0:
        return None
    if d.pose == Pose.LYING:
        towards = _to_plane(to_plane, d.apex) - contact
        # resting_corners points the apex along +y; turn it to the seen direction.
        turns = [math.atan2(towards[1], towards[0]) - math.pi / 2]
    else:
        turns = [math.radians(a) for a in np.arange(0.0, 90.0, config.yaw_step_deg)]
    scores: dict[Size, float] = {}
    for size in Size:
        solid = resting_corners(size, lying=d.pose == Pose.LYING)
        best = math.inf
        for turn in turns:
            c, s = math.cos(turn), math.sin(turn)
            placed = solid @ np.array([[c, s, 0], [-s, c, 0], [0, 0, 1.0]]) + np.array([contact[0], contact[1], 0.0])
            pixels = camera.project(placed)
            span = pixels.max(axis=0) - pixels.min(axis=0)
            if span[0] <= 0 or span[1] <= 0:
                continue
            best = min(best, abs(math.log(span[0] / width)) + abs(math.log(span[1] / height)))
        scores[size] = best - (config.prefer_detector if size == d.size else 0.0)
    chosen = min(scores, key=scores.get)
    return chosen if math.isfinite(scores[chosen]) else None


def _to_plane(to_plane: np.ndarray, point: tuple[float, float]) -> np.ndarray:
    v = to_plane @ np.array([point[0], point[1], 1.0])
    return v[:2] / v[2]


def _cut_by_edge(d: Detection, image_size: tuple[int, int], edge_px: float) -> bool:
    x1, y1, x2, y2 = d.box
    w, h = image_size
    return x1 <= edge_px or y1 <= edge_px or x2 >= w - edge_px or y2 >= h - edge_px


def _crowded(d: Detection, others: Sequence[Detection], overlap: float) -> bool:
    """Whether another detection's box shares more than `overlap` of the smaller box with d's."""
    for e in others:
        smaller = min(box_area(d.box), box_area(e.box))
        if e is not d and smaller > 0 and box_intersection(d.box, e.box) / smaller > overlap:
            return True
    return False
