"""Where camera frames come from: a webcam, a video file, a folder of images, the bundled demo.

A `FrameSource` is opened, read frame by frame and closed by the pipeline's capture thread.
It reports trouble in two ways, so the pipeline can tell a bad picture from a lost camera:

- a `Frame` whose `image` is None (with the `problem` in words): one unreadable or truncated
  frame; the pipeline skips it and says so;
- `SourceError`: the device itself failed (unplugged, cannot be opened); the feed's runner
  reconnects with back-off.

`read()` returning None means the source ended (the last frame of a video or folder).

`DrawnTable` and `MarkerDetector` at the end are a flat-shaded stand-in for a camera and a
detector: an Icebomb Arena table drawn from engine states, and a detector that reads its
markers back. Tests and benchmarks use them to drive the whole pipeline without a trained model.
"""

from __future__ import annotations

import json
import math
import time
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import Protocol

import cv2
import numpy as np

from companion.session import SourceError

IMAGE_SUFFIXES = (".jpg", ".jpeg", ".png", ".bmp")
VIDEO_SUFFIXES = (".avi", ".mp4", ".mkv", ".mov", ".webm", ".m4v")


@dataclass(frozen=True, slots=True)
class Frame:
    """One picture from a source.

    Attributes:
        image: BGR pixels, or None when this frame could not be read.
        index: position in the source (0-based), counting unreadable frames too.
        time: `time.monotonic()` when it was captured.
        name: the file or 'webcam:N #index', for messages.
        problem: why `image` is None.
    """

    image: np.ndarray | None
    index: int
    time: float
    name: str
    problem: str | None = None


class FrameSource(Protocol):
    """A camera, video or image folder. `live` sources are real devices (frozen/stall checks apply)."""

    description: str
    live: bool
    fps: float

    def open(self) -> None: ...

    def read(self) -> Frame | None: ...

    def close(self) -> None: ...


class WebcamSource:
    """A camera through OpenCV (`webcam:N`)."""

    live = True

    def __init__(self, index: int, width: int = 1280, height: int = 720, fps: float = 30.0):
        self.index, self.width, self.height, self.fps = index, width, height, fps
        self.description = f"webcam:{index}"
        self._cap: cv2.VideoCapture | None = None
        self._count = 0

    def open(self) -> None:
        cap = cv2.VideoCapture(self.index)
        if not cap.isOpened():
            cap.release()
            raise SourceError(f"camera {self.index} cannot be opened (unplugged, or in use by another program)")
        cap.set(cv2.CAP_PROP_FRAME_WIDTH, self.width)
        cap.set(cv2.CAP_PROP_FRAME_HEIGHT, self.height)
        cap.set(cv2.CAP_PROP_BUFFERSIZE, 1)  # the newest picture, not a queue of stale ones
        self._cap = cap

    def read(self) -> Frame | None:
        if self._cap is None:
            raise SourceError(f"camera {self.index} is not open")
        ok, image = self._cap.read()
        index, self._count = self._count, self._count + 1
        if not ok or image is None:
            # Drivers return False both for one dropped frame and for an unplugged camera;
            # the pipeline's stall check tells them apart by how long it lasts.
            return Frame(None, index, time.monotonic(), f"{self.description} #{index}",
                         "the camera returned no picture")
        return Frame(image, index, time.monotonic(), f"{self.description} #{index}")

    def close(self) -> None:
        if self._cap is not None:
            self._cap.release()
            self._cap = None


class VideoFileSource:
    """A video file, read frame by frame; `fps` paces it when the pipeline runs in real time."""

    live = False

    def __init__(self, path: str | Path):
        self.path = Path(path)
        self.description = f"video {self.path.name}"
        self.fps = 30.0
        self._cap: cv2.VideoCapture | None = None
        self._count = 0
        self._total = 0

    def open(self) -> None:
        if not self.path.is_file():
            raise SourceError(f"video {self.path} does not exist")
        cap = cv2.VideoCapture(str(self.path))
        if not cap.isOpened():
            cap.release()
            raise SourceError(f"video {self.path} cannot be opened (not a video, or a codec is missing)")
        fps = cap.get(cv2.CAP_PROP_FPS)
        self.fps = fps if fps and math.isfinite(fps) and 1 <= fps <= 240 else 30.0
        self._total = int(cap.get(cv2.CAP_PROP_FRAME_COUNT) or 0)
        self._cap, self._count = cap, 0

    def read(self) -> Frame | None:
        if self._cap is None:
            raise SourceError(f"video {self.path} is not open")
        index = self._count
        ok, image = self._cap.read()
        self._count += 1
        if ok and image is not None and image.size:
            return Frame(image, index, time.monotonic(), f"{self.path.name} #{index}")
        if index + 1 < self._total:
            # A damaged frame inside the file: skip to the next one rather than end the video.
            self._cap.set(cv2.CAP_PROP_POS_FRAMES, index + 1)
            return Frame(None, index, time.monotonic(), f"{self.path.name} #{index}", "frame cannot be decoded")
        return None

    def close(self) -> None:
        if self._cap is not None:
            self._cap.release()
            self._cap = None


