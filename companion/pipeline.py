"""The camera pipeline: frames -> board lock -> motion gate -> detector -> mapper -> tracker -> referee.

`make_feed(spec)` builds a `CameraFeed`, the `FeedSource` that `companion serve --source SPEC`
runs (companion/session.py). Two threads share the work:

- the capture thread reads the source and keeps only the newest frame (a slow stage never
  builds a queue of stale pictures; in lossless mode, for tests and benchmarks, it waits instead);
- the processing thread (the feed runner's own) takes the newest frame and runs: lens correction
  (when a calibration file is given) -> board lock (localised once, then a cheap check per frame,
  localised again when bumped; on a bare table whose marker sheet is out of view, the picture's own
  plane, as `companion recognize` uses, where towers are grouped in pixels) -> the tracker's motion
  gate (no detector while hands move) -> detector and mapper (only on calm frames that differ from
  the last detected one) -> the tracker's stability check -> on a new stable position, the referee
  against the session's current state -> `session.apply` (an exact legal explanation) or
  `session.add_verdict`.

Annotated JPEG frames are pushed to the hub a few times a second for the page.

Faults are survived and said on the page (`hub.report_fault`) and in the journal, and never lose
state: an unplugged camera (SourceError: the runner reconnects with back-off), unreadable or
truncated frames (skipped), a video that ends (the feed ends: manual mode), a frozen picture,
a bumped board (localised again), a bare table's marker sheet out of view (towers grouped in the
picture, said once), a missing or corrupt model (manual mode, the picture still shown), a corrupt
calibration file (used without lens correction).
"""

from __future__ import annotations

import json
import logging
import os
import threading
import time
from collections import defaultdict
from collections.abc import Callable
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Any

import cv2
import numpy as np

from companion.annotate import annotate_frame
from companion.demo_players import DemoPlayers
from companion.games import GameError, IllegalActionError
from companion.games.base import state_key
from companion.journal import JournalFullError
from companion.models import (COLOUR_WEIGHTS, DETECTOR_IMGSZ, DICE_WEIGHTS, SIZE_WEIGHTS, TIP_WEIGHTS,
                              board_model_for_inference, detector_for_inference)
from companion.pieces import Colour
from companion.recognize import is_picture_plane, picture_plane, towers_in_the_picture
from companion.records import read_record
from companion.session import GameSession, SessionError, SessionHub, SourceError
from companion.sources import Frame, FrameSource, open_source
from companion.vision.change import changed_cells, keep_still_pieces_beside_the_board
from companion.vision.calibrate import CalibrationError, Undistorter, load_intrinsics
from companion.vision.detection import Detection
from companion.vision.dice import dice_read_on_board
from companion.vision.locate import BoardLocation, BoardLock, BoardSpec, Locator, LockStatus, board_outline
from companion.vision.region import detect_near_board
from companion.vision.size_reader import sizes_read_on_board
from companion.vision.mapper import Mapper, config_for
from companion.vision.observation import Observation
from companion.vision.tracker import Tracker, TrackerConfig

log = logging.getLogger("companion.pipeline")

DetectFn = Callable[[np.ndarray], list[Detection]]
CONFIG_ENV = "COMPANION_PIPELINE_CONFIG"
REDETECT_WIDTH = 320
BOARD_KINDS = {"icebomb-arena": "chess", "space-arena": "chess", "zamboni-wars": "coasters", "ice-arena": "hex",
               "icetowers": "table"}
DEFAULT_SEAT_COLOURS = tuple(c.value for c in Colour)

# Fault keys shown on the page (one message each; a newer message of the same key replaces it).
FAULT_SOURCE, FAULT_FRAMES, FAULT_FROZEN = "source", "frames", "camera picture"
FAULT_BOARD, FAULT_MODEL, FAULT_CALIBRATION, FAULT_REFEREE = "board", "model", "calibration", "referee"
# While a bare table's marker sheet is out of view, looking for it again takes at most this share of
# the time: a failed search on a 1280x720 frame costs a few ms on a plain table but up to 50 ms on a
# textured one (13 ms for the median synthetic table), too much to repeat on every frame.
SHEET_SEARCH_SHARE = 0.1
# The referee may correct one of this many last actions when only that explains a change (a plan
# piece read a size off at the reveal, shown wrong when it is played): a four-player round of
# Icebomb Arena is four plans and eight actions.
RECENT_ACTIONS = 12


class PipelineConfigError(ValueError):
    """The pipeline's configuration file cannot be read; the message names the file and the field."""


