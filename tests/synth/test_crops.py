"""Crops of full renders keep their truth exact: the moved camera still projects every point."""

from __future__ import annotations

import json

import cv2
import numpy as np
import pytest

from companion.synth.crops import choose_region, crop_truth, make_crop_dataset
from companion.synth.labels import sidecar, yolo_lines
from companion.synth.scenes import GAMES, sample_scene
from companion.vision.classes import get_scheme
from companion.vision.region import Region
from tests.synth.test_synth import _independent_projection as _project


@pytest.mark.parametrize("game", GAMES)
def test_a_cropped_sidecar_still_agrees_with_its_camera_and_board(game):
    truth = json.loads(json.dumps(sidecar(sample_scene(game, 5, 1280, 720))))
    rng = np.random.default_rng(3)
    region = choose_region(truth, rng) or Region(100, 50, 900, 600)
    moved = crop_truth(truth, region, 0.6)
    checked = 0
    for obj in moved["objects"]:
        if obj.get("box_px") is None or obj.get("apex_px") is None:
            continue
        expected = _project(moved["camera"], [obj["apex_mm"], obj["contact_mm"]])
        assert obj["apex_px"] == pytest.approx(list(expected[0]), abs=0.05)
        assert obj["contact_px"] == pytest.approx(list(expected[1]), abs=0.05)
        x0, y0, x1, y1 = obj["box_px"]
        assert 0 <= x0 < x1 <= moved["image"]["width"] + 0.01 and 0 <= y0 < y1 <= moved["image"]["height"] + 0.01
        checked += 1
    assert checked > 0
    if moved["board"] is not None and "corners_mm" in moved["board"]:
        z = moved["board"]["plane_z_mm"]
        corners = [[x, y, z] for x, y in moved["board"]["corners_mm"]]
        assert np.allclose(moved["board"]["corners_px"], _project(moved["camera"], corners), atol=0.05)
        h = np.asarray(moved["board"]["homography_mm_to_px"])
        p = h @ np.array([*moved["board"]["corners_mm"][2], 1.0])
        assert np.allclose(p[:2] / p[2], moved["board"]["corners_px"][2], atol=0.05)


def test_a_piece_cut_off_by_the_crop_loses_its_label_and_a_half_cut_one_keeps_a_clipped_box():
    truth = json.loads(json.dumps(sidecar(sample_scene("icebomb-arena", 8, 1280, 720))))
    boxed = [o for o in truth["objects"] if o.get("box_px") and o["kind"] == "pyramid" and o["visible_fraction"] > 0.9]
    target = boxed[0]
    x0, y0, x1, y1 = target["box_px"]
    # A crop whose right edge runs through the middle of the piece.
    region = Region(0, 0, int((x0 + x1) / 2), 720)
    moved = crop_truth(truth, region, 1.0)
    half = next(o for o in moved["objects"] if o["id"] == target["id"])
    assert half["box_px"][2] == pytest.approx(region.x1, abs=1) and half["visible_fraction"] < target["visible_fraction"] * 0.7
    # A crop that misses it entirely.
    away = Region(int(x1) + 5, 0, 1280, 720) if x1 < 1200 else Region(0, 0, int(x0) - 5, 720)
    gone = next(o for o in crop_truth(truth, away, 1.0)["objects"] if o["id"] == target["id"])
    assert gone["box_px"] is None
    assert len(yolo_lines(crop_truth(truth, away, 1.0))) < len(yolo_lines(truth))


def _full_dataset(root, items: int):
    """`items` renders of `scripts/synth dataset --seed 4`, written as that command writes them."""
    from companion.synth.dataset import item_paths, plan_item, render_item

    pytest.importorskip("moderngl")
    from companion.synth.render import Renderer

    try:
        renderer = Renderer()
    except Exception as exc:  # no EGL on this machine
        pytest.skip(f"no headless GL context: {exc}")
    for i in range(items):
        item = plan_item(4, i)
        jpeg, truth = render_item(renderer, item.game, item.seed, 960, 540)
        paths = item_paths(root, item)
        for key, data in (("image", jpeg), ("truth", json.dumps(truth).encode())):
            paths[key].parent.mkdir(parents=True, exist_ok=True)
            paths[key].write_bytes(data)
    return root


