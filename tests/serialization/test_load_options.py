"""load's options as torch takes them: map_location, mmap; atomic saves that leave no debris."""
from __future__ import annotations

import io
import os
import pickle

import numpy as np
import pytest
import torch

import hookgrad
from hookgrad.serialization import _zip


@pytest.fixture
def checkpoint(tmp_path):
    path = tmp_path / "weights.pt"
    torch.save({"w": torch.arange(6.0).reshape(2, 3), "b": torch.ones(2, dtype=torch.int64)},
               path)
    return path


MAP_LOCATIONS = {
    "none": None, "str": "cpu", "device": torch.device("cpu"), "dict": {"cpu": "cpu"},
    "callable keeping the storage": lambda storage, location: storage,
    "callable returning None": lambda storage, location: None,
}


@pytest.mark.parametrize("name", sorted(MAP_LOCATIONS))
def test_map_location_accepts_what_torch_accepts(checkpoint, name):
    theirs = torch.load(checkpoint, map_location=MAP_LOCATIONS[name], weights_only=True)
    ours = hookgrad.load(checkpoint, map_location=MAP_LOCATIONS[name])
    for key in theirs:
        np.testing.assert_array_equal(ours[key].numpy(), theirs[key].numpy())


def test_map_location_takes_hookgrad_devices(checkpoint):
    ours = hookgrad.load(checkpoint, map_location=hookgrad.device("cpu"))
    np.testing.assert_array_equal(ours["b"].numpy(), [1, 1])


def test_a_callable_map_location_sees_each_storage_and_its_location(checkpoint):
    seen = []
    hookgrad.load(checkpoint, map_location=lambda storage, location: seen.append(
        (location, storage.size())))
    assert sorted(seen) == [("cpu", 2), ("cpu", 6)]


def _saved_on_cuda(monkeypatch) -> io.BytesIO:
    def on_cuda(key, storage_name, numel):
        return ("storage", _zip.TorchName("torch", storage_name), key, "cuda:0", numel)

    monkeypatch.setattr(_zip, "_storage_id", on_cuda)
    buffer = io.BytesIO()
    hookgrad.save({"w": hookgrad.arange(4.0)}, buffer)
    buffer.seek(0)
    return buffer


def test_a_cuda_checkpoint_needs_map_location_cpu_as_in_torch_without_cuda(monkeypatch):
    buffer = _saved_on_cuda(monkeypatch)
    if not torch.cuda.is_available():
        with pytest.raises(RuntimeError, match="CUDA"):
            torch.load(buffer, weights_only=True)
        buffer.seek(0)
    with pytest.raises(RuntimeError, match="map_location='cpu'"):
        hookgrad.load(buffer)
    for map_location in ("cpu", torch.device("cpu"), {"cuda:0": "cpu"}):
        buffer.seek(0)
        theirs = torch.load(buffer, map_location=map_location, weights_only=True)
        buffer.seek(0)
        ours = hookgrad.load(buffer, map_location=map_location)
        np.testing.assert_array_equal(ours["w"].numpy(), theirs["w"].numpy())


@pytest.mark.parametrize("map_location", ["cuda", "cuda:1", torch.device("meta")])
def test_mapping_to_a_device_hookgrad_lacks_raises(checkpoint, map_location):
    with pytest.raises(RuntimeError, match="CPU only"):
        hookgrad.load(checkpoint, map_location=map_location)


def test_mmap_maps_copy_on_write_and_leaves_the_file_alone(checkpoint):
    before = checkpoint.read_bytes()
    theirs = torch.load(checkpoint, mmap=True, weights_only=True)
    ours = hookgrad.load(checkpoint, mmap=True)
    np.testing.assert_array_equal(ours["w"].numpy(), theirs["w"].numpy())
    assert isinstance(ours["w"].numpy().base, np.memmap)
    ours["w"].add_(100.0)
    assert checkpoint.read_bytes() == before