def read_image_file(path: Path) -> tuple[np.ndarray | None, str | None]:
    """(BGR image, None) or (None, why not) for an image file."""
    try:
        data = Path(path).read_bytes()
    except OSError as exc:
        return None, f"cannot be read ({(exc.strerror or str(exc)).lower()})"
    return decode_image(data, Path(path).name)


def decode_image(data: bytes, name: str) -> tuple[np.ndarray | None, str | None]:
    """(BGR image, None) or (None, why not) for the bytes of one image file."""
    if not data:
        return None, "empty file"
    if data[:2] == b"\xff\xd8" and b"\xff\xd9" not in data[-64:]:
        # libjpeg pads a truncated JPEG with grey and only warns: it would pass for a picture.
        return None, "truncated JPEG (no end-of-image marker)"
    image = cv2.imdecode(np.frombuffer(data, np.uint8), cv2.IMREAD_COLOR)
    if image is None or image.size == 0:
        return None, "not a readable image"
    return image, None


class ImageFolderSource:
    """The images of a folder in name order, as if filmed at `fps` frames per second."""

    live = False

    def __init__(self, folder: str | Path, fps: float = 10.0):
        self.folder = Path(folder)
        self.fps = fps
        self.description = f"images in {self.folder.name or self.folder}"
        self._paths: list[Path] = []
        self._next = 0

    def open(self) -> None:
        if not self.folder.is_dir():
            raise SourceError(f"image folder {self.folder} does not exist")
        self._paths = sorted(p for p in self.folder.iterdir() if p.suffix.lower() in IMAGE_SUFFIXES)
        if not self._paths:
            raise SourceError(f"image folder {self.folder} holds no images ({', '.join(IMAGE_SUFFIXES)})")
        self._next = 0

    def read(self) -> Frame | None:
        if self._next >= len(self._paths):
            return None
        index, path = self._next, self._paths[self._next]
        self._next += 1
        image, problem = read_image_file(path)
        return Frame(image, index, time.monotonic(), path.name, problem)

    @property
    def paths(self) -> tuple[Path, ...]:
        """The image files it will play, in order (after `open`)."""
        return tuple(self._paths)

    def close(self) -> None:
        self._paths = []


class DemoSource(ImageFolderSource):
    """The bundled demo as a camera would film it: the frames listed in its index.json, in order.

    The demo stores each still table once and lists it for two frames; a camera at 10 frames/s
    would see it for longer, so every calm frame is held `hold` times (enough for the tracker's
    calm-frame count) and hand frames are shown once.
    """

    def __init__(self, root: str | Path, fps: float = 10.0, hold: int = 3):
        super().__init__(Path(root) / "frames", fps)
        self.index = Path(root) / "index.json"
        self.hold = hold
        self.description = "the bundled demo video"

    def open(self) -> None:
        try:
            frames = json.loads(self.index.read_text(encoding="utf-8"))["frames"]
        except (OSError, ValueError, KeyError) as exc:
            raise SourceError(f"demo index {self.index} unreadable: {exc}") from None
        self._paths = [self.folder / f["file"] for f in frames for _ in range(1 if f["hand"] else self.hold)]
        self._next = 0


def demo_dir() -> Path:
    return Path(str(resources.files("companion") / "data" / "demo"))


def demo_video_path() -> Path:
    """The bundled demo: a video file under companion/data/demo/, or a folder of its frames.

    Raises:
        FileNotFoundError: when this build has no demo video.
    """
    root = demo_dir()
    if root.is_dir():
        videos = sorted(p for p in root.rglob("*") if p.suffix.lower() in VIDEO_SUFFIXES)
        if videos:
            return videos[0]
        folders = sorted({p.parent for p in root.rglob("*") if p.suffix.lower() in IMAGE_SUFFIXES})
        if folders:
            return max(folders, key=lambda f: sum(1 for p in f.iterdir() if p.suffix.lower() in IMAGE_SUFFIXES))
    raise FileNotFoundError(2, "the bundled demo video is not part of this build", str(root))


