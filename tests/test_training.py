from pathlib import Path

import pytest

from companion.training import TrainConfig, _schedule, average_checkpoints


def test_by_default_ultralytics_chooses_the_optimiser_and_warm_up():
    assert _schedule(TrainConfig(data=Path("data.yaml"))) == {}


def test_a_learning_rate_given_fixes_the_optimiser_so_ultralytics_does_not_override_it():
    schedule = _schedule(TrainConfig(data=Path("data.yaml"), lr0=0.0005, warmup_epochs=0.5))
    assert schedule == {"optimizer": "AdamW", "lr0": 0.0005, "warmup_bias_lr": 0.0, "warmup_epochs": 0.5}


def _checkpoint(tmp_path: Path, name: str, architecture: str, fill: float, mid_run: bool = False) -> Path:
    """A checkpoint in ultralytics' layout whose every float weight is `fill`; `mid_run`: as a run
    still training saves it, the weights only in its moving average."""
    import torch

    from companion.vision.yolo_env import import_ultralytics

    model = import_ultralytics().YOLO(architecture).model
    with torch.no_grad():
        for tensor in model.state_dict().values():
            if tensor.is_floating_point():
                tensor.fill_(fill)
    path = tmp_path / name
    layout = {"model": None, "ema": model} if mid_run else {"model": model, "ema": None}
    torch.save({**layout, "optimizer": None, "train_args": {}}, path)
    return path


def test_averaged_checkpoints_hold_the_mean_of_every_weight(tmp_path):
    import torch

    first = _checkpoint(tmp_path, "a.pt", "yolo11n-pose.yaml", 1.0)
    second = _checkpoint(tmp_path, "b.pt", "yolo11n-pose.yaml", 2.0)
    out = average_checkpoints([first, second], tmp_path / "soup" / "mean.pt")
    soup = torch.load(out, map_location="cpu", weights_only=False)
    weights = [t for t in soup["model"].state_dict().values() if t.is_floating_point()]
    assert weights and all(torch.allclose(t, torch.full_like(t, 1.5)) for t in weights)
    assert soup["train_args"]["averaged_from"] == [str(first), str(second)]


def test_a_checkpoint_saved_while_its_run_still_trains_is_averaged_from_its_moving_average(tmp_path):
    import torch

    running = _checkpoint(tmp_path, "last.pt", "yolo11n-pose.yaml", 3.0, mid_run=True)
    finished = _checkpoint(tmp_path, "best.pt", "yolo11n-pose.yaml", 1.0)
    out = average_checkpoints([running, finished], tmp_path / "mean.pt")
    soup = torch.load(out, map_location="cpu", weights_only=False)
    assert soup["ema"] is None
    weights = [t for t in soup["model"].state_dict().values() if t.is_floating_point()]
    assert weights and all(torch.allclose(t, torch.full_like(t, 2.0)) for t in weights)


def test_checkpoints_of_different_architectures_are_refused(tmp_path):
    pose = _checkpoint(tmp_path, "pose.pt", "yolo11n-pose.yaml", 1.0)
    detect = _checkpoint(tmp_path, "detect.pt", "yolo11n.yaml", 1.0)
    with pytest.raises(ValueError, match="different architecture"):
        average_checkpoints([pose, detect], tmp_path / "mean.pt")
    with pytest.raises(ValueError, match="at least two"):
        average_checkpoints([pose], tmp_path / "mean.pt")


def test_a_file_that_is_not_a_checkpoint_is_refused_by_name(tmp_path):
    pose = _checkpoint(tmp_path, "pose.pt", "yolo11n-pose.yaml", 1.0)
    notes = tmp_path / "notes.pt"
    notes.write_text("not weights")
    with pytest.raises(ValueError, match="notes.pt is not a checkpoint"):
        average_checkpoints([pose, notes], tmp_path / "mean.pt")
    assert not (tmp_path / "mean.pt").exists()


def test_the_dice_classifier_trains_without_mirrors_or_random_crops_and_the_size_classifier_with_mirrors(
        tmp_path, monkeypatch):
    import types

    import companion.training as training
    from companion.vision.dice import FACE_PX

    seen = []

    class FakeYOLO:
        def __init__(self, model):
            pass

        def add_callback(self, event, callback):
            pass

        def train(self, **settings):
            seen.append(settings)

    monkeypatch.setattr(training, "import_ultralytics", lambda: types.SimpleNamespace(YOLO=FakeYOLO))
    training.train_dice_classifier(tmp_path, project=tmp_path / "runs")
    training.train_size_classifier(tmp_path, project=tmp_path / "runs")
    dice, sizes = seen
    # A mirrored number is no number; a patch's scale is the die's.
    assert (dice["fliplr"], dice["scale"], dice["imgsz"]) == (0.0, 0.0, FACE_PX)
    assert sizes["fliplr"] == 0.5
