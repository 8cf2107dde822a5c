"""The bundled demo video, refereed by the shipped detector end to end: the camera's moves must be
the sample record's, in order (the record is what the rendered players did)."""

from __future__ import annotations

import json
import threading

import pytest

from companion import models
from companion.pipeline import CameraFeed, PipelineConfig, load_detector
from companion.records import agreeing_prefix
from companion.session import SessionHub
from companion.sources import open_source
from tests.test_pipeline import SAMPLE, ListSource

pytestmark = pytest.mark.skipif(not models.DETECTOR_WEIGHTS.exists(), reason="models/pieces.pt is not in this tree")

# The demo's frames through the first round's actions: bombs (those on a6 and g6, clear glass on
# white squares, are not found by the detector: the picture's change reads them), entries, the
# first reveal of plans (its sizes need the board's geometry) and the moves and block that follow.
FRAMES = 240
# Measured with session 7's detector: all 24 camera moves of those frames, in the record's order.
AT_LEAST_RIGHT = 24
# Through the seventh round's reveal (frame 760), measured with session 18's detector in session 19:
# 92 actions (the four bids entered from the record, five plans corrected and one verdict answered by
# the demo's players); session 14's detector gave 92 too (one fix clicked, two reveals revised).
MANY_FRAMES = 760
AT_LEAST_RIGHT_MANY = 90


def _refereed(tmp_path, frame_count: int):
    """The camera's log (source, text, what a correction replaced) over the demo's first `frame_count`
    frames, the record's actions and the feed's counts."""
    source = open_source("demo-video")
    source.open()
    frames = []
    while len(frames) < frame_count and (frame := source.read()) is not None:
        if frame.image is not None:
            frames.append(frame.image)
    source.close()
    config = PipelineConfig(realtime=False, model=models.detector_for_inference())
    detect, _ = load_detector(config)
    hub = SessionHub(tmp_path)
    lines = SAMPLE.read_text().splitlines()
    hub.import_record(lines[:1])
    feed = CameraFeed("demo", config, detect, lambda: ListSource(frames), demo_record=SAMPLE)
    feed.run(hub, threading.Event())
    played = [a for line in lines[1:] if (a := json.loads(line).get("action"))]
    log = [(item.source, item.text, item.corrected_from) for item in hub.session.snapshot().log]
    hub.close()
    return log, played, feed.stats.counts


def test_the_demo_s_first_moves_are_the_record_s_and_none_is_wrong(tmp_path):
    log, played, counts = _refereed(tmp_path, FRAMES)
    camera = [i for i, (source, _, _) in enumerate(log) if source == "camera"]
    # Nothing off the record; the plans of one reveal are applied seat by seat, in any order.
    assert agreeing_prefix([text for _, text, _ in log], played, together=lambda a: " plan " in a) == len(log), log
    assert len(camera) >= AT_LEAST_RIGHT
    # a6 and g6 read from the picture's change where the detector misses a glass bomb: which it finds
    # depends on the copy and the processor's arithmetic (session 30's float copy found neither, the
    # INT8 copy one of them); the log stays the record's either way.
    assert counts["actions_from_picture"] >= 1


def test_plans_misread_at_their_reveal_are_corrected_and_the_game_stays_the_record_s(tmp_path):
    """Through the seventh round's reveal: plans read wrong at their reveals (a piece read a size off,
    a small pointing north as upright) are corrected, by the referee when the moves made with them show
    another reading (`Referee` revisions) or by the demo's players on the page's log, as players at the
    table would; the game's log stays the record's, and what the camera read is kept where it was corrected."""
    log, played, counts = _refereed(tmp_path, MANY_FRAMES)
    assert len(log) >= AT_LEAST_RIGHT_MANY
    assert agreeing_prefix([text for _, text, _ in log], played, together=lambda a: " plan " in a) == len(log), log
    corrected = [(text, was) for _, text, was in log if was is not None]
    # How many plans are misread depends on the copy and the processor's arithmetic (1 through this
    # frame with the float copy on session 31's machine, 2 or more elsewhere): at least one, each
    # correction counted by the feed.
    assert corrected and all(" plan " in was and text != was for text, was in corrected), corrected
    assert counts["actions_corrected"] + counts["demo_corrections"] >= len(corrected)
    # Every verdict is answered by the demo's players with what they played (a fix clicked or the moves
    # typed in: tests/test_pipeline.py), as players at the table would. With session 19's weights the
    # unfound bead on a6 raised one at frame 531; session 22's raise none this far.
    assert counts["demo_fixes"] + counts["demo_entries"] == counts["verdicts"], counts