@dataclass(frozen=True)
class PipelineConfig:
    """Settings of the camera pipeline (a JSON file with any of these keys; see docs/pipeline.md).

    Attributes:
        model: the piece detector's weights (size-pose classes).
        colour_model: the colour classifier's weights; None: colours come from the detector's classes.
        size_model: the size classifier's weights (sizes read at the board's scale); None, or a file
            that is not there: sizes come from the detector's classes and the geometric check.
        dice_model: the dice face classifier's weights (a d6's pips, a d8's number); None, or a file
            that is not there: pips are counted and numbers matched against drawn ones.
        tip_model: the tip classifier's weights (a piece's tip taken for a smaller piece stacked on
            it is dropped, companion/vision/tips.py); None, or a file that is not there: not checked.
        board_model: the board model (a whole board's outline in one look), asked when a chessboard's
            own cues do not place it (companion/vision/board_finder.py); None: not used.
        calibration: a camera calibration file (`companion calibrate camera`); None: no lens correction.
        imgsz: the detector's input size.
        threads: CPU threads for inference.
        seat_colours: the colour each seat plays, seat order (default: red, yellow, green, blue, ...).
        a1_hint: the image corner nearest a1 at set-up.
        cell_mm: the board's cell size, when not the standard one.
        stall_seconds: a live camera that delivers nothing this long is taken as unplugged.
        frozen_seconds: a live picture unchanged to the bit this long is reported as frozen...
        frozen_restart_seconds: ...and the camera reopened after this long.
        max_bad_frames: unreadable frames in a row from a live camera before it is reopened.
        fault_hold_seconds: a frame fault stays on the page this long after the last bad frame.
        push_fps: annotated frames pushed to the page per second (each one wakes every viewer).
        preview_width: width of the pushed picture.
        jpeg_quality: its JPEG quality.
        realtime: True: drop frames the pipeline cannot keep up with (a camera); False: process
            every frame (tests, benchmarks).
        redetect_level, redetect_pixels: a calm frame is detected afresh when at least
            `redetect_pixels` pixels of its small grey copy (REDETECT_WIDTH wide, blurred) differ by
            more than `redetect_level` grey levels from the last detected frame's (a piece the size of
            a bead changes a few dozen; sensor noise, after the blur, none).
        tracker: the tracker's thresholds.
    """

    model: Path = field(default_factory=detector_for_inference)
    colour_model: Path | None = COLOUR_WEIGHTS
    size_model: Path | None = SIZE_WEIGHTS
    dice_model: Path | None = DICE_WEIGHTS
    tip_model: Path | None = TIP_WEIGHTS
    board_model: Path | None = field(default_factory=board_model_for_inference)
    calibration: Path | None = None
    imgsz: int = DETECTOR_IMGSZ
    threads: int = 2
    seat_colours: tuple[str, ...] = DEFAULT_SEAT_COLOURS
    a1_hint: str = "bottom-left"
    cell_mm: float | None = None
    stall_seconds: float = 3.0
    frozen_seconds: float = 5.0
    frozen_restart_seconds: float = 20.0
    max_bad_frames: int = 30
    fault_hold_seconds: float = 3.0
    push_fps: float = 5.0
    preview_width: int = 960
    jpeg_quality: int = 70
    realtime: bool = True
    redetect_level: int = 30
    redetect_pixels: int = 4
    tracker: TrackerConfig = field(default_factory=TrackerConfig)

    @classmethod
    def from_json(cls, data: Any, source: str = "pipeline config") -> PipelineConfig:
        """Reads a JSON object of settings, checking each key.

        Raises:
            PipelineConfigError: naming `source` and the bad key.
        """
        if not isinstance(data, dict):
            raise PipelineConfigError(f"{source}: expected a JSON object of settings")
        known = {f.name: f for f in fields(cls)}
        kwargs: dict[str, Any] = {}
        for key, value in data.items():
            if key not in known:
                raise PipelineConfigError(f"{source}: unknown setting {key!r} (known: {', '.join(known)})")
            default = getattr(cls(), key)
            try:
                if key == "tracker":
                    if not isinstance(value, dict):
                        raise TypeError("expected an object")
                    kwargs[key] = TrackerConfig(**value)
                elif key in ("model", "colour_model", "size_model", "dice_model", "tip_model", "board_model",
                             "calibration"):
                    if value is None and key == "model" or value is not None and not isinstance(value, str):
                        raise TypeError("expected a file path")
                    kwargs[key] = None if value is None else Path(value)
                elif key == "seat_colours":
                    kwargs[key] = tuple(Colour.parse(str(v)).value for v in value)
                elif key == "cell_mm":
                    kwargs[key] = None if value is None else float(value)
                elif isinstance(default, bool):
                    if not isinstance(value, bool):
                        raise TypeError("expected true or false")
                    kwargs[key] = value
                elif isinstance(default, (int, float)) and not isinstance(default, bool):
                    if isinstance(value, bool) or not isinstance(value, (int, float)) or value < 0:
                        raise TypeError("expected a non-negative number")
                    kwargs[key] = type(default)(value)
                else:
                    kwargs[key] = str(value)
            except (TypeError, ValueError) as exc:
                raise PipelineConfigError(f"{source}: setting {key!r}: {exc}") from None
        return cls(**kwargs)

    @classmethod
    def load(cls, path: str | Path | None = None) -> PipelineConfig:
        """The settings in `path`, else in $COMPANION_PIPELINE_CONFIG, else the defaults."""
        path = path or os.environ.get(CONFIG_ENV)
        if not path:
            return cls()
        p = Path(path)
        try:
            data = json.loads(p.read_text(encoding="utf-8"))
        except json.JSONDecodeError as exc:
            raise PipelineConfigError(f"{p}: not valid JSON (line {exc.lineno}: {exc.msg})") from None
        return cls.from_json(data, str(p))


