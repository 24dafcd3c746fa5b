"""Every example in examples/ runs with only the import changed and prints what torch prints."""
import pathlib
import re
import subprocess
import sys

import pytest

EXAMPLES = pathlib.Path(__file__).resolve().parent.parent / "examples"
TORCH_EXAMPLES = sorted(p for p in EXAMPLES.glob("*.py")
                        if "import hookgrad as torch" in p.read_text())


def _run(source: str, tmp_path, name: str) -> str:
    script = tmp_path / name
    script.write_text(source)
    done = subprocess.run([sys.executable, str(script)], capture_output=True, text=True,
                          timeout=120, cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    return done.stdout


def _as_torch(source: str) -> str:
    source = source.replace("import hookgrad as torch", "import torch")
    return re.sub(r"\bhookgrad\.", "torch.", re.sub(r"from hookgrad\b", "from torch", source))


@pytest.mark.parametrize("path", TORCH_EXAMPLES, ids=lambda p: p.name)
def test_example_prints_what_torch_prints(path, tmp_path):
    source = path.read_text()
    ours = _run(source, tmp_path, "ours_" + path.name)
    theirs = _run(_as_torch(source), tmp_path, "torch_" + path.name)
    assert ours == theirs
    assert ours.strip()


def test_paddle_example_packs_and_unpacks_every_saved_tensor(tmp_path):
    out = _run((EXAMPLES / "paddle_saved_tensors_hooks.py").read_text(), tmp_path, "p.py")
    lines = out.splitlines()
    assert sum(line.startswith("Packing") for line in lines) == 4
    assert sum(line.startswith("UnPacking") for line in lines) == 4
    assert out.rstrip().endswith("[2., 2., 2.]])")