def open_source(spec: str, folder_fps: float = 10.0) -> FrameSource:
    """The frame source of a `--source` value: 'webcam:N', 'demo-video', a video file or an image folder.

    Raises:
        FileNotFoundError: for a path that does not exist (or no bundled demo).
        ValueError: for a spec that names no source.
    """
    text = spec.strip()
    if text.startswith("webcam:"):
        number = text.partition(":")[2]
        if not number.isdigit():
            raise ValueError(f"bad camera {spec!r} (expected webcam:N with N a camera number, e.g. webcam:0)")
        return WebcamSource(int(number))
    if text == "demo-video":
        if (demo_dir() / "index.json").exists():
            return DemoSource(demo_dir(), folder_fps)
        path = demo_video_path()
        return ImageFolderSource(path, folder_fps) if path.is_dir() else VideoFileSource(path)
    path = Path(text).expanduser()
    if path.is_dir():
        return ImageFolderSource(path, folder_fps)
    if path.is_file():
        if path.suffix.lower() in IMAGE_SUFFIXES:
            raise ValueError(f"{spec}: one image is not a feed; give its folder, or use `companion recognize`")
        return VideoFileSource(path)
    raise FileNotFoundError(2, "no such camera, video or image folder (expected webcam:N, demo-video, "
                               "a video file or a folder of images)", text)


# ==== a drawn table and a detector that reads it (tests and benchmarks) ========================

SEAT_BGR = {"red": (40, 40, 220), "yellow": (30, 210, 230), "green": (60, 170, 40), "blue": (200, 80, 30),
            "black": (25, 25, 25), "purple": (150, 50, 130), "orange": (20, 130, 245), "cyan": (210, 200, 40),
            "white": (245, 245, 245), "clear": (200, 220, 210)}
PAWN_BGR = (255, 0, 255)  # magenta: nothing else on the drawn table has that hue
BEAD_BGR = (0, 255, 0)
SKIN_BGR = (120, 160, 215)


class DrawnTable:
    """Draws an Icebomb Arena table (chessboard, pawns, beads, blocks) seen by a fixed camera.

    Pieces are flat markers at their cells' centres: a magenta disc for a gladiator's pawn, a
    green disc for a bomb, a square in its owner's colour for a block. `hand_at` adds a skin-coloured
    blob (a hand reaching over the board). `shift` moves the whole picture (the board bumped).
    """

    def __init__(self, width: int = 1280, height: int = 720, files: int = 8, ranks: int = 8,
                 cell_mm: float = 44.45, colours: tuple[str, ...] = ("red", "yellow", "green", "blue")):
        self.size = (width, height)
        self.files, self.ranks, self.cell_mm = files, ranks, cell_mm
        self.colours = colours
        self.ppm = 2.0
        self.border_mm = 20.0
        s = min(width, height) / 720
        board = np.float32([[0, 0], [8 * cell_mm, 0], [8 * cell_mm, 8 * cell_mm], [0, 8 * cell_mm]])
        corners = np.float32([[380, 650], [900, 640], [820, 250], [450, 255]]) * s
        corners[:, 0] += (width - 1280 * s) / 2
        self.homography = cv2.getPerspectiveTransform(board, corners)  # board mm -> image px
        self._top = self._draw_board()

    def _top_to_mm(self) -> np.ndarray:
        side = 8 * self.cell_mm
        return np.array([[1 / self.ppm, 0, -self.border_mm], [0, -1 / self.ppm, side + self.border_mm], [0, 0, 1]])

    def _draw_board(self) -> np.ndarray:
        n = int((8 * self.cell_mm + 2 * self.border_mm) * self.ppm)
        top = np.full((n, n, 3), (60, 90, 140), np.uint8)
        for f in range(8):
            for r in range(8):
                x0, x1 = (int((self.border_mm + k * self.cell_mm) * self.ppm) for k in (f, f + 1))
                y0, y1 = (int((self.border_mm + (8 - k) * self.cell_mm) * self.ppm) for k in (r + 1, r))
                top[y0:y1, x0:x1] = (50, 60, 70) if (f + r) % 2 == 0 else (200, 215, 225)
        return top

    def cell_centre(self, name: str) -> tuple[float, float]:
        """Board-plane mm of a cell's centre ('a1' at the board's a1 corner)."""
        f, r = ord(name[0]) - 97, int(name[1:]) - 1
        return ((f + 0.5) * self.cell_mm, (r + 0.5) * self.cell_mm)

    def draw(self, pawns: dict[int, str] | None = None, bombs: tuple[str, ...] = (),
             blocks: dict[str, tuple[int, str]] | None = None, hand_at: tuple[float, float] | None = None,
             shift: tuple[float, float] = (0.0, 0.0), noise: float = 0.0, seed: int = 0) -> np.ndarray:
        """One frame of the table. `pawns` maps seats to cells; `blocks` cells to (owner, size letter)."""
        top = self._top.copy()
        to_top = np.linalg.inv(self._top_to_mm())

        def at(name: str) -> tuple[int, int]:
            x, y = self.cell_centre(name)
            u, v, w = to_top @ np.array([x, y, 1.0])
            return int(round(u / w)), int(round(v / w))

        c = self.cell_mm * self.ppm
        for owner_cell in (blocks or {}).items():
            cell, (owner, size) = owner_cell
            half = int(c * {"S": 0.18, "M": 0.24, "L": 0.3}[size])
            u, v = at(cell)
            cv2.rectangle(top, (u - half, v - half), (u + half, v + half), SEAT_BGR[self.colours[owner]], -1)
        for cell in bombs:
            cv2.circle(top, at(cell), int(c * 0.2), BEAD_BGR, -1, cv2.LINE_AA)
        for _, cell in sorted((pawns or {}).items()):
            cv2.circle(top, at(cell), int(c * 0.28), PAWN_BGR, -1, cv2.LINE_AA)
        h = self.homography @ self._top_to_mm()
        h = np.array([[1, 0, shift[0]], [0, 1, shift[1]], [0, 0, 1]]) @ h
        frame = np.full((self.size[1], self.size[0], 3), (110, 120, 125), np.uint8)
        cv2.warpPerspective(top, h, self.size, dst=frame, borderMode=cv2.BORDER_TRANSPARENT)
        if hand_at is not None:
            x, y = hand_at
            cv2.ellipse(frame, (int(x), int(y)), (110, 70), 30, 0, 360, SKIN_BGR, -1, cv2.LINE_AA)
            cv2.ellipse(frame, (int(x + 60), int(y + 120)), (50, 140), 20, 0, 360, SKIN_BGR, -1, cv2.LINE_AA)
        if noise:
            rng = np.random.default_rng(seed)
            frame = cv2.add(frame, rng.normal(0, noise, frame.shape).astype(np.int8), dtype=cv2.CV_8U)
        return frame

    def draw_state(self, state, **kw) -> np.ndarray:
        """The table of an Icebomb Arena engine state."""
        grid = state.grid
        pawns = {p: grid.name(c) for p, c in enumerate(state.gladiators) if c is not None and state.alive[p]}
        bombs = tuple(grid.name(c) for c in sorted(state.bombs))
        blocks = {grid.name(c): (b[0], "SML"[b[1] - 1]) for c, b in enumerate(state.blocks) if b is not None}
        return self.draw(pawns, bombs, blocks, **kw)