def load_detector(config: PipelineConfig) -> tuple[DetectFn, str | None]:
    """The trained detector (with the colour classifier when there is one), and a warning or None.

    Raises:
        ModelError: the detector's weights are missing or cannot be loaded.
    """
    from companion.vision.detect import Detector, DetectorConfig

    warning = None
    colour_of = None
    if config.colour_model is not None:
        try:
            from companion.vision.colour import ColourClassifier

            colour_of = ColourClassifier(config.colour_model, config.threads)
        except Exception as exc:  # missing or corrupt: the detector still finds pieces
            warning = (f"colour model {config.colour_model} unusable ({exc}); colours are not read, "
                       "so every move needs confirming on the page")
    size_of = None
    if config.size_model is not None and Path(config.size_model).exists():
        try:
            from companion.vision.size_reader import SizeClassifier

            size_of = SizeClassifier(config.size_model, config.threads)
        except Exception as exc:  # corrupt: the detector's own sizes still stand
            warning = ((warning + "; ") if warning else "") + (
                f"size model {config.size_model} unusable ({exc}); sizes are the detector's own")
    faces_of = None
    if config.dice_model is not None and Path(config.dice_model).exists():
        try:
            from companion.vision.dice import DiceFaceClassifier

            faces_of = DiceFaceClassifier(config.dice_model, config.threads)
        except Exception as exc:  # corrupt: the dice are still read by counting pips
            warning = ((warning + "; ") if warning else "") + (
                f"dice model {config.dice_model} unusable ({exc}); dice are read by counting pips")
    tips_of = None
    if config.tip_model is not None and Path(config.tip_model).exists():
        try:
            from companion.vision.tips import TipClassifier

            tips_of = TipClassifier(config.tip_model, config.threads)
        except Exception as exc:  # corrupt: tips taken for pieces are then left for the referee to doubt
            warning = ((warning + "; ") if warning else "") + (
                f"tip model {config.tip_model} unusable ({exc}); a piece's tip may be taken for a piece on it")
    detector = Detector(DetectorConfig(weights=config.model, imgsz=config.imgsz, threads=config.threads), colour_of,
                        size_of, faces_of, tips_of)
    return detector, warning


