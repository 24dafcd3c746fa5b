"""hookgrad.utils.safetensors against safetensors.torch: the same files, both ways."""
from __future__ import annotations

import os

import numpy as np
import pytest
import safetensors.torch as reference
import torch

import hookgrad
from hookgrad.utils import safetensors as ours

DTYPES = ["float32", "float64", "float16", "int64", "int32", "int16", "int8", "uint8", "bool"]


def _tensors(lib, dtype: str):
    values = np.random.default_rng(0).normal(size=(3, 4)) * 50
    array = (values > 0) if dtype == "bool" else values.astype(dtype)
    return {"matrix": lib.from_numpy(array.copy()), "scalar": lib.from_numpy(np.array(array[1, 2])),
            "empty": lib.from_numpy(array[:0].copy())}


def _assert_equal(hookgrad_tensors, torch_tensors):
    assert sorted(hookgrad_tensors) == sorted(torch_tensors)
    for name, theirs in torch_tensors.items():
        mine = hookgrad_tensors[name]
        assert str(mine.dtype) == str(theirs.dtype) and tuple(mine.shape) == tuple(theirs.shape)
        np.testing.assert_array_equal(mine.numpy(), theirs.numpy())


@pytest.mark.parametrize("dtype", DTYPES)
def test_files_written_by_hookgrad_load_in_torch(tmp_path, dtype):
    tensors = _tensors(hookgrad, dtype)
    ours.save_file(tensors, tmp_path / "ours.safetensors", metadata={"format": "pt"})
    _assert_equal(tensors, reference.load_file(tmp_path / "ours.safetensors"))
    _assert_equal(tensors, reference.load(ours.save(tensors)))


@pytest.mark.parametrize("dtype", DTYPES)
def test_files_written_by_torch_load_in_hookgrad(tmp_path, dtype):
    tensors = _tensors(torch, dtype)
    reference.save_file(tensors, tmp_path / "theirs.safetensors")
    _assert_equal(ours.load_file(tmp_path / "theirs.safetensors"), tensors)
    _assert_equal(ours.load(reference.save(tensors)), tensors)
    _assert_equal(hookgrad.load(tmp_path / "theirs.safetensors"), tensors)


def test_loaded_tensors_are_writable_and_independent_of_the_file(tmp_path):
    reference.save_file({"w": torch.ones(3)}, tmp_path / "w.safetensors")
    loaded = ours.load_file(tmp_path / "w.safetensors")
    loaded["w"].add_(1.0)
    np.testing.assert_array_equal(ours.load_file(tmp_path / "w.safetensors")["w"].numpy(),
                                  [1.0, 1.0, 1.0])


def test_same_files_byte_for_byte_as_safetensors_torch(tmp_path):
    mine = _tensors(hookgrad, "float32")
    theirs = _tensors(torch, "float32")
    metadata = {"format": "pt"}
    assert ours.save(mine, metadata) == reference.save(theirs, metadata)


def test_shared_memory_is_refused_as_safetensors_torch_refuses_it():
    base_torch = torch.arange(6.0)
    with pytest.raises(RuntimeError, match="share memory"):
        reference.save({"a": base_torch, "b": base_torch[:3]})
    base = hookgrad.arange(6.0)
    with pytest.raises(RuntimeError, match="share memory"):
        ours.save({"a": base, "b": base[:3]})


def test_non_contiguous_tensors_are_refused_as_safetensors_torch_refuses_them():
    with pytest.raises(ValueError, match="non contiguous"):
        reference.save({"t": torch.ones(2, 3).t()})
    with pytest.raises(ValueError, match="non contiguous"):
        ours.save({"t": hookgrad.ones(2, 3).t()})


def test_values_that_are_not_tensors_are_refused():
    with pytest.raises(ValueError, match="`w` is invalid"):
        ours.save({"w": [1.0]})


