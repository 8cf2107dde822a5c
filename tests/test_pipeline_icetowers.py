"""IceTowers on the live pipeline without the table's marker sheet (and with it, once it is laid down).

Frames are rendered from engine states (tests/referee/scripted_games.py: a bare table, hands between
moves); the renders have no marker sheet, which is pasted onto the table's plane where a step asks for
it. The detector is `TruthDetector`, the render's own labels, so every stage after the detector
(board lock, mapper, tracker, referee, journal) is the real one.
"""

from __future__ import annotations

import hashlib
import time
from dataclasses import dataclass, replace

import cv2
import numpy as np

from companion.games import get_game
from companion.pieces import Colour, Size
from companion.pipeline import CameraFeed, PipelineConfig
from companion.recognize import PICTURE_PLANE_NOTE
from companion.records import RecordHeader
from companion.session import SessionHub
from companion.vision.locate import BoardNotFound
from companion.vision.mapper import location_from_truth, truth_detections
from companion.vision.region import shifted
from tests.referee import scripted, scripted_games
from tests.referee.test_games_video import renderer  # noqa: F401 (the fixture, skipping without a GL context)
from tests.test_pipeline import FAST, ListSource, camera_moves, run_to_end

OPTIONS = {"pieces_per_size": 1}  # one piece of each colour and size: every spot is one piece's
START = get_game("icetowers").new_initial_state(2, options=OPTIONS)
SPOTS = scripted_games.icetowers_spots(START)
CAPS = ("P1 cap red-S on yellow-M", "P2 cap yellow-S on red-M", "P1 cap red-L on yellow-L")
# In front of the pieces: from its one marker, 50 mm across and some 40 px in these renders, the
# sheet's plane is too rough far away from it to check the pieces' sizes (200 mm to their left, a
# medium measures as a large).
SHEET_AT_MM = (0.0, -110.0)
SHEET_MARKER_MM = 50.0  # the marker's side, as BoardSpec's default


def with_sheet(image: np.ndarray, truth: dict) -> np.ndarray:
    """`image` with the table sheet (ArUco marker 0 on white paper) lying flat at SHEET_AT_MM."""
    px_per_mm = 10
    side = int(SHEET_MARKER_MM * px_per_mm)
    marker = cv2.aruco.generateImageMarker(cv2.aruco.getPredefinedDictionary(cv2.aruco.DICT_4X4_50), 0, side)
    paper = 10 * px_per_mm
    sheet = cv2.cvtColor(cv2.copyMakeBorder(marker, paper, paper, paper, paper, cv2.BORDER_CONSTANT, value=235),
                         cv2.COLOR_GRAY2BGR)
    half_mm = sheet.shape[0] / px_per_mm / 2
    x, y = SHEET_AT_MM
    # Sheet pixels (right, down) to table millimetres (right, away from the camera), then to the image.
    sheet_to_table = np.array([[1 / px_per_mm, 0, x - half_mm], [0, -1 / px_per_mm, y + half_mm], [0, 0, 1]])
    to_image = location_from_truth(truth).H @ sheet_to_table
    size = (image.shape[1], image.shape[0])
    drawn = cv2.warpPerspective(sheet, to_image, size, flags=cv2.INTER_AREA)
    covered = cv2.warpPerspective(np.full(sheet.shape[:2], 255, np.uint8), to_image, size) > 127
    out = image.copy()
    out[covered] = drawn[covered]
    return out