class MarkerDetector:
    """Finds a `DrawnTable`'s markers by colour: a detector for tests and benchmarks, no model needed.

    Works on any frame size; returns `Detection`s with the marker's centre as the contact point.
    """

    def __init__(self, colours: tuple[str, ...] = ("red", "yellow", "green", "blue"), delay: float = 0.0):
        self.colours = colours
        self.delay = delay  # seconds added per call, to stand in for a real model's cost
        self.calls = 0

    def __call__(self, frame: np.ndarray) -> list:
        from companion.pieces import Colour, Pose, Size
        from companion.vision.detection import Detection

        self.calls += 1
        if self.delay:
            time.sleep(self.delay)
        out = []
        scale = frame.shape[1] / 1280
        targets = [("pawn", PAWN_BGR, None), ("bead", BEAD_BGR, None)]
        targets += [("pyramid", SEAT_BGR[c], c) for c in self.colours]
        for kind, bgr, colour in targets:
            mask = cv2.inRange(frame, np.clip(np.array(bgr) - 30, 0, 255), np.clip(np.array(bgr) + 30, 0, 255))
            n, _, stats, centroids = cv2.connectedComponentsWithStats(mask, connectivity=8)
            for i in range(1, n):
                x, y, w, h, area = (int(v) for v in stats[i])
                if area < 40 * scale * scale or max(w, h) > 80 * scale:
                    continue  # specks, and the big blobs of a hand
                cx, cy = (float(v) for v in centroids[i])
                if kind == "pyramid":
                    side = math.sqrt(area) / scale
                    size = Size.SMALL if side < 22 else (Size.MEDIUM if side < 29 else Size.LARGE)
                    out.append(Detection("pyramid", (x, y, x + w, y + h), 0.9, f"{colour}-{size.letter}-upright",
                                         Colour(colour), size, Pose.UPRIGHT, apex=(cx, cy - 1.0), contact=(cx, cy),
                                         keypoint_confidence=(0.9, 0.9)))
                else:
                    out.append(Detection(kind, (x, y, x + w, y + h), 0.9, kind, contact=(cx, cy),
                                         keypoint_confidence=(0.0, 0.9)))
        return out


__all__ = ["DrawnTable", "Frame", "FrameSource", "ImageFolderSource", "MarkerDetector", "VideoFileSource",
           "WebcamSource", "DemoSource", "decode_image", "demo_video_path", "open_source"]
