"""The webcam effects make a picture worse in the way each names, the same way every time."""

from __future__ import annotations

import cv2
import numpy as np
import pytest

from companion.webcam import EFFECTS, apply_effect, random_effect


def _picture() -> np.ndarray:
    """A grey table with a red, a blue and a white square and some edges to blur."""
    image = np.full((120, 160, 3), 128, np.uint8)
    image[20:60, 20:60] = (30, 30, 200)
    image[20:60, 90:130] = (200, 60, 30)
    image[70:110, 50:110] = (245, 245, 245)
    return image


@pytest.mark.parametrize("name", sorted(EFFECTS))
def test_every_effect_changes_the_picture_keeps_its_shape_and_repeats_for_a_seed(name):
    image = _picture()
    before = image.copy()
    out = apply_effect(name, image, 3)
    assert out.shape == image.shape and out.dtype == np.uint8
    assert (image == before).all()  # the input is left alone
    assert np.abs(out.astype(int) - image).mean() > 1.0
    assert (apply_effect(name, image, 3) == out).all()


def test_warm_light_turns_grey_orange_and_cool_light_turns_it_blue():
    grey = np.full((10, 10, 3), 128, np.uint8)
    b, _, r = apply_effect("warm-light", grey, 0)[0, 0].astype(int)
    assert r > 128 > b
    b, _, r = apply_effect("cool-light", grey, 0)[0, 0].astype(int)
    assert b > 128 > r


def test_blurs_soften_edges_and_dim_room_darkens():
    image = _picture()
    sharpness = lambda im: float(np.abs(cv2.Laplacian(cv2.cvtColor(im, cv2.COLOR_BGR2GRAY), cv2.CV_32F)).mean())
    for name in ("motion-blur", "out-of-focus", "low-resolution"):
        assert sharpness(apply_effect(name, image, 0)) < 0.8 * sharpness(image), name
    assert apply_effect("dim-room", image, 0).mean() < 0.5 * image.mean()
    assert apply_effect("glare", image, 0).mean() > image.mean()


def test_bad_names_and_pictures_are_clear_errors():
    with pytest.raises(ValueError, match="unknown webcam effect 'sepia'.*warm-light"):
        apply_effect("sepia", _picture(), 0)
    with pytest.raises(ValueError, match="BGR uint8"):
        apply_effect("glare", np.zeros((10, 10), np.uint8), 0)


@pytest.mark.parametrize("name", sorted(EFFECTS))
def test_strength_zero_leaves_the_picture_nearly_as_it_is_and_a_stronger_effect_changes_it_more(name):
    image = _picture()
    assert np.abs(apply_effect(name, image, 5, 0.0).astype(int) - image).mean() < 1.0
    # A smooth random texture: detail for the blurs and resamplings to lose, but not so fine that
    # a light blur already loses all of it.
    noise = np.random.default_rng(0).uniform(0, 255, (120, 160, 3)).astype(np.float32)
    texture = np.clip(cv2.GaussianBlur(noise, (0, 0), 2) * 2.5 - 190, 0, 255).astype(np.uint8)
    change = [np.abs(apply_effect(name, texture, 5, strength).astype(int) - texture).mean() for strength in (0.5, 1.0)]
    assert 0 < change[0] < change[1]


def test_a_random_effect_names_what_it_did_at_a_strength_from_0_3_to_1():
    rng = np.random.default_rng(2)
    seen = set()
    for _ in range(40):
        name, strength, out = random_effect(_picture(), rng)
        assert name in EFFECTS and 0.3 <= strength <= 1.0 and out.shape == _picture().shape
        seen.add(name)
    assert len(seen) >= 6
    with pytest.raises(ValueError, match="strength"):
        apply_effect("glare", _picture(), 0, 1.5)