class StageTimes:
    """Milliseconds spent per stage, and counters (for the benchmark and the log)."""

    def __init__(self) -> None:
        self.ms: dict[str, list[float]] = defaultdict(list)
        self.counts: dict[str, int] = defaultdict(int)

    def add(self, stage: str, started: float) -> float:
        now = time.perf_counter()
        self.ms[stage].append(1000 * (now - started))
        return now

    def summary(self) -> dict[str, Any]:
        out: dict[str, Any] = {}
        for stage, values in self.ms.items():
            v = sorted(values)
            out[stage] = {"n": len(v), "mean_ms": round(sum(v) / len(v), 3), "p50_ms": round(v[len(v) // 2], 3),
                          "p95_ms": round(v[min(len(v) - 1, int(len(v) * 0.95))], 3)}
        return {"stages": out, "counts": dict(self.counts)}


class _Capture:
    """The capture thread: reads a source and keeps only its newest frame (or every frame when lossless)."""

    def __init__(self, source: FrameSource, realtime: bool):
        self.source = source
        self.realtime = realtime
        self._cond = threading.Condition()
        self._slot: Frame | None = None
        self._error: SourceError | None = None
        self._ended = False
        self._stop = False
        self.dropped = 0
        self.last_frame_at = time.monotonic()
        self._thread = threading.Thread(target=self._loop, name=f"capture {source.description}", daemon=True)

    def start(self) -> _Capture:
        self._thread.start()
        return self

    def stop(self) -> None:
        with self._cond:
            self._stop = True
            self._cond.notify_all()
        self._thread.join(1.0)  # a camera stuck in its driver is left behind (daemon thread)

    def _loop(self) -> None:
        pace = self.realtime and not self.source.live and self.source.fps > 0
        started = time.monotonic()
        count = 0
        while True:
            try:
                frame = self.source.read()
            except SourceError as exc:
                self._finish(error=exc)
                return
            except Exception as exc:  # a driver's own exception is a failed device too
                self._finish(error=SourceError(f"{self.source.description} failed: {exc!r}"))
                return
            if frame is None:
                self._finish(ended=True)
                return
            if pace:
                # A file plays at its own speed, as a camera would deliver it.
                due = started + count / self.source.fps
                count += 1
                delay = due - time.monotonic()
                if delay > 0:
                    time.sleep(delay)
            with self._cond:
                if not self.realtime:
                    self._cond.wait_for(lambda: self._slot is None or self._stop)
                if self._stop:
                    return
                if self._slot is not None:
                    self.dropped += 1
                self._slot = frame
                self.last_frame_at = time.monotonic()
                self._cond.notify_all()

    def _finish(self, error: SourceError | None = None, ended: bool = False) -> None:
        with self._cond:
            self._error, self._ended = error, ended
            self._cond.notify_all()

    def next(self, timeout: float) -> Frame | None | bool:
        """The newest frame; None when none came within `timeout`; False when the source ended.

        Raises:
            SourceError: the source failed.
        """
        with self._cond:
            self._cond.wait_for(lambda: self._slot is not None or self._error is not None or self._ended, timeout)
            if self._slot is not None:
                frame, self._slot = self._slot, None
                self._cond.notify_all()
                return frame
            if self._error is not None:
                raise self._error
            return False if self._ended else None


# The page names the a1 corner as seen from the camera's side of the table; the locator
# names image corners. The camera stands at the near side, so near is the image's bottom.
A1_HINTS = {"near-left": "bottom-left", "near-right": "bottom-right",
            "far-left": "top-left", "far-right": "top-right"}


@dataclass
class GameContext:
    """What the pipeline needs of the game in play; rebuilt when the page sets up another game."""

    session: GameSession
    spec: BoardSpec
    mapper: Mapper
    adapter: Any  # the referee's adapter, None for a game the camera cannot referee yet
    baseline: Observation | None = None
    """The stable position last seen when the table and the game agreed (the referee reads
    moves from the change since it); valid only while the game's state is `baseline_state`."""
    baseline_state: str | None = None
    baseline_picture: np.ndarray | None = None
    """The frame `baseline` was read from (None after the board moved): where the picture changed
    since then is the referee's second cue when the detector misses a piece."""


class CameraFeed:
    """The camera pipeline as a feed: `run(hub, stop)` until stopped or the source ends.

    Args:
        spec: the source ('webcam:N', 'demo-video', a video file or an image folder).
        config: the pipeline's settings.
        detect: a detector to use instead of loading the model (tests, benchmarks).
        source_factory: makes the frame source (default: `open_source(spec)`), called on every
            (re)connection.
        demo_record: when set, the feed plays this record's game: it sets the game up unless the
            game in play is that game (the bundled demo video shows the sample record).
    """

    def __init__(self, spec: str, config: PipelineConfig | None = None, detect: DetectFn | None = None,
                 source_factory: Callable[[], FrameSource] | None = None, demo_record: Path | None = None):
        self.spec = spec
        self.config = config or PipelineConfig()
        self.description = f"camera feed {spec}"
        self._detect: DetectFn | None = detect
        self._models_tried = detect is not None
        self._source_factory = source_factory or (lambda: open_source(spec))
        self.demo_record = demo_record
        self.demo_players: DemoPlayers | None = None  # only while the demo video plays
        self.stats = StageTimes()
        self.tracker = Tracker(self.config.tracker)
        self._undistort: Undistorter | None = None
        self._lock: BoardLock | None = None
        self._board_model = None  # companion.vision.board_finder.BoardFinder, once loaded
        self._picture: BoardLocation | None = None  # a bare table's stand-in plane while its sheet is out of view
        self._sheet_search_due = 0.0
        self._context: GameContext | None = None
        self._frozen_since: float | None = None
        self._last_thumb: np.ndarray | None = None
        self._bad_in_row = 0
        self._last_bad_at = 0.0
        self._last_push = 0.0
        self._detections: list[Detection] = []
        self._detected_thumb: np.ndarray | None = None
        self._detected_location: BoardLocation | None = None
        self._last_observation: Observation | None = None
        self.frames = 0
        self.last_stable_at: float | None = None
        self.on_stable: Callable[[Observation, float], None] | None = None
        self._hub: SessionHub | None = None

    # --- the feed ---------------------------------------------------------------------------

    def run(self, hub: SessionHub, stop: threading.Event) -> None:
        self._hub = hub
        self._load_models(hub)
        if self.demo_record is not None:
            self._start_demo_game(hub)
        source = self._source_factory()
        source.open()  # SourceError: the runner retries with back-off
        hub.clear_fault(FAULT_SOURCE)
        capture = _Capture(source, self.config.realtime).start()
        # A reconnected camera starts its motion history afresh but keeps the stable position.
        self.tracker.reset(self.tracker.stable)
        self._frozen_since, self._last_thumb = None, None
        try:
            self._loop(hub, stop, capture, source)
        finally:
            capture.stop()
            source.close()

    def _loop(self, hub: SessionHub, stop: threading.Event, capture: _Capture, source: FrameSource) -> None:
        cfg = self.config
        while not stop.is_set():
            t0 = time.perf_counter()
            got = capture.next(0.25)
            if got is False:
                return  # the video ended: the runner says so and the page is in manual mode
            if got is None:
                if source.live and time.monotonic() - capture.last_frame_at > cfg.stall_seconds:
                    raise SourceError(f"no picture for {cfg.stall_seconds:.0f} s (camera unplugged?)")
                continue
            self.stats.add("wait", t0)
            self.process(got, live=source.live)
            if source.live and self._bad_in_row >= cfg.max_bad_frames:
                raise SourceError(f"{self._bad_in_row} unreadable frames in a row; reopening the camera")
            if self._frozen_since is not None and time.monotonic() - self._frozen_since > cfg.frozen_restart_seconds:
                raise SourceError(f"the picture has not changed for {cfg.frozen_restart_seconds:.0f} s; "
                                  "reopening the camera")

    # --- set-up -----------------------------------------------------------------------------

    def _load_models(self, hub: SessionHub) -> None:
        cfg = self.config
        if cfg.calibration is not None and self._undistort is None:
            try:
                self._undistort = Undistorter(load_intrinsics(cfg.calibration))
                hub.clear_fault(FAULT_CALIBRATION)
            except (CalibrationError, OSError) as exc:
                reason = exc if isinstance(exc, CalibrationError) else f"{cfg.calibration}: {exc.strerror or exc}"
                hub.report_fault(FAULT_CALIBRATION, f"{reason}; working without lens correction "
                                 "(cells near the picture's edges may be misread)")
        if self._models_tried:
            return
        self._models_tried = True
        from companion.vision.detect import ModelError

        try:
            self._detect, warning = load_detector(cfg)
        except ModelError as exc:
            self._detect = None
            hub.report_fault(FAULT_MODEL, f"{exc}; the camera picture is shown but moves are not recognised: "
                             "manual mode (choose moves on the page)")
            return
        except Exception as exc:  # ultralytics missing or broken: the same fallback
            self._detect = None
            hub.report_fault(FAULT_MODEL, f"the detector cannot run ({exc!r}); manual mode (choose moves on the page)")
            return
        if cfg.board_model is not None:
            try:
                from companion.vision.board_finder import BoardFinder

                self._board_model = BoardFinder(cfg.board_model)
            except Exception as exc:  # the board's own cues still find it
                warning = ((warning + "; ") if warning else "") + (
                    f"board model {cfg.board_model} unusable ({exc}); boards are found by their own cues only")
        hub.clear_fault(FAULT_MODEL)
        if warning:
            hub.report_fault(FAULT_MODEL, warning)

    def _start_demo_game(self, hub: SessionHub) -> None:
        """The demo video shows its record from the start: a fresh game of it, unless one is in play untouched."""
        header, events = read_record(self.demo_record)
        self.demo_players = DemoPlayers([e.action for e in events], self.stats.counts)
        session = hub.session
        if session is None or session.header != header or session.snapshot().actions:
            hub.new_game(header, {"source": "demo-video"})

    def _game(self, hub: SessionHub) -> GameContext | None:
        """The context of the game in play; rebuilt when another game is set up."""
        session = hub.session
        if session is None:
            return None
        snapshot = session.snapshot()
        # The page may set which corner is a1 at any time; the board spec follows it.
        a1_hint = A1_HINTS.get(snapshot.extra.get("a1_corner"), self.config.a1_hint)
        if (self._context is not None and self._context.session is session
                and self._context.spec.a1_hint == a1_hint):
            return self._context
        header = session.header
        state = snapshot.state
        grid = getattr(state, "grid", None)
        kind = BOARD_KINDS.get(header.game, "chess")
        extra: dict[str, Any] = {"a1_hint": a1_hint}
        if self.config.cell_mm:
            extra["cell_mm"] = self.config.cell_mm
        if kind == "chess" and grid is not None and hasattr(grid, "files"):
            extra["area"] = f"{grid.files}x{grid.ranks}"
        spec = BoardSpec(kind=kind, **extra)
        colours = tuple(Colour.parse(c) for c in (session.snapshot().extra.get("colours")
                                                  or self.config.seat_colours))[:len(header.players)]
        from companion.referee import adapter_for

        try:
            adapter = adapter_for(header.game, colours)
            hub.clear_fault(FAULT_REFEREE)
        except ValueError as exc:
            adapter = None
            hub.report_fault(FAULT_REFEREE, f"{exc}: the camera picture is shown, moves are chosen on the page")
        mapper = Mapper(header.game, config_for(header.game, seats=len(header.players)))
        if self._lock is None or self._lock.locator.spec != spec:
            self._lock = BoardLock(Locator(spec, board_model=self._board_model))
        self._picture, self._sheet_search_due = None, 0.0
        self.tracker.reset(None)
        self._detections, self._detected_thumb, self._last_observation = [], None, None
        self._context = GameContext(session, spec, mapper, adapter)
        return self._context

    # --- one frame ----------------------------------------------------------------------------

    def process(self, frame: Frame, live: bool = False) -> None:
        """Runs every stage on one frame. Never raises for a bad frame: it reports and skips it."""
        hub = self._hub
        assert hub is not None, "run() sets the hub"
        cfg = self.config
        now = time.monotonic()
        if frame.image is None or frame.image.ndim != 3 or frame.image.shape[2] != 3 or min(frame.image.shape[:2]) < 16:
            self._bad_in_row += 1
            self._last_bad_at = now
            self.stats.counts["bad_frames"] += 1
            problem = frame.problem or f"unexpected picture shape {None if frame.image is None else frame.image.shape}"
            hub.report_fault(FAULT_FRAMES, f"frame {frame.name}: {problem}; skipped "
                             f"({self.stats.counts['bad_frames']} so far), the game is unchanged")
            return
        self._bad_in_row = 0
        if now - self._last_bad_at > cfg.fault_hold_seconds:
            hub.clear_fault(FAULT_FRAMES)
        self.frames += 1
        t = time.perf_counter()
        image = self._undistort(frame.image) if self._undistort is not None else frame.image
        if live:
            self._check_frozen(hub, image, now)
        t = self.stats.add("prepare", t)
        context = self._game(hub)
        if context is None:
            self._push(hub, image, None, [], "waiting for a game to be set up on the page", force=False)
            return
        placed_before = self._lock.location
        status = self._lock.update(image) if context.spec.kind != "table" else self._table_plane(context, image)
        t = self.stats.add("locate", t)
        self.stats.counts[f"board_{status.state}"] += 1
        location = status.location
        if location is None:
            # The reason code only: details (brightness figures...) change every frame and each new
            # message is journalled.
            reason = status.error.reason if status.error is not None else "no-board"
            hub.report_fault(FAULT_BOARD, f"board not found ({reason}); point the camera at the whole board")
            self._push(hub, image, None, [], "board not found")
            return
        if status.state == "lost":
            reason = status.error.reason if status.error is not None else "no-board"
            hub.report_fault(FAULT_BOARD, f"the board moved and was not found again ({reason}); "
                             "put it back in view; the game is unchanged")
            self._push(hub, image, location, [], "board lost")
            return
        if status.state in ("found", "moved"):
            if is_picture_plane(location):
                reason = status.error.reason if status.error is not None else "no-markers"
                hub.report_fault(FAULT_BOARD, f"the table sheet is not in view ({reason}): towers are grouped "
                                 "in the picture and scored as usual, but their positions on the table are "
                                 "unknown; lay the sheet flat in view to have them")
            else:
                hub.clear_fault(FAULT_BOARD)
            # Motion matters over the board and the seat zones round it; the stable position is kept.
            self.tracker = Tracker(self.config.tracker, region=_watched_region(location, image.shape),
                                   stable=self.tracker.stable)
            self._detected_thumb = None
            context.baseline_picture = None  # pictures from another board lock do not line up
            if status.state == "moved":
                context.session.note(f"camera: the board moved by {status.shift_px:.0f} px and was located again")
            elif context.spec.kind != "table" and placed_before is not None and location is not placed_before:
                context.session.note("camera: the board was located again on a still view; the first search, "
                                     "less sure, had placed it differently")
        if self._detect is None:
            self._push(hub, image, location, [], "manual mode")
            return
        stable_before, settled_before = self.tracker.stable, self.tracker.settle_count
        change = self.tracker.update(image, lambda: self._observe(image, location, context, frame.name))
        t = self.stats.add("track", t)
        stable = self.tracker.stable
        if (stable is not None and stable is stable_before and self.tracker.settle_count != settled_before
                and context.adapter is not None):
            # The same position settled again after a hand came and went: a move the detector
            # missed may still show in the picture.
            self._judge_picture_only(hub, context, self.tracker.settled, image, location)
            self.stats.add("referee", t)
        if stable is not None and stable is not stable_before:
            self.last_stable_at = time.perf_counter()
            self.stats.counts["stable_positions"] += 1
            if context.adapter is not None:
                self._judge(hub, context, stable, change, image, location)
            self.stats.add("referee", t)
            if self.on_stable is not None:
                self.on_stable(stable, self.last_stable_at)
            self._push(hub, image, location, self._detections, self._status_text(), force=True)
            return
        self._push(hub, image, location,
                   self._detections if self.tracker.status.state not in ("motion", "hand") else [],
                   self._status_text())

    def _table_plane(self, context: GameContext, image: np.ndarray) -> LockStatus:
        """The board lock's status on a bare table; while its marker sheet is out of view, the
        picture's own plane ('found' when it takes over, then 'locked'), and the sheet looked for
        again now and then (SHEET_SEARCH_SHARE), to be used from the first frame it is seen in."""
        h, w = image.shape[:2]
        now = time.perf_counter()
        if self._picture is not None and self._picture.image_size == (w, h) and now < self._sheet_search_due:
            self.stats.counts["table_in_picture"] += 1
            return LockStatus("locked", self._picture)
        status = self._lock.update(image)
        if status.state != "lost":
            if self._picture is not None:
                context.session.note("camera: the table sheet is in view; positions on the table are read from it")
                self._picture = None
            return status
        self.stats.counts["sheet_searches_failed"] += 1
        self.stats.counts["table_in_picture"] += 1
        # The sheet's last place is no reference any more: when it is seen again, it is found afresh.
        self._lock = BoardLock(self._lock.locator)
        self._sheet_search_due = now + status.elapsed_ms / 1000 / SHEET_SEARCH_SHARE
        if self._picture is not None and self._picture.image_size == (w, h):
            return LockStatus("locked", self._picture, error=status.error)
        self._picture = picture_plane(image.shape)
        return LockStatus("found", self._picture, error=status.error)

    def _observe(self, image: np.ndarray, location: BoardLocation, context: GameContext, name: str) -> Observation:
        """Detector and mapper, skipped when the picture is the one last detected (a still table)."""
        thumb = _thumbnail(image, REDETECT_WIDTH)
        if (self._last_observation is not None and self._detected_thumb is not None
                and self._detected_location is location and thumb.shape == self._detected_thumb.shape
                and int(np.count_nonzero(cv2.absdiff(thumb, self._detected_thumb) > self.config.redetect_level))
                < self.config.redetect_pixels):
            self.stats.counts["detector_skipped"] += 1
            return self._last_observation
        t = time.perf_counter()
        try:
            detections = detect_near_board(self._detect, image, board_outline(location),
                                           seat_zones=context.mapper.config.seats > 0)
        except Exception as exc:  # one failed inference must not stop the feed
            log.exception("detector failed on %s", name)
            self._hub.report_fault(FAULT_MODEL, f"the detector failed on {name} ({exc!r}); frame skipped")
            detections = []
        t = self.stats.add("detect", t)
        self.stats.counts["detector_runs"] += 1
        if is_picture_plane(location):
            observation = towers_in_the_picture(context.mapper, detections, location, name)
        else:
            detections = sizes_read_on_board(self._detect, image, detections, location.H)
            detections = dice_read_on_board(self._detect, image, detections, location.H)
            observation = context.mapper.map(detections, location, name)
        self.stats.add("map", t)
        self._detections = detections
        self._detected_thumb = thumb
        self._detected_location = location
        self._last_observation = observation
        return observation

    def _check_frozen(self, hub: SessionHub, image: np.ndarray, now: float) -> None:
        # A real sensor never repeats a picture to the bit; a hung driver does.
        thumb = image[::16, ::16]
        if self._last_thumb is not None and thumb.shape == self._last_thumb.shape and np.array_equal(thumb, self._last_thumb):
            if self._frozen_since is None:
                self._frozen_since = now
            elif now - self._frozen_since > self.config.frozen_seconds:
                hub.report_fault(FAULT_FROZEN, f"the camera's picture has not changed for "
                                 f"{self.config.frozen_seconds:.0f} s (frozen camera or driver); waiting for it")
        else:
            if self._frozen_since is not None:
                hub.clear_fault(FAULT_FROZEN)
            self._frozen_since = None
        self._last_thumb = thumb.copy()

    # --- the referee --------------------------------------------------------------------------

    def _judge(self, hub: SessionHub, context: GameContext, observation: Observation, change,
               image: np.ndarray, location: BoardLocation) -> None:
        """Explains a new stable position by legal actions, or records a verdict; never raises."""
        from companion.referee import Referee

        session = context.session
        if self.demo_players is not None:
            self.demo_players.enter_unseen_moves(context)
        record: dict[str, Any] = {"camera": observation.to_json()}
        for attempt in range(2):  # the page may move the game on while we judge: judge again once
            snapshot = session.snapshot()
            state = snapshot.state
            recent = tuple(zip(snapshot.states[:-1], snapshot.actions))[-RECENT_ACTIONS:]
            # What the referee expected to see, for the page's expected-vs-seen diagrams.
            record["expected"] = sorted(context.adapter.expected(state).elements())
            key = state_key(state)
            baseline = context.baseline if context.baseline_state == key else None
            changed = self._changed_cells(context, image, location, observation) if baseline is not None else None
            judged = self._still_beside_the_board(context, observation, baseline, image)
            record["camera"] = judged.to_json()
            verdict = Referee(context.adapter, state).judge(judged, baseline, changed, recent)
            if baseline is None:
                # No position agreed with this state yet (the camera just started, or the page
                # changed the game): the first one seen becomes the baseline, and any difference
                # it shows is still reported below.
                context.baseline, context.baseline_state, context.baseline_picture = observation, key, image
            try:
                if verdict.accepted:
                    if verdict.revision is not None:
                        corrected = snapshot.log[len(snapshot.log) - verdict.revision.back]
                        record["corrected"] = {"was": str(verdict.revision.action),
                                               "now": str(verdict.revision.replacement)}
                        session.correct(corrected.seq, str(verdict.revision.replacement), source="camera")
                        self.stats.counts["actions_corrected"] += 1
                    self._accept(context, verdict, judged, image, record)
                    return
                seen = str(change) if change is not None else "the table when the camera started"
                fixes = verdict.fixes()
                kind = "misread" if verdict.text.startswith("ambiguous") or observation.unsure else "illegal"
                verdict_id = session.add_verdict(kind, seen, verdict.text, fixes, source="camera",
                                                 observation=record, supersede=True)
                self.stats.counts["verdicts"] += 1
                self.stats.counts[f"verdicts_{kind}"] += 1
                if self.demo_players is not None:
                    self.demo_players.answer_verdict(context, verdict_id, fixes, judged, image)
                return
            except IllegalActionError:
                if attempt:
                    log.info("camera move no longer legal after a change on the page")
            except JournalFullError:
                return  # the session shows the error; the game is unchanged
            except (GameError, SessionError) as exc:
                log.warning("camera verdict could not be recorded: %s", exc)
                return

    def _judge_picture_only(self, hub: SessionHub, context: GameContext, observation: Observation | None,
                            image: np.ndarray, location: BoardLocation) -> None:
        """Applies a move read from the picture's change alone; records nothing otherwise (the
        detector's position did not change, so there is no new verdict to give)."""
        from companion.referee import Referee

        state = context.session.snapshot().state
        key = state_key(state)
        if observation is None or context.baseline is None or context.baseline_state != key:
            return
        changed = self._changed_cells(context, image, location, observation)
        if not changed:
            return
        observation = self._still_beside_the_board(context, observation, context.baseline, image)
        verdict = Referee(context.adapter, state).judge(observation, context.baseline, changed)
        if not (verdict.accepted and verdict.from_picture):
            return
        record: dict[str, Any] = {"camera": observation.to_json(), "expected": sorted(context.adapter.expected(state).elements())}
        try:
            self._accept(context, verdict, observation, image, record)
        except JournalFullError:
            return
        except (GameError, SessionError) as exc:  # the page moved the game on meanwhile
            log.info("picture move not applied: %s", exc)

    def _accept(self, context: GameContext, verdict, observation: Observation, image: np.ndarray,
                record: dict[str, Any]) -> None:
        """Applies an accepted verdict's actions (raising as `GameSession.apply` does) and makes the
        position, and its frame, the new baseline."""
        if verdict.by_change:
            record["persistent_differences"] = list(verdict.persistent)
        if verdict.from_picture:
            record["picture_changed_cells"] = list(verdict.from_picture)
        if verdict.doubts:
            from companion.referee.core import doubt_texts

            # The page shows what the move rests on that the camera was unsure of, and why.
            record["doubts"] = doubt_texts(context.adapter, verdict.doubts, observation)
        for action in verdict.actions:
            context.session.apply(str(action), source="camera", observation=record)
            self.stats.counts["actions_applied"] += 1
            self.stats.counts["actions_from_picture"] += bool(verdict.from_picture)
        context.baseline, context.baseline_state = observation, state_key(verdict.state)
        context.baseline_picture = image
        if self.demo_players is not None:
            self.demo_players.correct_camera_moves(context)

    @staticmethod
    def _still_beside_the_board(context: GameContext, observation: Observation, baseline: Observation | None,
                                image: np.ndarray) -> Observation:
        """The observation with the pieces beside the board whose picture did not change since the
        baseline's frame read as then (`keep_still_pieces_beside_the_board`)."""
        before = context.baseline_picture
        if baseline is None or before is None or before.shape != image.shape:
            return observation
        return keep_still_pieces_beside_the_board(observation, baseline, before, image)

    def _changed_cells(self, context: GameContext, image: np.ndarray, location: BoardLocation,
                       observation: Observation | None) -> frozenset[str] | None:
        """The cells whose picture changed since the baseline's frame (None when it cannot be told);
        the pieces seen in both frames help tell apart changes the picture joins."""
        before = context.baseline_picture
        # A bare table has no cells: the picture cannot tell where on it something changed (an
        # empty set would say nothing did, and the referee would take a move seen past a misread,
        # a stray piece say, for no move).
        if before is None or before.shape != image.shape or location.spec.kind == "table":
            return None
        try:
            return changed_cells(before, image, location, lambda mm: context.mapper.cell_of(location.spec, mm)[0],
                                 pieces_before=context.baseline.pieces if context.baseline is not None else (),
                                 pieces_after=observation.pieces if observation is not None else ())
        except (ValueError, cv2.error):
            log.exception("picture change not read")
            return None

    # --- the picture for the page ---------------------------------------------------------------

    def _status_text(self) -> str:
        st = self.tracker.status
        return f"{st.state}  motion {st.motion:.1f}  calm {st.calm}  frame {self.frames}"

    def _push(self, hub: SessionHub, image: np.ndarray, location: BoardLocation | None,
              detections: list[Detection], status: str, force: bool = False) -> None:
        now = time.monotonic()
        if not force and self.config.push_fps > 0 and now - self._last_push < 1.0 / self.config.push_fps:
            return
        self._last_push = now
        t = time.perf_counter()
        if location is not None and is_picture_plane(location):
            location = None  # no board to draw: its outline would be a marker's square at the picture's corner
        picture = annotate_frame(image, location, detections, status)
        h, w = picture.shape[:2]
        if w > self.config.preview_width:
            picture = cv2.resize(picture, (self.config.preview_width, round(h * self.config.preview_width / w)),
                                 interpolation=cv2.INTER_AREA)
        t = self.stats.add("annotate", t)
        ok, jpeg = cv2.imencode(".jpg", picture, [cv2.IMWRITE_JPEG_QUALITY, self.config.jpeg_quality])
        t = self.stats.add("encode", t)
        if ok:
            hub.push_frame(jpeg.tobytes())
            self.stats.add("push", t)


def _thumbnail(image: np.ndarray, width: int) -> np.ndarray:
    h, w = image.shape[:2]
    grey = cv2.cvtColor(image, cv2.COLOR_BGR2GRAY)
    small = cv2.resize(grey, (width, max(1, round(h * width / w))), interpolation=cv2.INTER_AREA)
    return cv2.GaussianBlur(small, (3, 3), 0)


def _watched_region(location: BoardLocation, shape: tuple[int, ...]) -> np.ndarray | None:
    """The board and a margin round it (the seat zones, where plans are laid out), in image pixels;
    None (the whole picture) on a bare table, whose pieces stand anywhere, not round its marker sheet."""
    if location.spec.kind == "table":
        return None
    corners = location.board_to_image(location.spec.outline())
    centre = corners.mean(axis=0)
    region = centre + (corners - centre) * 1.6
    h, w = shape[:2]
    return np.clip(region, [0, 0], [w - 1, h - 1])


def make_feed(spec: str, config: PipelineConfig | None = None, detect: DetectFn | None = None) -> CameraFeed:
    """The camera pipeline for a `--source` value, as a feed for `companion serve`.

    `spec` is 'webcam:N', 'demo-video' (the bundled demo, which plays the sample Icebomb Arena
    game), a video file or a folder of images. Settings come from `config`, else the file named
    by $COMPANION_PIPELINE_CONFIG, else the defaults (models/pieces.pt, models/colours.pt).

    Raises:
        FileNotFoundError: no such file or folder (or no bundled demo in this build).
        ValueError: a spec that names no source, or a bad settings file.
    """
    from companion.cli import sample_record_path

    config = config or PipelineConfig.load()
    open_source(spec)  # checks the spec now; each (re)connection opens a fresh reader
    demo = sample_record_path() if spec == "demo-video" else None
    return CameraFeed(spec, config, detect, lambda: open_source(spec), demo)


__all__ = ["CameraFeed", "PipelineConfig", "PipelineConfigError", "StageTimes", "load_detector", "make_feed"]