@pytest.mark.parametrize("dtype", [torch.complex64, torch.uint16])
def test_a_dtype_hookgrad_lacks_raises_naming_it(tmp_path, dtype):
    name = str(dtype).split(".")[1]
    assert not hasattr(hookgrad, name), f"hookgrad has {dtype} now: test its round trip instead"
    reference.save_file({"w": torch.zeros(2, dtype=dtype)}, tmp_path / "w.safetensors")
    with pytest.raises(TypeError, match=rf"torch\.{name}.*'w'"):
        ours.load_file(tmp_path / "w.safetensors")


def test_save_file_is_atomic(tmp_path, monkeypatch):
    import safetensors.numpy

    ours.save_file({"w": hookgrad.ones(2)}, tmp_path / "w.safetensors")
    assert os.listdir(tmp_path) == ["w.safetensors"]

    def interrupted(arrays, filename, metadata=None):
        with open(filename, "wb") as handle:
            handle.write(b"partial")
        raise KeyboardInterrupt

    monkeypatch.setattr(safetensors.numpy, "save_file", interrupted)
    with pytest.raises(KeyboardInterrupt):
        ours.save_file({"w": hookgrad.zeros(2)}, tmp_path / "w.safetensors")
    assert os.listdir(tmp_path) == ["w.safetensors"]
    np.testing.assert_array_equal(ours.load_file(tmp_path / "w.safetensors")["w"].numpy(),
                                  [1.0, 1.0])


def test_a_device_other_than_cpu_is_refused(tmp_path):
    ours.save_file({"w": hookgrad.ones(2)}, tmp_path / "w.safetensors")
    with pytest.raises(RuntimeError, match="CPU only"):
        ours.load_file(tmp_path / "w.safetensors", device="cuda:0")


def _tied(lib):
    lib.manual_seed(0)
    model = lib.nn.Sequential(lib.nn.Linear(4, 4), lib.nn.Tanh(), lib.nn.Linear(4, 4))
    model[2].weight = model[0].weight  # tied weights share memory
    return model


def _outputs(lib, model):
    with lib.no_grad():
        return model(lib.from_numpy(np.linspace(-1, 1, 8, dtype=np.float32).reshape(2, 4)))


def test_tied_models_move_both_ways_through_save_model(tmp_path):
    mine = _tied(hookgrad)
    mine.load_state_dict(_tied(torch).state_dict())
    mine_path, theirs_path = tmp_path / "mine.safetensors", tmp_path / "theirs.safetensors"
    ours.save_model(mine, mine_path)
    reference.save_model(_tied(torch), theirs_path)
    with open(mine_path, "rb") as a, open(theirs_path, "rb") as b:
        assert a.read() == b.read()  # same names kept, same metadata, same bytes
    theirs = _tied(torch)
    assert reference.load_model(theirs, mine_path) == (set(), [])
    np.testing.assert_allclose(_outputs(torch, theirs).numpy(), _outputs(hookgrad, mine).numpy(),
                               rtol=1e-6)
    fresh = _tied(hookgrad)
    assert ours.load_model(fresh, theirs_path) == (set(), [])
    np.testing.assert_allclose(_outputs(hookgrad, fresh).numpy(),
                               _outputs(torch, _tied(torch)).numpy(), rtol=1e-6)


def test_load_model_reports_missing_keys_as_safetensors_torch_does(tmp_path):
    ours.save_file({"weight": hookgrad.ones(2, 3)}, tmp_path / "w.safetensors")
    for lib, module in ((reference, torch), (ours, hookgrad)):
        with pytest.raises(RuntimeError, match='Missing key.*"bias"'):
            lib.load_model(module.nn.Linear(3, 2), tmp_path / "w.safetensors")
        missing, unexpected = lib.load_model(module.nn.Linear(3, 2), tmp_path / "w.safetensors",
                                             strict=False)
        assert set(missing) == {"bias"} and unexpected == []
