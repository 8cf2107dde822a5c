from pathlib import Path

from companion.training import TrainConfig, _schedule


def test_by_default_ultralytics_chooses_the_optimiser_and_warm_up():
    assert _schedule(TrainConfig(data=Path("data.yaml"))) == {}


def test_a_learning_rate_given_fixes_the_optimiser_so_ultralytics_does_not_override_it():
    schedule = _schedule(TrainConfig(data=Path("data.yaml"), lr0=0.0005, warmup_epochs=0.5))
    assert schedule == {"optimizer": "AdamW", "lr0": 0.0005, "warmup_bias_lr": 0.0, "warmup_epochs": 0.5}
