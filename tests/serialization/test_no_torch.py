"""hookgrad reads torch's checkpoints in a process where torch cannot be imported at all."""
from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from collections import OrderedDict

import numpy as np
import torch

import hookgrad

SOURCE = os.path.join(os.path.dirname(hookgrad.__file__), os.pardir)

CHILD = textwrap.dedent("""
    import sys
    sys.modules["torch"] = None  # any `import torch` now raises ImportError
    import os, pickle
    import numpy as np
    import hookgrad
    from hookgrad.utils.safetensors import load_file, save_file

    folder = sys.argv[1]
    expected = np.load(os.path.join(folder, "expected.npz"))

    def check(state, what, ordered=True):
        keys = ["conv.weight", "conv.bias", "fc.weight", "steps", "mask"]
        assert (list(state) if ordered else sorted(state)) == (keys if ordered else sorted(keys))
        for key in expected.files:
            value = state[key.replace("__", ".")]
            assert str(value.dtype) == "torch." + expected[key].dtype.name.replace("bool_", "bool")
            np.testing.assert_array_equal(value.numpy(), expected[key], err_msg=what)

    for name in ("zip.pt", "legacy.pt"):
        state = hookgrad.load(os.path.join(folder, name))
        check(state, name)
        assert state._metadata == {"": {"version": 1}}, name
    check(load_file(os.path.join(folder, "weights.safetensors")), "safetensors", False)
    check(hookgrad.load(os.path.join(folder, "weights.safetensors")), "hookgrad.load", False)
    try:
        hookgrad.load(os.path.join(folder, "evil.pt"))
    except pickle.UnpicklingError as error:
        assert "posix.system" in str(error) or "nt.system" in str(error), error
    else:
        raise AssertionError("the payload loaded")
    assert not os.path.exists(os.path.join(folder, "pwned"))

    # and back: written here without torch, read by torch in the parent
    state = hookgrad.load(os.path.join(folder, "zip.pt"))
    hookgrad.save(state, os.path.join(folder, "from_hookgrad.pt"))
    hookgrad.save(state, os.path.join(folder, "from_hookgrad_legacy.pt"),
                  _use_new_zipfile_serialization=False)
    save_file({k: v.contiguous() for k, v in state.items()},
              os.path.join(folder, "from_hookgrad.safetensors"))
    assert sys.modules["torch"] is None
    print("ok")
""")


class _Shell:
    def __init__(self, marker: str) -> None:
        self.marker = marker

    def __reduce__(self):
        return (os.system, (f"touch {self.marker}",))


def _torch_state() -> "OrderedDict[str, torch.Tensor]":
    torch.manual_seed(0)
    state = OrderedDict()
    state["conv.weight"] = torch.randn(4, 2, 3, 3)
    state["conv.bias"] = torch.randn(4, dtype=torch.float64)
    state["fc.weight"] = torch.randn(6, 5).t()  # non-contiguous
    state["steps"] = torch.tensor(7, dtype=torch.int64)
    state["mask"] = torch.rand(3) > 0.5
    state._metadata = {"": {"version": 1}}
    return state


def test_torch_checkpoints_load_and_save_without_torch(tmp_path):
    from safetensors.torch import load_file as torch_load_file
    from safetensors.torch import save_file as torch_save_file

    state = _torch_state()
    torch.save(state, tmp_path / "zip.pt")
    torch.save(state, tmp_path / "legacy.pt", _use_new_zipfile_serialization=False)
    torch_save_file({k: v.contiguous() for k, v in state.items()},
                    tmp_path / "weights.safetensors")
    torch.save({"w": torch.ones(1), "x": _Shell(str(tmp_path / "pwned"))}, tmp_path / "evil.pt")
    np.savez(tmp_path / "expected.npz",
             **{k.replace(".", "__"): v.numpy() for k, v in state.items()})
    environment = dict(os.environ, PYTHONPATH=os.path.abspath(SOURCE))
    result = subprocess.run([sys.executable, "-c", CHILD, str(tmp_path)], env=environment,
                            capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "ok"
    for name in ("from_hookgrad.pt", "from_hookgrad_legacy.pt"):
        back = torch.load(tmp_path / name, weights_only=True)
        assert list(back) == list(state) and back._metadata == state._metadata
        for key, value in state.items():
            assert back[key].dtype == value.dtype and back[key].stride() == value.stride()
            assert torch.equal(back[key], value)
    back = torch_load_file(tmp_path / "from_hookgrad.safetensors")
    for key, value in state.items():
        assert torch.equal(back[key], value)
