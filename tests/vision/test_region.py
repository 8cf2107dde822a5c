"""Looking closer: the board's region, and detections moved back into whole-frame pixels."""

from __future__ import annotations

import numpy as np
import pytest

from companion.vision.detection import Detection
from companion.vision.region import (Region, board_region, detect_in_region, detect_near_board, detect_zoomed,
                                     region_around)


def test_the_board_region_grows_the_outline_by_the_margin_and_stays_in_the_frame():
    outline = np.array([[100, 100], [300, 100], [300, 250], [100, 250]])
    region = board_region(outline, (480, 640), margin=0.1)
    assert (region.x0, region.y0, region.x1, region.y1) == (80, 80, 320, 270)
    clipped = board_region(outline + [400, 300], (480, 640), margin=0.5)
    assert (clipped.x1, clipped.y1) == (640, 480)
    assert region_around(np.array([[np.nan, 1.0]]), (480, 640), 0.1) is None


def test_an_empty_region_is_refused():
    with pytest.raises(ValueError):
        Region(5, 5, 5, 9)


class _Recorder:
    """A stand-in detector: one piece wherever the bright pixel is, in the image it is given."""

    def __init__(self):
        self.shapes = []

    def __call__(self, frame):
        self.shapes.append(frame.shape[:2])
        ys, xs = np.nonzero(frame[:, :, 0] > 200)
        return [Detection(kind="pyramid", box=(float(x) - 3, float(y) - 3, float(x) + 3, float(y) + 3), confidence=0.9,
                          class_name="L-upright", apex=(float(x), float(y) - 3), contact=(float(x), float(y) + 3))
                for x, y in zip(xs, ys)]


def test_detections_in_a_region_come_back_in_whole_frame_pixels():
    frame = np.zeros((480, 640, 3), np.uint8)
    frame[300, 400] = 255
    detect = _Recorder()
    found = detect_in_region(detect, frame, Region(350, 250, 500, 400))
    assert detect.shapes == [(150, 150)]
    assert found[0].box == (397.0, 297.0, 403.0, 303.0)
    assert found[0].apex == (400.0, 297.0) and found[0].contact == (400.0, 303.0)
    assert detect_in_region(detect, frame, None)[0].box == found[0].box


def test_a_bare_table_is_looked_at_twice_only_when_the_pieces_fill_little_of_it():
    frame = np.zeros((480, 640, 3), np.uint8)
    frame[200, 300] = frame[220, 330] = 255
    detect = _Recorder()
    found = detect_zoomed(detect, frame)
    assert len(detect.shapes) == 2 and detect.shapes[1][0] < 200
    assert sorted(d.box for d in found) == sorted(d.box for d in detect_in_region(detect, frame, None))
    spread = np.zeros((480, 640, 3), np.uint8)
    spread[10, 10] = spread[470, 630] = 255
    detect = _Recorder()
    detect_zoomed(detect, spread)
    assert len(detect.shapes) == 1


class _CloseRecorder(_Recorder):
    """A stand-in detector with a close look, recording which look saw which image."""

    def __init__(self, half_side: int = 3):
        super().__init__()
        self.looks = []
        self.half_side = half_side

    def __call__(self, frame):
        self.looks.append("plain")
        return self._found(frame)

    def closely(self, frame):
        self.looks.append("close")
        return self._found(frame)

    def _found(self, frame):
        self.shapes.append(frame.shape[:2])
        ys, xs = np.nonzero(frame[:, :, 0] > 200)
        k = self.half_side
        return [Detection(kind="pyramid", box=(float(x) - k, float(y) - k, float(x) + k, float(y) + k),
                          confidence=0.9, class_name="L-upright") for x, y in zip(xs, ys)]


def test_a_board_region_is_looked_at_closely_when_the_detector_can():
    frame = np.zeros((480, 640, 3), np.uint8)
    frame[200, 300] = 255
    outline = np.array([[200, 150], [400, 150], [400, 300], [200, 300]])
    detect = _CloseRecorder()
    found = detect_near_board(detect, frame, outline)
    assert detect.looks == ["close"] and found[0].box == (297.0, 197.0, 303.0, 203.0)
    plain = _Recorder()  # a plain function has no close look: it is used as it is
    assert detect_near_board(plain, frame, outline)[0].box == found[0].box


def test_a_bare_table_is_looked_at_again_closely_only_when_its_pieces_are_small():
    frame = np.zeros((480, 640, 3), np.uint8)
    frame[100, 100] = frame[380, 540] = 255  # spread out: no zoom for the region's sake
    small = _CloseRecorder(half_side=3)
    detect_zoomed(small, frame)
    assert small.looks == ["plain", "close"]
    big = _CloseRecorder(half_side=60)  # pieces a fifth of the region: a close-up
    detect_zoomed(big, frame)
    assert big.looks == ["plain"]


def test_seat_zones_are_looked_at_beyond_the_board_region_without_counting_a_piece_twice():
    frame = np.zeros((480, 640, 3), np.uint8)
    outline = np.array([[250, 150], [390, 150], [390, 290], [250, 290]])
    frame[220, 320] = 255  # on the board
    frame[286, 388] = 255  # near its edge: inside the board's region too
    frame[360, 320] = 255  # a plan piece in front of the south seat, beyond the board's region
    detect = _Recorder()
    board_only = detect_near_board(detect, frame, outline)
    assert sorted(d.centre for d in board_only) == [(320.0, 220.0), (388.0, 286.0)]
    detect.shapes.clear()
    with_zones = detect_near_board(detect, frame, outline, seat_zones=True)
    assert len(detect.shapes) == 2 and detect.shapes[1][0] > detect.shapes[0][0]  # a second, wider look
    assert sorted(d.centre for d in with_zones) == [(320.0, 220.0), (320.0, 360.0), (388.0, 286.0)]
