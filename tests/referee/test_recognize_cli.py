"""`companion recognize` on a rendered test image: the real board locator, saved detections."""

from __future__ import annotations

import json

import cv2
import pytest

from companion.cli import main
from companion.vision.mapper import truth_detections
from tests.referee import scripted
from tests.referee.test_icebomb_video import MOVES, _start, renderer  # noqa: F401  (the fixture)


def test_recognize_prints_the_expected_observation(renderer, tmp_path, capsys):  # noqa: F811
    state = _start()
    for action in MOVES[0]:
        state = state.apply(action)
    scene = scripted.scene_of(state)
    scene.camera = scripted.camera(640, 480)
    image, truth = scripted.render(renderer, scene)
    path = tmp_path / "table.png"
    cv2.imwrite(str(path), cv2.cvtColor(image, cv2.COLOR_RGB2BGR))
    detections = tmp_path / "detections.json"
    detections.write_text(json.dumps([d.to_json() for d in truth_detections(truth)]))
    annotated = tmp_path / "annotated.png"
    code = main(["recognize", str(path), "--game", "icebomb-arena", "--json", "--seats", "4",
                 "--detections", str(detections), "--annotate", str(annotated)])
    data = json.loads(capsys.readouterr().out)
    assert code == 0 and data["image"] == str(path)
    assert data["board"]["kind"] == "chess" and len(data["board"]["corners"]) == 4
    for (x, y), (tx, ty) in zip(data["board"]["corners"], truth["board"]["corners_px"]):
        assert abs(x - tx) < 3 and abs(y - ty) < 3
    assert data["position"]["cells"] == {"b2": ["pawn"], "b4": ["bead"], "b7": ["pawn"], "e4": ["green-M U"],
                                         "g2": ["pawn"], "g7": ["pawn"]}
    assert data["position"]["zones"]["P2"] == ["yellow-L W", "yellow-S N"]
    assert annotated.exists()
    code = main(["recognize", str(path), str(path), "--game", "icebomb-arena", "--json",
                 "--detections", str(detections)])
    both = json.loads(capsys.readouterr().out)
    assert isinstance(both, list) and len(both) == 2


def test_recognize_without_a_model_is_a_clean_error(tmp_path, capsys):
    path = tmp_path / "x.png"
    cv2.imwrite(str(path), (255 * __import__("numpy").ones((20, 20, 3))).astype("uint8"))
    code = main(["recognize", str(path), "--game", "icetowers", "--model", str(tmp_path / "none.pt")])
    assert code == 2 and "does not exist" in capsys.readouterr().err


def test_the_recogniser_shows_the_detector_the_board_region_and_maps_back_to_frame_pixels(renderer):  # noqa: F811
    import numpy as np

    from companion.recognize import Recognizer
    from companion.vision.locate import BoardSpec
    from companion.vision.region import shifted

    scene = scripted.scene_of(_start())
    scene.camera = scripted.camera(640, 480)
    image, truth = scripted.render(renderer, scene)
    frame = cv2.cvtColor(image, cv2.COLOR_RGB2BGR)
    whole = truth_detections(truth)
    crops = []

    def detect(crop):
        # A stand-in that finds where the crop was cut from (its corner patch, matched exactly)
        # and returns the true pieces wholly inside it, in the crop's own pixels.
        scores = cv2.matchTemplate(frame, np.ascontiguousarray(crop[:24, :24]), cv2.TM_SQDIFF)
        x0, y0 = cv2.minMaxLoc(scores)[2]
        crops.append((x0, y0, crop.shape[1], crop.shape[0]))
        moved = [shifted(d, -x0, -y0) for d in whole]
        return [d for d in moved if d.box[0] >= 0 and d.box[1] >= 0 and d.box[2] <= crop.shape[1]
                and d.box[3] <= crop.shape[0]]

    observation = Recognizer("icebomb-arena", detect, BoardSpec("chess")).observe(frame)
    assert len(crops) == 1
    x0, y0, w, h = crops[0]
    assert w * h < 0.8 * frame.shape[0] * frame.shape[1]  # a closer look than the whole frame
    board = np.array(truth["board"]["corners_px"])
    assert board[:, 0].min() > x0 and board[:, 0].max() < x0 + w and board[:, 1].min() > y0 and board[:, 1].max() < y0 + h
    inside = [d for d in whole if d.box[0] >= x0 and d.box[1] >= y0 and d.box[2] <= x0 + w and d.box[3] <= y0 + h]
    found = [p.box for p in observation.pieces]
    assert inside and len(found) == len(inside)
    assert all(any(np.allclose(d.box, b) for b in found) for d in inside)  # back in whole-frame pixels


