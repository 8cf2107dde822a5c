"""Ultralytics, strictly offline: the one place that imports it for the package.

Ultralytics phones home by default (an online check, settings sync, a font download, hub
features). Everything it needs is set here before it is imported: offline mode, no
auto-install, its config and caches inside the project's cache, and a font we already have
(matplotlib's DejaVu Sans, installed with ultralytics) under the name it looks for.
"""

from __future__ import annotations

import os
import shutil
import sys
from pathlib import Path
from types import ModuleType


def cache_dir() -> Path:
    """The project's cache: $COMPANION_CACHE (set by scripts/setup-env), else ~/.cache/icehouse-companion."""
    return Path(os.environ.get("COMPANION_CACHE") or Path.home() / ".cache" / "icehouse-companion")


def prepare_environment() -> None:
    """Sets the variables ultralytics reads at import. Idempotent; keeps values already set."""
    cache = cache_dir()
    os.environ.setdefault("YOLO_OFFLINE", "true")
    os.environ.setdefault("YOLO_AUTOINSTALL", "false")
    os.environ.setdefault("YOLO_VERBOSE", "false")
    os.environ.setdefault("YOLO_CONFIG_DIR", str(cache / "ultralytics"))
    os.environ.setdefault("MPLCONFIGDIR", str(cache / "matplotlib"))
    config = Path(os.environ["YOLO_CONFIG_DIR"]) / "Ultralytics"
    config.mkdir(parents=True, exist_ok=True)
    for name in ("Arial.ttf", "Arial.Unicode.ttf"):
        target = config / name
        if not target.exists():
            font = _bundled_font()
            if font is not None:
                shutil.copyfile(font, target)


def _bundled_font() -> Path | None:
    try:
        import matplotlib
    except ImportError:
        return None
    font = Path(matplotlib.get_data_path()) / "fonts" / "ttf" / "DejaVuSans.ttf"
    return font if font.exists() else None


def import_ultralytics() -> ModuleType:
    """Imports ultralytics with the environment above and its settings sync turned off.

    Raises:
        RuntimeError: when ultralytics was imported before the environment was prepared,
            since it reads the variables only once.
    """
    if "ultralytics" in sys.modules and os.environ.get("YOLO_OFFLINE") != "true":
        raise RuntimeError("ultralytics was imported before companion.vision.yolo_env prepared it (not offline)")
    prepare_environment()
    # Triton (GPU kernels only; torch imports it when it is installed) bundles its own LLVM, and
    # loading it into a process where Mesa's llvmpipe (the headless renderer) already runs
    # crashed with a segfault. On the CPU we never need it: make torch see it as absent.
    if "triton" not in sys.modules:
        sys.modules["triton"] = None  # type: ignore[assignment]
    import ultralytics

    quiet = {key: False for key in ("sync", "hub", "clearml", "comet", "dvc", "mlflow", "raytune", "tensorboard",
                                    "wandb", "vscode_msg", "openvino_msg") if key in ultralytics.settings}
    if any(ultralytics.settings.get(k) for k in quiet):
        ultralytics.settings.update(quiet)
    return ultralytics
