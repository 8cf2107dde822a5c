"""scripts/export_detector.py: the INT8 copy is made from our own renders, offline, and runs."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from companion import models

ROOT = Path(__file__).resolve().parent.parent
EXPORT = ROOT / "scripts" / "export_detector.py"

pytestmark = pytest.mark.skipif(not models.DETECTOR_WEIGHTS.exists(), reason="models/pieces.pt is not in this tree")


def _export(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, str(EXPORT), *args], capture_output=True, text=True, timeout=900)


def test_int8_without_a_calibration_dataset_is_refused_with_a_clear_error(tmp_path):
    done = _export("--weights", str(tmp_path / "pieces.pt"), "--int8", "--calibration", str(tmp_path / "none.yaml"))
    assert done.returncode == 2
    assert "--int8 needs --calibration" in done.stderr
    assert not list(tmp_path.iterdir())


@pytest.mark.slow
def test_the_int8_copy_is_quantized_on_renders_and_finds_pieces(tmp_path):
    pytest.importorskip("nncf")
    pytest.importorskip("moderngl")
    import cv2

    from companion.synth.dataset import write_dataset
    from companion.vision.classes import get_scheme
    from companion.vision.detect import Detector, DetectorConfig

    data = tmp_path / "calibration"
    write_dataset(data, 4, seed=311, width=640, height=480, workers=1, progress=False, item_timeout=None,
                  scheme=get_scheme("size-pose"))
    split = next(p.name for p in sorted((data / "images").iterdir()) if any(p.iterdir()))
    weights = tmp_path / "pieces.pt"
    shutil.copy(models.DETECTOR_WEIGHTS, weights)
    done = _export("--weights", str(weights), "--int8", "--calibration", str(data / "data.yaml"),
                   "--calibration-split", split, "--calibration-images", "4")
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    copy = tmp_path / "pieces_int8_openvino_model"
    assert (copy / "metadata.yaml").exists()
    # Quantized: the graph holds the quantize/dequantize pairs NNCF inserts.
    assert "FakeQuantize" in (copy / "pieces.xml").read_text()
    frame = cv2.imread(str(next((data / "images" / split).glob("*.jpg"))))
    found = Detector(DetectorConfig(weights=copy)).detect(frame)
    assert any(d.kind == "pyramid" for d in found)