def test_mmap_errors_match_torch(checkpoint, tmp_path):
    for lib in (torch, hookgrad):
        with open(checkpoint, "rb") as handle, pytest.raises(ValueError, match="file path"):
            lib.load(handle, mmap=True)
    legacy = tmp_path / "legacy.pt"
    torch.save(torch.ones(2), legacy, _use_new_zipfile_serialization=False)
    for lib in (torch, hookgrad):
        with pytest.raises(RuntimeError, match="mmap can only be used"):
            lib.load(legacy, mmap=True)


class _Stream(io.RawIOBase):
    """A read-only stream that cannot seek, like a pipe."""

    def __init__(self, data: bytes) -> None:
        self._data = io.BytesIO(data)

    def readable(self) -> bool:
        return True

    def readinto(self, buffer) -> int:
        return self._data.readinto(buffer)


def test_a_stream_that_cannot_seek_is_read_whole(checkpoint):
    ours = hookgrad.load(_Stream(checkpoint.read_bytes()))
    np.testing.assert_array_equal(ours["b"].numpy(), [1, 1])


# ---------------------------------------------------------------------------------------------
# atomic saves
# ---------------------------------------------------------------------------------------------
class _Fails:
    def __reduce__(self):
        raise ValueError("cannot pickle this")


class _Interrupts:
    def __reduce__(self):
        raise KeyboardInterrupt


@pytest.mark.parametrize("legacy", [False, True])
def test_a_successful_save_leaves_only_the_file_with_torchs_permissions(tmp_path, legacy):
    hookgrad.save(hookgrad.ones(3), tmp_path / "w.pt", _use_new_zipfile_serialization=not legacy)
    assert os.listdir(tmp_path) == ["w.pt"]
    torch.save(torch.ones(3), tmp_path / "t.pt")
    assert os.stat(tmp_path / "w.pt").st_mode == os.stat(tmp_path / "t.pt").st_mode


@pytest.mark.parametrize("failure,error", [(_Fails, ValueError), (_Interrupts, KeyboardInterrupt)])
def test_a_failed_save_leaves_the_old_file_and_no_temporary(tmp_path, failure, error):
    path = tmp_path / "w.pt"
    hookgrad.save({"w": hookgrad.ones(3)}, path)
    before = path.read_bytes()
    with pytest.raises(error):
        hookgrad.save({"w": hookgrad.zeros(3), "bad": failure()}, path)
    assert os.listdir(tmp_path) == ["w.pt"] and path.read_bytes() == before
    with pytest.raises(error):
        hookgrad.save({"bad": failure()}, tmp_path / "new.pt")
    assert os.listdir(tmp_path) == ["w.pt"]


def test_a_save_failing_while_writing_data_leaves_no_temporary(tmp_path, monkeypatch):
    def broken(*args):
        raise OSError("disk full")

    monkeypatch.setattr(_zip, "_write_record", broken)
    with pytest.raises(OSError, match="disk full"):
        hookgrad.save(hookgrad.ones(3), tmp_path / "w.pt")
    assert os.listdir(tmp_path) == []


def test_pickle_errors_have_the_standard_type():
    with pytest.raises(pickle.UnpicklingError):
        hookgrad.load(io.BytesIO(b"\x80\x02cos\nsystem\n."))


def test_torch_memory_maps_hookgrad_files(tmp_path):
    base = hookgrad.arange(1000.0).reshape(10, 100)
    hookgrad.save({"base": base, "view": base[3:, 5:], "index": hookgrad.arange(7)},
                  tmp_path / "ours.pt")
    theirs = torch.load(tmp_path / "ours.pt", mmap=True, weights_only=True)
    assert torch.equal(theirs["view"], torch.arange(1000.0).reshape(10, 100)[3:, 5:])
    ours = hookgrad.load(tmp_path / "ours.pt", mmap=True)
    np.testing.assert_array_equal(ours["view"].numpy(), theirs["view"].numpy())
    assert np.shares_memory(ours["view"].numpy(), ours["base"].numpy())
