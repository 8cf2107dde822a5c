"""The colour classifier's crop shows the piece, not its neighbours in a tower."""

import numpy as np

from companion.vision.colour import CROP_SIZE, DETECTION_CROP_MARGIN, crop_for_colour

BLUE, RED, GREEN = (200, 60, 30), (30, 30, 210), (40, 180, 40)  # BGR


def tower(band_height: int = 12) -> tuple[np.ndarray, tuple[float, float, float, float]]:
    """A red band (a tower's middle piece, mostly hidden) between blue above and green below."""
    frame = np.full((240, 320, 3), 230, np.uint8)
    frame[60:120, 130:190] = BLUE
    frame[120:120 + band_height, 130:190] = RED
    frame[120 + band_height:200, 130:190] = GREEN
    return frame, (130.0, 120.0, 190.0, 120.0 + band_height)


def share_of(crop: np.ndarray, colour) -> float:
    return float(np.mean(np.all(np.abs(crop.astype(int) - colour) < 40, axis=2)))


def test_a_band_of_a_piece_in_a_tower_fills_most_of_its_crop():
    frame, box = tower()
    crop = crop_for_colour(frame, box)
    assert crop.shape == (CROP_SIZE, CROP_SIZE, 3)
    assert share_of(crop, RED) > 0.6  # a square crop as wide as the band: 0.15
    assert share_of(crop, BLUE) + share_of(crop, GREEN) < 0.25


def test_a_detected_pieces_crop_is_taken_inside_its_box_leaving_the_neighbours_out():
    frame, box = tower()
    training = crop_for_colour(frame, box)  # the true box and a tenth round it, as the training crops
    detected = crop_for_colour(frame, box, DETECTION_CROP_MARGIN)
    assert share_of(training, BLUE) + share_of(training, GREEN) > 0.1
    assert share_of(detected, RED) > 0.95 and share_of(detected, BLUE) + share_of(detected, GREEN) == 0.0


def test_a_box_past_the_frame_edge_is_padded_not_an_error():
    frame, _ = tower()
    crop = crop_for_colour(frame, (-20.0, -10.0, 15.0, 30.0))
    assert crop.shape == (CROP_SIZE, CROP_SIZE, 3)
    crop = crop_for_colour(frame, (100.0, 100.0, 100.0, 100.0))  # an empty box still gives a crop
    assert crop.shape == (CROP_SIZE, CROP_SIZE, 3)
