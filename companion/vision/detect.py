"""The piece detector: a YOLO pose model in, our own `Detection` values out.

Ultralytics types stop here. `Detector` loads the weights once (a `.pt` file, or an exported
OpenVINO folder / ONNX file, which ultralytics runs with its own pre- and post-processing) and
turns each frame into a list of `Detection`. Colour, size and pose come from the class name
when the class scheme has them; a scheme without colour leaves colour to a small classifier on
the piece's pixels (companion/vision/colour.py) when one is given, which also reads each piece
with half of the frame's colour cast taken out (companion/vision/balance.py). Each frame is looked
at twice, as it is and mirrored, and the two looks merged (companion/vision/mirrored.py).
"""

from __future__ import annotations

import threading
from dataclasses import dataclass, replace
from pathlib import Path

import cv2
import numpy as np

from companion.models import DETECTOR_CLOSE_IMGSZ, DETECTOR_IMGSZ
from companion.pieces import Colour, Pose, Size
from companion.vision.balance import cast_gains, with_gains
from companion.vision.classes import PYRAMID, TOKENS
from companion.vision.colour import DETECTION_CROP_MARGIN, ColourClassifier, crop_for_colour
from companion.vision.detection import KEYPOINT_SEEN, Detection, with_cut_end_estimated, without_duplicates
from companion.vision.mirrored import merge_looks, mirrored
from companion.vision.size_reader import SizeClassifier, with_sizes_read
from companion.vision.tips import TipClassifier, without_tips
from companion.vision.dice import DiceFaceClassifier
from companion.vision.yolo_env import import_ultralytics



class ModelError(RuntimeError):
    """The detector's weights are missing or unreadable; the referee falls back to manual mode."""


@dataclass(frozen=True)
class DetectorConfig:
    weights: Path
    imgsz: int = DETECTOR_IMGSZ  # the size the shipped model was trained at
    close_imgsz: int = DETECTOR_CLOSE_IMGSZ  # for `Detector.closely`: regions where the pieces are small
    # Checked on the validation split by scripts/choose_confidence.py (scripts/model_card.py reports
    # the test split): with session 7's model (and the size check), F1 0.797 / 0.804 / 0.800 / 0.800
    # at 0.25 / 0.3 / 0.35 / 0.45 (false detections per image 0.54 / 0.41 / 0.35 / 0.20); session 5's
    # rose to 0.45, session 4's was flat from 0.35 to 0.5. 0.35 is kept: F1 is flat, and photographs
    # are not renders: on the two reference photographs of real pieces, 5 of 39 detections (mostly
    # pieces in stacks, all real) scored 0.35-0.45 with session 5's model.
    #
    # Since session 12 this is the threshold on the merged confidence of the two looks (see
    # `mirror_look`): on the validation split 0.3 found the most pieces with precision still above
    # one look's at 0.35 (0.33 and 0.35 traded a point of recall for one of precision).
    confidence: float = 0.3
    iou: float = 0.6
    # Look twice, at the frame and at its mirror image, and merge (companion/vision/mirrored.py).
    # `companion eval datasets/pieces-hd --split val`, session 10's model, one look at 0.35 vs two
    # at 0.3: recall with colour and size right 0.848 -> 0.861, precision 0.876 -> 0.886
    # (docs/pipeline.md). Costs a second inference (one batch of two). Pairs overlap by more than
    # `mirror_pair_iou` (0.55 merged neighbours in stacks; 0.8 left pairs apart); a piece seen in one
    # look only counts for `mirror_lone_weight` of its score; each look keeps what scores at least
    # `look_confidence`, so a pair of 0.25 and 0.4 counts.
    mirror_look: bool = True
    mirror_pair_iou: float = 0.65
    mirror_lone_weight: float = 0.5
    look_confidence: float = 0.1
    # The model suppresses overlaps class by class; across classes, a box overlapping a better one by
    # more than this is the same object again. Measured with session 5's model (throwaway script over
    # 150 referee-framed renders and 200 test renders): precision 0.777 -> 0.844 and 0.749 -> 0.810,
    # false detections per image 1.01 -> 0.42 and 0.84 -> 0.37, recall +0.4 and -0.6 points; 0.7
    # gained a little more precision for a point of recall. scripts/model_card.py reports it.
    duplicate_iou: float = 0.8
    # The colour classifier also reads each piece with half of the picture's colour cast taken out
    # (companion/vision/balance.py), averaged in as the mirrored crop is; 0: not. The network itself
    # sees the picture as it is. Session 23, session 22's weights, recall / precision with colour and
    # size right without -> with: `companion eval datasets/closeup --split test --webcam warm-light`
    # 0.802 / 0.817 -> 0.840 / 0.856, cool-light 0.799 -> 0.813, clean 0.8855 -> 0.8855; the test
    # split 0.8801 / 0.9062 -> 0.8784 / 0.9044 clean, its first 100 under warm light 0.801 -> 0.827.
    # Taking the cast out of the picture itself cost the clean pictures more (docs/pipeline.md).
    white_balance: float = 0.5
    # A lying pyramid cut by the picture's edge gets its missing end where its box leaves the
    # picture (`with_cut_end_estimated`), so it has a direction, marked unsure by the mapper.
    estimate_cut_ends: bool = True
    max_detections: int = 200
    threads: int = 2

    def __post_init__(self) -> None:
        for name in ("confidence", "look_confidence", "mirror_lone_weight", "white_balance"):
            if not 0.0 <= getattr(self, name) <= 1.0:
                raise ValueError(f"DetectorConfig.{name} must be in [0, 1], got {getattr(self, name)}")
        if not 0.0 < self.mirror_pair_iou < 1.0:
            raise ValueError(f"DetectorConfig.mirror_pair_iou must be in (0, 1), got {self.mirror_pair_iou}")


