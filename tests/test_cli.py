"""The ``hookgrad`` command line: version, and no terminal redraws in a redirected log."""
import subprocess
import sys
from pathlib import Path

import hookgrad

SCRIPT = Path(sys.executable).parent / "hookgrad"


def test_version_prints_the_package_version():
    done = subprocess.run([sys.executable, "-m", "hookgrad", "--version"], capture_output=True,
                          text=True, timeout=60)
    assert done.returncode == 0
    assert done.stdout.strip() == f"hookgrad {hookgrad.__version__}"


def test_package_is_marked_as_typed():
    assert (Path(hookgrad.__file__).parent / "py.typed").is_file()


def test_demo_writes_no_carriage_returns_when_redirected(tmp_path):
    done = subprocess.run([sys.executable, "-m", "hookgrad", "demo", "--quick", "--epochs", "1",
                           "--out", str(tmp_path / "out")], capture_output=True, text=True,
                          timeout=180)
    assert done.returncode == 0, done.stderr[-2000:]
    assert "\r" not in done.stdout and "\r" not in done.stderr
    assert "epoch 1/1" in done.stdout