@pytest.mark.parametrize("seed", range(4))
def test_without_the_table_sheet_icetowers_towers_are_grouped_in_the_picture_alone(seed):
    import numpy as np

    from companion.recognize import Recognizer, board_spec_for
    from companion.synth.labels import sidecar
    from companion.synth.scenes import sample_scene
    from companion.vision.mapper import Mapper, config_for, location_from_truth
    from companion.vision.observation import icetowers_position

    truth = sidecar(sample_scene("icetowers", seed, 640, 480), None)
    detections = truth_detections(truth)
    blank = np.full((480, 640, 3), 128, np.uint8)  # no marker sheet in view
    seen = Recognizer("icetowers", lambda frame: detections, board_spec_for("icetowers"),
                      look_closer=False).observe(blank, "table.png")
    assert seen.board is None and any("marker" in note for note in seen.notes)
    assert all(p.table_mm is None for p in seen.pieces)
    # The same towers as the mapper finds knowing the table's plane: stacking is read from pixels.
    with_plane = Mapper("icetowers", config_for("icetowers")).map(detections, location_from_truth(truth))
    assert icetowers_position(seen) == icetowers_position(with_plane)
    assert icetowers_position(seen)["towers"]


def test_an_unreadable_image_in_a_batch_is_named_with_its_reason_and_the_others_are_recognised(tmp_path, capsys):
    import numpy as np

    good = tmp_path / "good.png"
    cv2.imwrite(str(good), np.full((60, 80, 3), 200, np.uint8))
    text = tmp_path / "notes.jpg"
    text.write_text("not a picture")
    ok, jpeg = cv2.imencode(".jpg", np.full((60, 80, 3), 90, np.uint8))
    cut = tmp_path / "cut.jpg"
    cut.write_bytes(jpeg.tobytes()[:-200])  # a copy that stopped half-way
    missing = tmp_path / "missing.jpg"
    detections = tmp_path / "none.json"
    detections.write_text("[]")
    images = [str(good), str(text), str(cut), str(missing), str(good)]
    code = main(["recognize", *images, "--game", "icetowers", "--json", "--detections", str(detections)])
    out, err = capsys.readouterr()
    data = json.loads(out)
    assert code == 2
    assert [d["image"] for d in data] == images
    assert "pieces" in data[0] and "pieces" in data[4]
    assert data[1]["error"] == "not a readable image"
    assert "truncated" in data[2]["error"]
    assert "no such file" in data[3]["error"]
    assert all(name in err for name in images[1:4])
    code = main(["recognize", str(missing), "--game", "icetowers", "--detections", str(detections)])
    assert code == 2 and "cannot be read (no such file" in capsys.readouterr().out


@pytest.mark.parametrize("game", ["ice-arena", "space-arena", "zamboni-wars"])
def test_without_its_board_a_games_stacks_and_nests_are_still_grouped_but_nothing_is_placed(game):
    import numpy as np

    from companion.recognize import Recognizer, board_spec_for
    from companion.synth.labels import sidecar
    from companion.synth.scenes import sample_scene
    from companion.vision.mapper import Mapper, config_for, location_from_truth

    grouped = 0
    for seed in range(3):
        truth = sidecar(sample_scene(game, seed, 640, 480), None)
        detections = truth_detections(truth)
        blank = np.full((480, 640, 3), 128, np.uint8)  # no board in view
        seen = Recognizer(game, lambda frame: detections, board_spec_for(game), look_closer=False).observe(blank)
        assert seen.board is None and seen.unsure and seen.notes
        assert all(p.cell is None and p.zone is None and p.direction is None and p.table_mm is None
                   and "board not found" in p.unsure for p in seen.pieces)
        # The same stacks and nests, bottom to top, as the mapper finds on the located board.
        on_board = Mapper(game, config_for(game)).map(detections, location_from_truth(truth))
        assert [[p.box for p in s] for s in seen.stacks()] == [[p.box for p in s] for s in on_board.stacks()]
        grouped += len(seen.stacks())
    assert grouped > 0
