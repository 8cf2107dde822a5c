"""Camera calibration: OpenCV's real checkerboard photos, the calibration file, printable targets."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import cv2
import numpy as np
import pytest

from companion.vision.calibrate import (CalibrationError, CameraIntrinsics, Undistorter, calibrate_camera,
                                        checkerboard_target, find_checkerboard, load_intrinsics, parse_pattern,
                                        read_images, save_intrinsics)

ROOT = Path(__file__).resolve().parents[2]
CACHE = ROOT / ".cache" / "opencv-doc"
DATA = CACHE / "x" / "usr" / "share" / "doc" / "opencv-doc" / "examples" / "data"


def _opencv_photos() -> Path:
    """OpenCV's sample checkerboard photos from Debian's opencv-doc package, fetched once into .cache/."""
    if len(list(DATA.glob("left[01]*.jpg"))) == 13:
        return DATA
    if shutil.which("apt-get") is None or shutil.which("dpkg-deb") is None:
        pytest.skip("apt-get/dpkg-deb not available: cannot fetch opencv-doc's calibration photos")
    CACHE.mkdir(parents=True, exist_ok=True)
    try:
        if not list(CACHE.glob("opencv-doc_*.deb")):
            subprocess.run(["apt-get", "download", "opencv-doc"], cwd=CACHE, check=True, capture_output=True, timeout=300)
        deb = sorted(CACHE.glob("opencv-doc_*.deb"))[-1]
        subprocess.run(["dpkg-deb", "-x", str(deb), str(CACHE / "x")], check=True, capture_output=True, timeout=300)
    except (subprocess.SubprocessError, IndexError, OSError) as exc:
        pytest.skip(f"could not fetch opencv-doc with apt-get download (offline?): {exc}")
    if len(list(DATA.glob("left[01]*.jpg"))) != 13:
        pytest.skip("opencv-doc did not contain the 26 left/right calibration photos")
    return DATA


@pytest.fixture(scope="module")
def photos() -> Path:
    return _opencv_photos()


@pytest.fixture(scope="module")
def left_intrinsics(photos) -> CameraIntrinsics:
    return calibrate_camera(read_images(sorted(photos.glob("left[01]*.jpg")))).intrinsics


@pytest.mark.parametrize("camera", ["left", "right"])
def test_real_photos_all_found_and_reprojection_below_half_a_pixel(photos, camera):
    paths = sorted(photos.glob(f"{camera}[01]*.jpg"))
    assert len(paths) == 13
    report = calibrate_camera(read_images(paths), (9, 6), 25.0)
    assert report.rejected == ()
    assert report.intrinsics.views == 13
    assert report.intrinsics.rms_px < 0.5
    fx, fy = report.intrinsics.camera_matrix[0][0], report.intrinsics.camera_matrix[1][1]
    assert 400 < fx < 700 and abs(fx - fy) / fx < 0.02  # square pixels on a 640x480 webcam


def test_calibration_file_round_trips(tmp_path, left_intrinsics):
    path = tmp_path / "camera.json"
    save_intrinsics(left_intrinsics, path)
    assert load_intrinsics(path) == left_intrinsics


@pytest.mark.parametrize("text, message", [
    ("{not json", "not valid JSON"),
    ("[1, 2]", "expected a JSON object"),
    ('{"format": "something-else"}', "not a camera calibration file"),
])
def test_corrupt_file_names_the_problem(tmp_path, text, message):
    path = tmp_path / "camera.json"
    path.write_text(text)
    with pytest.raises(CalibrationError, match=message) as err:
        load_intrinsics(path)
    assert str(path) in str(err.value)


@pytest.mark.parametrize("field, value, message", [
    ("camera_matrix", [[1, 0, 2], [0, 1, 2]], "camera_matrix must be 3 rows"),
    ("camera_matrix", [[-5, 0, 2], [0, 5, 2], [0, 0, 1]], "not a pinhole matrix"),
    ("dist_coeffs", [0.1, "x", 0, 0, 0], "finite numbers"),
    ("image_size", [640], "image_size must be a list of 2"),
    ("rms_px", float("nan"), "finite"),
    ("version", 7, "unsupported version"),
])
def test_bad_field_is_named(tmp_path, left_intrinsics, field, value, message):
    data = left_intrinsics.to_json()
    data[field] = value
    path = tmp_path / "camera.json"
    path.write_text(json.dumps(data))
    with pytest.raises(CalibrationError, match=message):
        load_intrinsics(path)


def test_missing_field_is_named(tmp_path, left_intrinsics):
    data = left_intrinsics.to_json()
    del data["dist_coeffs"]
    path = tmp_path / "camera.json"
    path.write_text(json.dumps(data))
    with pytest.raises(CalibrationError, match="missing field 'dist_coeffs'"):
        load_intrinsics(path)


def test_undistortion_straightens_the_target_lines(photos, left_intrinsics):
    """Corners of one target row lie closer to a straight line once the lens is undistorted."""
    image = cv2.imread(str(photos / "left12.jpg"))
    gray = cv2.cvtColor(image, cv2.COLOR_BGR2GRAY)
    straight = cv2.cvtColor(Undistorter(left_intrinsics)(image), cv2.COLOR_BGR2GRAY)

    def bend(g):
        corners = find_checkerboard(g, (9, 6)).reshape(6, 9, 2)
        worst = 0.0
        for row in corners:
            vx, vy, x0, y0 = cv2.fitLine(row.astype(np.float32), cv2.DIST_L2, 0, 0.01, 0.01).ravel()
            worst = max(worst, float(np.abs((row - [x0, y0]) @ [-vy, vx]).max()))
        return worst

    assert bend(straight) < bend(gray)


def test_too_few_views_and_wrong_pattern_are_refused(photos):
    images = read_images(sorted(photos.glob("left0[1-3].jpg")))
    with pytest.raises(CalibrationError, match="at least 5 are needed"):
        calibrate_camera(images)
    # A pattern larger than the printed one is never found.
    with pytest.raises(CalibrationError, match="found in 0 of 3"):
        calibrate_camera(images, (10, 7))


def test_mixed_resolutions_are_refused(photos):
    a = cv2.imread(str(photos / "left01.jpg"))
    with pytest.raises(CalibrationError, match="320x240 but the first was 640x480"):
        calibrate_camera([("a", a), ("b", cv2.resize(a, (320, 240)))])


def test_intrinsics_scale_to_another_resolution(left_intrinsics):
    big = left_intrinsics.scaled_to((1280, 960))
    assert big.camera_matrix[0][0] == pytest.approx(2 * left_intrinsics.camera_matrix[0][0])
    assert big.camera_matrix[1][2] == pytest.approx(2 * left_intrinsics.camera_matrix[1][2])
    with pytest.raises(CalibrationError, match="aspect ratio"):
        left_intrinsics.scaled_to((1280, 720))


def test_parse_pattern():
    assert parse_pattern("9x6") == (9, 6)
    with pytest.raises(CalibrationError, match="bad pattern"):
        parse_pattern("nine by six")


def test_printed_target_is_found_by_the_detector():
    target = checkerboard_target((9, 6), 25.0, dpi=100)
    # 25 mm at 100 dpi is about 98 px per square; 10 squares across plus margins.
    assert target.shape[1] == pytest.approx(10 * 25 / 25.4 * 100 + 2 * round(15 / 25.4 * 100), abs=2)
    small = cv2.resize(target, None, fx=0.5, fy=0.5, interpolation=cv2.INTER_AREA)
    assert find_checkerboard(small, (9, 6)) is not None


def test_cli_calibrate_camera_writes_the_file(photos, tmp_path, capsys):
    from companion.cli import main
    out = tmp_path / "cam.json"
    paths = [str(p) for p in sorted(photos.glob("right[01]*.jpg"))]
    assert main(["calibrate", "camera", *paths, "--pattern", "9x6", "--square-mm", "25", "-o", str(out)]) == 0
    assert "found in 13 of 13" in capsys.readouterr().out
    assert load_intrinsics(out).rms_px < 0.5


def _charuco_views(target, focal: float = 900.0, size=(1280, 720)) -> list[tuple[str, np.ndarray]]:
    """The printed ChArUco sheet photographed by a known camera from eight directions, two views
    with a third of the sheet covered or out of the picture."""

    px_per_mm = 8.0
    w_mm, h_mm = target.squares[0] * target.square_mm, target.squares[1] * target.square_mm
    sheet = target.board().generateImage((int(w_mm * px_per_mm), int(h_mm * px_per_mm)))
    k = np.array([[focal, 0, size[0] / 2], [0, focal, size[1] / 2], [0, 0, 1.0]])
    views = []
    for i, (ax, ay) in enumerate([(-25, 0), (25, 0), (0, -25), (0, 25), (-18, 18), (18, -18), (20, 20), (-20, -20)]):
        rx, ry = np.radians(ax), np.radians(ay)
        rot_x = np.array([[1, 0, 0], [0, np.cos(rx), -np.sin(rx)], [0, np.sin(rx), np.cos(rx)]])
        rot_y = np.array([[np.cos(ry), 0, np.sin(ry)], [0, 1, 0], [-np.sin(ry), 0, np.cos(ry)]])
        r = rot_y @ rot_x
        centre = np.array([w_mm / 2, h_mm / 2, 0.0])
        t = np.array([0.0, 0.0, 420.0]) - r @ centre
        h = k @ np.column_stack([r[:, 0], r[:, 1], t]) @ np.diag([1 / px_per_mm, 1 / px_per_mm, 1.0])
        frame = cv2.warpPerspective(cv2.cvtColor(sheet, cv2.COLOR_GRAY2BGR), h, size, flags=cv2.INTER_AREA,
                                    borderValue=(90, 110, 130))
        if i in (2, 5):  # a hand over a third of the sheet
            x = int(cv2.perspectiveTransform(np.array([[[w_mm * px_per_mm * 0.66, 0.0]]]), h)[0, 0, 0])
            frame[:, x:] = (60, 90, 140)
        views.append((f"view{i}", frame))
    return views


def test_a_partly_hidden_charuco_sheet_still_calibrates_the_camera():
    from companion.vision.calibrate import CharucoTarget

    target = CharucoTarget((7, 5), 30.0, 22.0)
    report = calibrate_camera(_charuco_views(target), charuco=target)
    assert report.rejected == () and report.intrinsics.views == 8
    assert report.intrinsics.rms_px < 0.5
    fx, fy = report.intrinsics.camera_matrix[0][0], report.intrinsics.camera_matrix[1][1]
    assert abs(fx - 900) < 15 and abs(fy - 900) < 15
    assert report.intrinsics.pattern == (6, 4) and report.intrinsics.square_mm == 30.0


def test_charuco_photos_taken_for_another_board_are_refused_with_a_hint():
    from companion.vision.calibrate import CharucoTarget

    views = _charuco_views(CharucoTarget((7, 5), 30.0, 22.0))
    with pytest.raises(CalibrationError, match="ChArUco"):
        calibrate_camera(views, charuco=CharucoTarget((5, 4), 30.0, 22.0))


def test_calibrate_camera_command_reads_the_charuco_sheet(tmp_path, capsys):
    from companion.cli import main
    from companion.vision.calibrate import CharucoTarget

    paths = []
    for name, frame in _charuco_views(CharucoTarget()):
        paths.append(tmp_path / f"{name}.png")
        cv2.imwrite(str(paths[-1]), frame)
    out = tmp_path / "camera.json"
    code = main(["calibrate", "camera", *map(str, paths), "--charuco", "7x5", "-o", str(out), "--json"])
    printed = json.loads(capsys.readouterr().out)
    assert code == 0 and len(printed["used"]) == 8
    assert abs(load_intrinsics(out).camera_matrix[0][0] - 900) < 15


def test_a_missing_photo_or_a_bad_charuco_size_is_a_clear_error(tmp_path):
    with pytest.raises(CalibrationError, match="no such file"):
        read_images([tmp_path / "missing.jpg"])
    with pytest.raises(CalibrationError, match="squares as COLSxROWS"):
        parse_pattern("7y5", "squares")
