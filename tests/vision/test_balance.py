import numpy as np
import pytest

from companion.vision.balance import MAX_GAIN, balanced, cast_gains, with_gains


def _grey_table(seed: int = 0) -> np.ndarray:
    """A neutral picture: grey levels only, with some texture so the estimate sees a spread."""
    rng = np.random.default_rng(seed)
    grey = rng.integers(40, 220, size=(120, 200), dtype=np.uint8)
    return np.repeat(grey[..., None], 3, axis=2)


def _tinted(frame: np.ndarray, gains_bgr: tuple[float, float, float]) -> np.ndarray:
    return np.clip(frame.astype(np.float64) * np.array(gains_bgr), 0, 255).astype(np.uint8)


def _channel_means(frame: np.ndarray) -> np.ndarray:
    return frame.reshape(-1, 3).mean(axis=0)


def test_a_neutral_picture_is_left_as_it_is():
    frame = _grey_table()
    assert np.allclose(cast_gains(frame), 1.0, atol=1e-6)
    assert np.array_equal(balanced(frame, 0.5), frame)


def test_a_warm_cast_is_taken_out_fully_at_strength_one_and_halfway_at_one_half():
    frame = _tinted(_grey_table(), (0.75, 0.95, 1.15))  # warm bulbs: less blue, more red
    means = _channel_means(frame)
    full = _channel_means(balanced(frame, 1.0))
    half = _channel_means(balanced(frame, 0.5))
    spread = lambda m: float(np.log(m.max() / m.min()))  # noqa: E731
    assert spread(full) < 0.05 * spread(means)
    assert spread(half) == pytest.approx(0.5 * spread(means), rel=0.1)
    # Blue goes up and red down, as a white balance under warm light does.
    assert half[0] > means[0] and half[2] < means[2]


def test_strength_zero_returns_the_picture_and_the_gains_are_bounded():
    frame = _tinted(_grey_table(), (0.2, 1.0, 1.0))  # far beyond any room's light
    assert balanced(frame, 0.0) is frame
    gains = cast_gains(frame)
    assert gains.max() <= MAX_GAIN and gains.min() >= 1 / MAX_GAIN


def test_a_channel_with_no_light_is_not_divided_by():
    frame = _grey_table()
    frame[..., 0] = 0
    assert np.array_equal(cast_gains(frame), np.ones(3))


def test_a_crop_takes_the_gains_of_the_whole_picture():
    frame = _tinted(_grey_table(), (0.75, 0.95, 1.15))
    gains = cast_gains(frame)
    crop = frame[10:40, 20:60]
    assert np.array_equal(with_gains(crop, gains, 0.5), balanced(frame, 0.5)[10:40, 20:60])


def test_bad_input_gets_a_clear_error():
    with pytest.raises(ValueError, match="strength"):
        balanced(_grey_table(), 1.5)
    with pytest.raises(ValueError, match="BGR"):
        cast_gains(np.zeros((10, 10), np.uint8))
