"""The render that never finished (issue 7) and the dataset writer's watchdog."""

from __future__ import annotations

import json
import subprocess
import sys
import time

import numpy as np
import pytest

from companion.synth.dataset import FAILURE_LOG, item_paths, plan_item, write_dataset
from companion.synth.scenes import sample_scene
from tests.synth import jobs

HUNG_ITEMS = (2588, 2733)  # `synth dataset --seed 1` never finished these (both ice-arena)


@pytest.mark.parametrize("index", HUNG_ITEMS)
def test_the_scenes_that_hung_are_sane(index):
    item = plan_item(1, index)
    scene = sample_scene(item.game, item.seed, 640, 480)
    eye = scene.camera.position
    assert np.isfinite(eye).all() and eye[2] > scene.board_top + 100
    for obj in scene.objects:
        points = obj.hull_points()
        assert np.isfinite(points).all() and np.abs(points).max() < 5000, obj.kind
        low, high = points.min(axis=0), points.max(axis=0)
        assert not np.all((low <= eye) & (eye <= high)), f"camera inside a {obj.kind}"
        assert scene.camera.to_camera(points)[:, 2].min() > 20, f"a {obj.kind} reaches the near plane"


def test_the_items_that_hung_now_render_in_a_second_or_two():
    pytest.importorskip("moderngl")
    # In a child process: were the driver to hang again, only the child is lost.
    code = ("import sys, time\n"
            "from companion.synth.dataset import plan_item, render_item\n"
            "from companion.synth.render import Renderer\n"
            "try:\n    r = Renderer()\nexcept Exception:\n    sys.exit(77)\n"
            f"for i in {HUNG_ITEMS!r}:\n"
            "    it = plan_item(1, i)\n    t = time.monotonic()\n"
            "    render_item(r, it.game, it.seed, 640, 480)\n    print(i, round(time.monotonic() - t, 2))\n")
    try:
        done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=90)
    except subprocess.TimeoutExpired:
        pytest.fail(f"items {HUNG_ITEMS} still hang the renderer")
    if done.returncode == 77:
        pytest.skip("no headless GL context")
    assert done.returncode == 0, done.stderr
    seconds = [float(line.split()[1]) for line in done.stdout.split("\n") if line]
    assert len(seconds) == 2 and max(seconds) < 20


def test_a_slow_item_is_abandoned_its_worker_replaced_and_the_run_goes_on(tmp_path, capsys):
    started = time.monotonic()
    summary = write_dataset(tmp_path, 4, seed=9, workers=1, progress=False, item_timeout=2.0, job=jobs.slow_job)
    assert time.monotonic() - started < 40
    (failure,) = summary["failed"]
    slow = plan_item(9, jobs.SLOW_INDEX)
    assert (failure["index"], failure["seed"], failure["game"]) == (slow.index, slow.seed, slow.game)
    assert "abandoned after 2 s" in failure["reason"]
    assert summary["rendered"] == 3 and summary["worker_processes"] == 2
    assert [json.loads(line) for line in (tmp_path / FAILURE_LOG).read_text().splitlines()] == [failure]
    for index in range(4):
        assert item_paths(tmp_path, plan_item(9, index))["truth"].exists() == (index != jobs.SLOW_INDEX)
    # The items after the slow one were written by its replacement.
    pids = {json.loads(item_paths(tmp_path, plan_item(9, i))["truth"].read_text())["pid"] for i in (0, 2, 3)}
    assert len(pids) == 2
    assert f"item {slow.index} ({slow.game}, seed {slow.seed}) failed" in capsys.readouterr().err
    # A second run retries only the abandoned item.
    again = write_dataset(tmp_path, 4, seed=9, workers=1, progress=False, item_timeout=2.0, job=jobs.slow_job)
    assert (again["skipped"], len(again["failed"])) == (3, 1)


def test_a_crashed_or_failing_item_is_logged_and_the_others_are_written(tmp_path):
    summary = write_dataset(tmp_path, 6, seed=3, workers=2, progress=False, item_timeout=30.0, job=jobs.faulty_job)
    failed = {f["index"]: f["reason"] for f in summary["failed"]}
    assert set(failed) == {jobs.CRASH_INDEX, jobs.RAISE_INDEX}
    assert "exit code 3" in failed[jobs.CRASH_INDEX] and "RuntimeError: no scene today" in failed[jobs.RAISE_INDEX]
    assert summary["rendered"] == 4 and summary["worker_processes"] == 3  # only the crashed one replaced
    written = sorted(i for i in range(6) if item_paths(tmp_path, plan_item(3, i))["truth"].exists())
    assert written == [0, 1, 4, 5]


def test_a_time_limit_must_be_positive(tmp_path):
    with pytest.raises(ValueError, match="time limit 0"):
        write_dataset(tmp_path, 2, item_timeout=0)


def test_a_run_given_seconds_begins_no_item_after_them_and_the_same_command_resumes_it(tmp_path):
    # Eight one-second items on two workers need four seconds; none is begun after two and a half.
    summary = write_dataset(tmp_path, 8, seed=5, workers=2, progress=False, job=jobs.steady_job, seconds=2.5)
    assert summary["rendered"] < 8 and summary["rendered"] + summary["left"] == 8 and not summary["failed"]
    written = [i for i in range(8) if item_paths(tmp_path, plan_item(5, i))["truth"].exists()]
    assert len(written) == summary["rendered"]
    again = write_dataset(tmp_path, 8, seed=5, workers=2, progress=False, job=jobs.steady_job)
    assert (again["skipped"], again["rendered"], again["left"]) == (summary["rendered"], 8 - summary["rendered"], 0)
    with pytest.raises(ValueError, match="time limit -1"):
        write_dataset(tmp_path, 2, seconds=-1)


def test_one_split_is_rendered_alone_as_the_whole_dataset_would_have_it(tmp_path):
    items = [plan_item(9, i) for i in range(40)]
    test_items = [it for it in items if it.split == "test"]
    assert 0 < len(test_items) < len(items)
    summary = write_dataset(tmp_path, 40, seed=9, workers=1, progress=False, item_timeout=None,
                            job=jobs.quick_job, splits=("test",))
    assert (summary["rendered"], summary["skipped"], summary["left"]) == (len(test_items), 0, 0)
    for it in items:
        assert item_paths(tmp_path, it)["truth"].exists() == (it.split == "test")
    # The rest of the dataset later renders only what is missing.
    whole = write_dataset(tmp_path, 40, seed=9, workers=1, progress=False, item_timeout=None, job=jobs.quick_job)
    assert (whole["skipped"], whole["rendered"]) == (len(test_items), len(items) - len(test_items))


def test_an_unknown_split_is_refused_before_anything_is_written(tmp_path):
    with pytest.raises(ValueError, match="unknown split tset"):
        write_dataset(tmp_path / "d", 4, seed=9, workers=1, progress=False, job=jobs.quick_job, splits=("tset",))
    assert not (tmp_path / "d").exists()