def test_the_crop_dataset_is_written_resumably_with_labels_matching_its_truth(tmp_path):
    source = _full_dataset(tmp_path / "full", 3)
    scheme = get_scheme("size-pose")
    summary = make_crop_dataset(source, tmp_path / "crops", scheme, size=320, seed=1)
    assert sum(summary["splits"].values()) == 3
    for truth_path in (tmp_path / "crops" / "truth").glob("*/*.json"):
        moved = json.loads(truth_path.read_text())
        image = cv2.imread(str(tmp_path / "crops" / "images" / truth_path.parent.name / (truth_path.stem + ".jpg")))
        assert max(image.shape[:2]) <= 320 * 1.01
        assert (image.shape[1], image.shape[0]) == (moved["image"]["width"], moved["image"]["height"])
        label = tmp_path / "crops" / "labels" / truth_path.parent.name / (truth_path.stem + ".txt")
        assert label.read_text().split("\n")[:-1] == yolo_lines(moved, scheme)
    stamp = {p: p.stat().st_mtime_ns for p in (tmp_path / "crops" / "truth").glob("*/*.json")}
    make_crop_dataset(source, tmp_path / "crops", scheme, size=320, seed=1)
    assert stamp == {p: p.stat().st_mtime_ns for p in (tmp_path / "crops" / "truth").glob("*/*.json")}


def test_a_webcam_share_makes_training_crops_worse_and_names_the_effect_but_keeps_their_labels(tmp_path):
    source = _full_dataset(tmp_path / "full", 12)
    scheme = get_scheme("size-pose")
    make_crop_dataset(source, tmp_path / "plain", scheme, size=320, seed=1)
    make_crop_dataset(source, tmp_path / "worse", scheme, size=320, seed=1, webcam_share=1.0)
    splits = set()
    for truth_path in (tmp_path / "worse" / "truth").glob("*/*.json"):
        split, name = truth_path.parent.name, truth_path.stem
        splits.add(split)
        worse, plain = json.loads(truth_path.read_text()), json.loads((tmp_path / "plain" / "truth" / split / truth_path.name).read_text())
        labels = [(root / "labels" / split / (name + ".txt")).read_text() for root in (tmp_path / "worse", tmp_path / "plain")]
        assert labels[0] == labels[1]
        images = [cv2.imread(str(root / "images" / split / (name + ".jpg"))).astype(int) for root in (tmp_path / "worse", tmp_path / "plain")]
        if split == "train":
            assert worse["webcam"]["effect"] and 0.3 <= worse["webcam"]["strength"] <= 1.0
            assert np.abs(images[0] - images[1]).mean() > 0.5
        else:
            assert "webcam" not in worse and (images[0] == images[1]).all()
        assert "webcam" not in plain
    assert "train" in splits
    with pytest.raises(ValueError, match="webcam_share"):
        make_crop_dataset(source, tmp_path / "bad", scheme, webcam_share=1.5)


def test_crops_cut_by_several_processes_are_the_same_as_by_one(tmp_path):
    source = _full_dataset(tmp_path / "full", 6)
    scheme = get_scheme("size-pose")
    make_crop_dataset(source, tmp_path / "one", scheme, size=320, seed=2, webcam_share=0.5)
    make_crop_dataset(source, tmp_path / "two", scheme, size=320, seed=2, webcam_share=0.5, workers=2)
    written = sorted(p.relative_to(tmp_path / "one") for p in (tmp_path / "one").rglob("*")
                     if p.is_file() and p.name != "data.yaml")
    assert len(written) == 3 * 6
    for relative in written:
        assert (tmp_path / "two" / relative).read_bytes() == (tmp_path / "one" / relative).read_bytes(), relative
    with pytest.raises(ValueError, match="workers"):
        make_crop_dataset(source, tmp_path / "none", scheme, workers=0)