def parse_class_name(name: str) -> tuple[str, Colour | None, Size | None, Pose | None]:
    """Reads a class name of any scheme ('red-L-upright', 'L-lying', 'red-L', 'pawn') into its fields."""
    if name in TOKENS:
        return name, None, None, None
    colour = size = pose = None
    for part in name.split("-"):
        if part in ("upright", "lying"):
            pose = Pose(part)
        elif part in ("S", "M", "L"):
            size = Size.parse(part)
        elif part != PYRAMID:
            colour = Colour.parse(part)
    return PYRAMID, colour, size, pose


class Detector:
    """Loads a model once; `detect(frame)` returns the frame's detections, best first."""

    def __init__(self, config: DetectorConfig, colour_of: ColourClassifier | None = None,
                 size_of: SizeClassifier | None = None, faces_of: DiceFaceClassifier | None = None,
                 tips_of: TipClassifier | None = None):
        self.config = config
        self.colour_of = colour_of
        self.size_of = size_of
        self.tips_of = tips_of  # drops a piece's tip taken for a piece stacked on it (vision/tips.py)
        self.faces_of = faces_of  # read by vision/dice.py's `dice_read_on_board` once the board is located
        path = Path(config.weights)
        if not path.exists():
            raise ModelError(f"model file {path} does not exist")
        ultralytics = import_ultralytics()
        try:
            self._model = ultralytics.YOLO(str(path), task="pose")
        except Exception as exc:  # ultralytics raises many kinds for a corrupt file
            raise ModelError(f"cannot load model {path}: {exc}") from exc
        self._names: dict[int, str] = dict(self._model.names)
        self._parsed = {i: parse_class_name(n) for i, n in self._names.items()}
        self._lock = threading.Lock()  # one inference at a time per model
        self._threads_set = False

    @property
    def class_names(self) -> dict[int, str]:
        return dict(self._names)

    def __call__(self, frame: np.ndarray) -> list[Detection]:
        return self.detect(frame)

    def detect(self, frame: np.ndarray, imgsz: int | None = None) -> list[Detection]:
        """Detections in a BGR frame, highest confidence first (`imgsz`: the network's input size)."""
        if frame.ndim != 3 or frame.shape[2] != 3:
            raise ValueError(f"expected a BGR image of shape (h, w, 3), got {frame.shape}")
        cfg = self.config
        height, width = frame.shape[:2]
        if not cfg.mirror_look:
            [seen] = self._looks([frame], imgsz, cfg.confidence)
        else:
            # One batch of two pictures: a third faster than two calls, and the same detections.
            seen, seen_mirrored = self._looks([frame, cv2.flip(frame, 1)], imgsz, cfg.look_confidence)
            merged = merge_looks(seen, [mirrored(d, width) for d in seen_mirrored], cfg.mirror_pair_iou,
                                 cfg.mirror_lone_weight, cfg.confidence)
            seen = without_duplicates(merged, cfg.duplicate_iou)
        if cfg.estimate_cut_ends:
            seen = [with_cut_end_estimated(d, width, height) for d in seen]
        if self.tips_of is not None:
            seen = without_tips(frame, seen, self.tips_of)
        return self._with_colours(frame, seen)

    def _looks(self, frames: list[np.ndarray], imgsz: int | None, confidence: float) -> list[list[Detection]]:
        """One pass of the network over each picture (of one shape): the detections above
        `confidence`, colours not yet read."""
        cfg = self.config
        with self._lock:
            results = self._model.predict(frames, imgsz=imgsz or cfg.imgsz, conf=confidence, iou=cfg.iou,
                                          max_det=cfg.max_detections, device="cpu", verbose=False)
            if not self._threads_set:
                # Ultralytics sets torch to one thread on its first call; give it the cores back.
                import torch

                torch.set_num_threads(cfg.threads)
                self._threads_set = True
        return [self._convert(result) for result in results]

    def read_sizes(self, frame: np.ndarray, detections: list[Detection], plane_to_image: np.ndarray) -> list[Detection]:
        """Once the board is located (`plane_to_image`: board mm -> this frame's pixels), each
        pyramid's size as the size classifier reads it at the board's scale where it is sure
        (companion/vision/size_reader.py); unchanged without a size classifier."""
        if self.size_of is None:
            return list(detections)
        return with_sizes_read(frame, detections, plane_to_image, self.size_of)

    def closely(self, frame: np.ndarray) -> list[Detection]:
        """Detections with the larger input size, for a region whose pieces are small (a whole
        board in view): region.py looks there with this when the detector offers it."""
        return self.detect(frame, self.config.close_imgsz)

    def _convert(self, result) -> list[Detection]:
        boxes = result.boxes
        if boxes is None or len(boxes) == 0:
            return []
        xyxy = boxes.xyxy.cpu().numpy().astype(float)
        conf = boxes.conf.cpu().numpy().astype(float)
        cls = boxes.cls.cpu().numpy().astype(int)
        kxy = kconf = None
        if result.keypoints is not None and result.keypoints.xy is not None:
            kxy = result.keypoints.xy.cpu().numpy().astype(float)
            kconf = None if result.keypoints.conf is None else result.keypoints.conf.cpu().numpy().astype(float)
        out = []
        for i in np.argsort(-conf):
            kind, colour, size, pose = self._parsed[int(cls[i])]
            apex = contact = None
            kc = (0.0, 0.0)
            if kind == PYRAMID and kxy is not None:
                kc = (float(kconf[i, 0]), float(kconf[i, 1])) if kconf is not None else (1.0, 1.0)
                apex = (float(kxy[i, 0, 0]), float(kxy[i, 0, 1])) if kc[0] > KEYPOINT_SEEN else None
                contact = (float(kxy[i, 1, 0]), float(kxy[i, 1, 1])) if kc[1] > KEYPOINT_SEEN else None
            out.append(Detection(kind=kind, box=tuple(xyxy[i]), confidence=min(max(float(conf[i]), 0.0), 1.0),
                                 class_name=self._names[int(cls[i])], colour=colour, size=size, pose=pose,
                                 apex=apex, contact=contact, keypoint_confidence=kc))
        return without_duplicates(out, self.config.duplicate_iou)

    def _with_colours(self, frame: np.ndarray, detections: list[Detection]) -> list[Detection]:
        """Each pyramid whose class names no colour gets the colour classifier's reading."""
        out = list(detections)
        need = [k for k, d in enumerate(out) if d.kind == PYRAMID and d.colour is None]
        if need and self.colour_of is not None:
            crops = [crop_for_colour(frame, out[k].box, DETECTION_CROP_MARGIN) for k in need]
            views = []
            if self.config.white_balance > 0:
                gains = cast_gains(frame)
                views.append([with_gains(crop, gains, self.config.white_balance) for crop in crops])
            found = self.colour_of.classify(crops, *views)
            for k, (colour, score) in zip(need, found):
                out[k] = replace(out[k], colour=colour, colour_confidence=score)
        return out