def with_sleeve(image: np.ndarray, k: int) -> np.ndarray:
    """`image` with a dark sleeve across the middle of the picture, `k` steps along its way: motion
    over the table that no skin test sees (no skin, and clear of the picture's edges)."""
    h, w = image.shape[:2]
    out = image.copy()
    x0, y0 = w // 4 + 30 * k, h // 2 - 30
    cv2.rectangle(out, (x0, y0), (x0 + w // 3, y0 + 45), (30, 30, 35), -1)
    return out


@dataclass(frozen=True)
class Step:
    """What happens between two calm spells: the actions played (none: only the sheet is laid down
    or taken away, or a sleeve passes), whether the sheet lies on the table from then on, and how
    many calm frames follow. A sleeve passes instead of a hand when `sleeve`."""

    actions: tuple[str, ...] = ()
    sheet: bool = False
    calm: int = 6
    sleeve: bool = False


@dataclass
class Film:
    """A scripted game as the camera sees it."""

    frames: list[np.ndarray]
    truths: list[dict]
    hands: set[int]  # the frames with a hand (or a sleeve) in view
    sheet: set[int]  # the frames with the sheet in view
    final: object  # the engine's state after the last step


def film(renderer, steps: list[Step], calm_at_start: int = 5) -> Film:
    """Each step shows a hand over the table for two frames, then the new position for `calm` frames."""
    renders: dict[tuple, tuple[np.ndarray, dict]] = {}

    def frame(state, hand_at, sheet):
        key = (repr(state.to_json()), hand_at)
        if key not in renders:
            image, truth = scripted.render(renderer, scripted_games.icetowers_scene(state, SPOTS, hand_at))
            renders[key] = cv2.cvtColor(image, cv2.COLOR_RGB2BGR), truth  # as a camera gives
        image, truth = renders[key]
        return (with_sheet(image, truth) if sheet else image), truth

    state = START
    hand_path = scripted_games.hand_path(scripted_games.icetowers_scene(state, SPOTS))
    out = Film([], [], set(), set(), state)
    image, truth = frame(state, None, False)
    out.frames += [image] * calm_at_start
    out.truths += [truth] * calm_at_start
    for step in steps:
        for text in step.actions:
            state = state.apply(text)
        start = len(out.frames)
        for k, at in enumerate(hand_path):
            image, truth = frame(state, None, step.sheet) if step.sleeve else frame(state, at, step.sheet)
            if step.sleeve:
                image = with_sleeve(image, k)
            out.hands.add(len(out.frames))
            out.frames.append(image)
            out.truths.append(truth)
        image, truth = frame(state, None, step.sheet)
        out.frames += [image] * step.calm
        out.truths += [truth] * step.calm
        if step.sheet:
            out.sheet.update(range(start, len(out.frames)))
    out.final = state
    return out


def _key(image: np.ndarray) -> bytes:
    return hashlib.blake2b(np.ascontiguousarray(image).tobytes(), digest_size=16).digest()


class TruthDetector:
    """A perfect detector: each filmed frame's labels (or the `detections` given for each frame). The
    pipeline looks at a bare table twice, the whole frame and then a crop round the pieces; a crop is
    found in the frame seen just before it, and gets the detections inside it, in its own pixels."""

    def __init__(self, shot: Film, detections=None):
        self._detections = {}
        self._hands = {_key(shot.frames[i]) for i in shot.hands}
        for k, (image, truth) in enumerate(zip(shot.frames, shot.truths)):
            self._detections.setdefault(_key(image), truth_detections(truth) if detections is None else detections[k])
        self._whole: np.ndarray | None = None
        self.saw_hand = 0

    def __call__(self, image: np.ndarray):
        key = _key(image)
        if key in self._detections:
            self._whole = image
            self.saw_hand += key in self._hands
            return list(self._detections[key])
        x0, y0 = self._crop_origin(image)
        h, w = image.shape[:2]
        return [shifted(d, -x0, -y0) for d in self._detections[_key(self._whole)]
                if x0 <= d.centre[0] < x0 + w and y0 <= d.centre[1] < y0 + h]

    def _crop_origin(self, crop: np.ndarray) -> tuple[int, int]:
        # The renders' sensor noise makes any patch among the pieces unique in the frame.
        h, w = crop.shape[:2]
        py, px = h // 2 - 12, w // 2 - 12
        scores = cv2.matchTemplate(self._whole, np.ascontiguousarray(crop[py:py + 24, px:px + 24]), cv2.TM_SQDIFF)
        (x, y) = cv2.minMaxLoc(scores)[2]
        x0, y0 = x - px, y - py
        assert np.array_equal(self._whole[y0:y0 + h, x0:x0 + w], crop), "the detector was given a picture never filmed"
        return x0, y0


class PacedSource(ListSource):
    """Plays frames as a camera delivers them, `pace` seconds apart, for the frames in `paced`."""

    def __init__(self, frames, pace: float, paced=None):
        super().__init__(frames)
        self.pace, self.paced = pace, set(range(len(frames))) if paced is None else paced

    def read(self):
        if self.position in self.paced:
            time.sleep(self.pace)
        return super().read()


def icetowers_hub(tmp_path) -> SessionHub:
    hub = SessionHub(tmp_path)
    hub.new_game(RecordHeader("icetowers", ("a", "b"), options=OPTIONS))
    return hub


def camera_entries(hub):
    return [e for e in hub.session._journal.entries() if e.kind == "action" and e.source == "camera"]


def notes(hub):
    return [e.detail["message"] for e in hub.session._journal.entries() if e.kind == "note"]


def sheet_missing_notes(hub):
    return [n for n in notes(hub) if "table sheet is not in view" in n]


def test_icetowers_caps_are_refereed_and_journalled_without_the_table_sheet(tmp_path, renderer):
    hub = icetowers_hub(tmp_path)
    shot = film(renderer, [Step((CAPS[0],)), Step(sleeve=True), Step((CAPS[1],)), Step((CAPS[2],))])
    detector = TruthDetector(shot)
    feed = CameraFeed("fake", PipelineConfig(**FAST), detector, lambda: ListSource(shot.frames))
    run_to_end(hub, feed)
    # The third cap hides a large under a large: the history knows it is there.
    assert camera_moves(hub) == list(CAPS)
    assert hub.session.snapshot().state.to_json() == shot.final.to_json()
    assert hub.session.snapshot().verdicts == ()
    # Motion anywhere over the table holds the detector back, not only round the sheet's place.
    assert detector.saw_hand == 0, "the detector ran while a hand or a sleeve was over the table"
    # Said on the page, and once in the journal, though every frame lacked the sheet.
    message = hub.faults()["board"]
    assert "table sheet is not in view (no-markers)" in message
    assert "grouped in the picture" in message and "positions on the table are unknown" in message
    assert len(sheet_missing_notes(hub)) == 1
    for entry in camera_entries(hub):
        seen = entry.observation["camera"]
        assert seen["board"] is None and seen["notes"] == [PICTURE_PLANE_NOTE]
        assert seen["pieces"] and all(p["table_mm"] is None and p["zone"] is None for p in seen["pieces"])
    # Towers bottom to top, grouped in pixels; the last cap's large hides the large under it.
    positions = [e.observation["camera"]["position"] for e in camera_entries(hub)]
    tower_on_yellow, tower_on_red = [["yellow", "M"], ["red", "S"]], [["red", "M"], ["yellow", "S"]]
    assert [sorted(p["towers"]) for p in positions] == [[tower_on_yellow], [tower_on_red, tower_on_yellow],
                                                         [tower_on_red, tower_on_yellow]]
    assert positions[2]["free"] == [["red", "L"]]
    assert hub.frame()[0][:2] == b"\xff\xd8"  # the picture still reached the page
    assert feed.stats.counts["table_in_picture"] == feed.frames
    hub.close()


def test_the_table_sheet_laid_down_later_is_used_and_taken_away_the_picture_takes_over_again(tmp_path, renderer):
    hub = icetowers_hub(tmp_path)
    steps = [Step((CAPS[0],)),
             Step(sheet=True, calm=12),  # laid down: no move, and its plane from now on
             Step((CAPS[1],), sheet=True),
             Step(sheet=False, calm=25),  # taken away: the lock gives it up after a few unsure frames
             Step((CAPS[2],))]
    shot = film(renderer, steps)
    # While the sheet is out of view it is looked for only now and then (SHEET_SEARCH_SHARE of the
    # time): at a camera's pace, the frames it lies in give it time to be seen.
    feed = CameraFeed("fake", PipelineConfig(**FAST), TruthDetector(shot),
                      lambda: PacedSource(shot.frames, 0.04, shot.sheet))
    run_to_end(hub, feed)
    assert camera_moves(hub) == list(CAPS)
    assert hub.session.snapshot().state.to_json() == shot.final.to_json()
    assert hub.session.snapshot().verdicts == ()
    first, second, third = (e.observation["camera"] for e in camera_entries(hub))
    # The sheet's plane: the table's own millimetres, each piece's size checked against it.
    assert second["board"]["kind"] == "table" and second["notes"] == []
    assert all(p["table_mm"] is not None for p in second["pieces"])
    on_table = [np.add(p["table_mm"], SHEET_AT_MM) for p in second["pieces"] if p["level"] in (None, 0)]
    assert all(min(np.hypot(*np.subtract(at, spot)) for spot in SPOTS.values()) < 20 for at in on_table)
    for without_sheet in (first, third):
        assert without_sheet["board"] is None and without_sheet["notes"] == [PICTURE_PLANE_NOTE]
    assert any("table sheet is in view" in n for n in notes(hub))
    assert len(sheet_missing_notes(hub)) == 2  # once before the sheet came, once after it went
    assert "table sheet is not in view" in hub.faults()["board"]
    hub.close()


def test_a_costly_sheet_search_is_not_repeated_on_every_frame(tmp_path):
    """Textured tables make a failed marker search cost tens of milliseconds: without the sheet, it
    runs again only now and then, and the frames between are read in the picture."""
    hub = icetowers_hub(tmp_path)
    frames = [np.full((360, 640, 3), 120, np.uint8)] * 60
    feed = CameraFeed("fake", PipelineConfig(**FAST), lambda image: [], lambda: PacedSource(frames, 0.01))
    searches = []

    def slow_search(*args, **kwargs):
        searches.append(time.perf_counter())
        time.sleep(0.03)
        raise BoardNotFound("no-markers", "marker 0 of the table sheet is not in view")

    feed._game(hub)
    feed._lock.locator.locate = slow_search
    run_to_end(hub, feed)
    assert feed.frames == len(frames)
    assert 2 <= len(searches) < len(frames) / 3
    # Each failed search (30 ms) is followed by ten times as long without one (SHEET_SEARCH_SHARE).
    assert all(b - a >= 0.25 for a, b in zip(searches, searches[1:]))
    assert "table sheet is not in view" in hub.faults()["board"]
    hub.close()


def test_moves_are_read_past_a_stray_piece_on_the_bare_table(tmp_path, renderer):
    """A small from another set lies on the table all game: the first position is a verdict, and every
    move is read from the change since the last agreed position, in which the stray cancels out. (The
    picture cannot say where on a bare table something changed, it has no cells: had it said that
    nothing did, the referee would have taken every cap for no move.)"""
    hub = icetowers_hub(tmp_path)
    shot = film(renderer, [Step((CAPS[0],)), Step((CAPS[1],))])
    red_small = next(d for d in truth_detections(shot.truths[0]) if (d.colour, d.size) == (Colour.RED, Size.SMALL))
    stray = replace(shifted(red_small, 0, 100), colour=Colour.GREEN)  # on the bare table in front
    detections = [truth_detections(truth) + [stray] for truth in shot.truths]
    feed = CameraFeed("fake", PipelineConfig(**FAST), TruthDetector(shot, detections),
                      lambda: ListSource(shot.frames))
    run_to_end(hub, feed)
    assert camera_moves(hub) == list(CAPS[:2])
    (verdict,) = hub.session.snapshot().verdicts
    assert verdict.source == "camera" and "green-S" in verdict.reason
    assert [e.observation["persistent_differences"] for e in camera_entries(hub)] == [["green-S"]] * 2
    hub.close()
