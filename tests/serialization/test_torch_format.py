"""Checkpoints between hookgrad and torch: what one writes, the other reads, value for value."""
from __future__ import annotations

import contextlib
import io
import pathlib
from collections import OrderedDict

import numpy as np
import pytest
import torch

import hookgrad

DTYPES = ["float32", "float64", "float16", "int64", "int32", "int16", "int8", "uint8", "bool"]


def sample(dtype: str, shape=(3, 4), seed: int = 0) -> np.ndarray:
    values = np.random.default_rng(seed).normal(size=shape) * 50
    return (values > 0) if dtype == "bool" else values.astype(dtype)


def assert_same(ours, theirs) -> None:
    """A hookgrad tensor and a torch tensor: same kind, dtype, shape, strides, values, grad flag."""
    assert isinstance(ours, hookgrad.Tensor) and isinstance(theirs, torch.Tensor)
    assert isinstance(ours, hookgrad.nn.Parameter) == isinstance(theirs, torch.nn.Parameter)
    assert str(ours.dtype) == str(theirs.dtype)
    assert tuple(ours.shape) == tuple(theirs.shape)
    assert ours.requires_grad == theirs.requires_grad
    assert ours.stride() == theirs.stride()  # empty tensors' and size-1 dims' strides too
    np.testing.assert_array_equal(ours.detach().numpy(), theirs.detach().numpy())


def through_torch(obj, **save_args):
    buffer = io.BytesIO()
    hookgrad.save(obj, buffer, **save_args)
    buffer.seek(0)
    return torch.load(buffer, weights_only=True)


def through_hookgrad(obj, **save_args):
    buffer = io.BytesIO()
    torch.save(obj, buffer, **save_args)
    buffer.seek(0)
    return hookgrad.load(buffer)


LAYOUTS = {
    "contiguous": lambda t: t,
    "0-d": lambda t: t[1, 2],
    "empty": lambda t: t[:0],
    "transposed": lambda t: t.t(),
    "strided": lambda t: t[::2, 1::2],
    "column": lambda t: t[:, 1],
    "expanded": lambda t: t[1:2].expand(3, 4),
    "empty transposed": lambda t: t[:0].t(),
    "empty column": lambda t: t[:, 1:1],
    "one element": lambda t: t[2:3, 1:2],
    "row of one": lambda t: t[:, 2:3].t(),
    "channels last": lambda t: t.reshape(1, 3, 2, 2).contiguous(memory_format=torch.channels_last
                                                                  if isinstance(t, torch.Tensor)
                                                                  else hookgrad.channels_last),
}
FORMATS = [{}, {"_use_new_zipfile_serialization": False}]


@pytest.mark.parametrize("save_args", FORMATS, ids=["zip", "legacy"])
@pytest.mark.parametrize("layout", sorted(LAYOUTS))
@pytest.mark.parametrize("dtype", DTYPES)
def test_hookgrad_tensor_loads_in_torch(dtype, layout, save_args):
    ours = LAYOUTS[layout](hookgrad.from_numpy(sample(dtype)))
    assert_same(ours, through_torch(ours, **save_args))


@pytest.mark.parametrize("save_args", FORMATS, ids=["zip", "legacy"])
@pytest.mark.parametrize("layout", sorted(LAYOUTS))
@pytest.mark.parametrize("dtype", DTYPES)
def test_torch_tensor_loads_in_hookgrad(dtype, layout, save_args):
    theirs = LAYOUTS[layout](torch.from_numpy(sample(dtype)))
    assert_same(through_hookgrad(theirs, **save_args), theirs)


@pytest.mark.parametrize("save_args", FORMATS, ids=["zip", "legacy"])
def test_weights_only_false_reads_torch_files_into_hookgrad_tensors(save_args):
    state = _twin_state(torch)
    buffer = io.BytesIO()
    torch.save(state, buffer, **save_args)
    buffer.seek(0)
    loaded = hookgrad.load(buffer, weights_only=False)
    assert loaded._metadata == state._metadata
    for key, value in state.items():
        assert_same(loaded[key], value)


def test_a_bare_storage_saved_by_torch_loads_with_its_bytes():
    storage = through_hookgrad(torch.arange(3, dtype=torch.int32).untyped_storage())
    assert storage.nbytes() == 12
    assert storage.tolist() == list(np.arange(3, dtype=np.int32).view(np.uint8))


@pytest.mark.parametrize("save_args", FORMATS, ids=["zip", "legacy"])
def test_views_saved_by_torch_share_memory_in_hookgrad(save_args):
    base = torch.arange(24.0).reshape(4, 6)
    views = {"base": base, "row": base[2], "t": base.t(), "corner": base[1:, 3:]}
    loaded = through_hookgrad(views, **save_args)
    for name, view in views.items():
        assert_same(loaded[name], view)
        assert (loaded[name].storage_offset() - loaded["base"].storage_offset()
                == view.storage_offset())
    loaded["base"].mul_(2)  # one storage: the views see the change, as in torch
    np.testing.assert_array_equal(loaded["corner"].numpy(), (base[1:, 3:] * 2).numpy())


@pytest.mark.parametrize("save_args", FORMATS, ids=["zip", "legacy"])
def test_views_saved_by_hookgrad_share_one_storage_in_torch(save_args):
    base = hookgrad.arange(24.0).reshape(4, 6)
    views = {"row": base[2], "base": base, "t": base.t(), "corner": base[1:, 3:]}
    loaded = through_torch(views, **save_args)
    pointers = {name: t.untyped_storage().data_ptr() for name, t in loaded.items()}
    assert len(set(pointers.values())) == 1
    for name, view in views.items():
        assert_same(view, loaded[name])
        assert (loaded[name].storage_offset() - loaded["base"].storage_offset()
                == view.storage_offset() - base.storage_offset())
    loaded["base"].mul_(2)
    np.testing.assert_array_equal(loaded["corner"].numpy(), base[1:, 3:].numpy() * 2)


def test_only_the_viewed_part_of_a_large_array_is_written():
    big = hookgrad.zeros(1000, 1000)
    buffer = io.BytesIO()
    hookgrad.save(big[3, :10], buffer)
    assert len(buffer.getvalue()) < 4096


@pytest.mark.parametrize("requires_grad", [True, False])
def test_parameters_keep_their_class_and_requires_grad_both_ways(requires_grad):
    ours = hookgrad.nn.Parameter(hookgrad.from_numpy(sample("float32")), requires_grad)
    assert_same(ours, through_torch(ours))
    theirs = torch.nn.Parameter(torch.from_numpy(sample("float64")), requires_grad)
    assert_same(through_hookgrad(theirs), theirs)


def test_a_leaf_that_requires_grad_loads_requiring_grad_both_ways():
    ours = hookgrad.ones(3, requires_grad=True)
    assert_same(ours, through_torch(ours))
    theirs = torch.ones(3, dtype=torch.float64, requires_grad=True)
    assert_same(through_hookgrad(theirs), theirs)


def _nested(lib):
    x = lib.arange(6.0).reshape(2, 3)
    return {"tensors": [x, (x[0], {"deep": x.t()})], "size": lib.Size([2, 3]),
            "dtype": lib.float16, "device": lib.device("cpu"), "set": {1, 2},
            "complex": 1 + 2j, "bytes": b"\x00\xff", "none": None,
            "flags": (True, False), "float": 0.25, "int": -7, "text": "ünïcode"}


def test_frozenset_round_trips_in_hookgrad():  # torch's weights_only refuses frozenset
    buffer = io.BytesIO()
    hookgrad.save({"frozen": frozenset({"a", 1})}, buffer)
    buffer.seek(0)
    assert hookgrad.load(buffer) == {"frozen": frozenset({"a", 1})}


def _assert_nested_equal(ours, theirs):
    assert type(ours).__name__ == type(theirs).__name__ or isinstance(ours, type(theirs))
    if isinstance(theirs, torch.Tensor):
        assert_same(ours, theirs)
    elif isinstance(theirs, dict):
        assert list(ours) == list(theirs)
        for key in theirs:
            _assert_nested_equal(ours[key], theirs[key])
    elif isinstance(theirs, (list, tuple)) and not isinstance(theirs, torch.Size):
        assert len(ours) == len(theirs)
        for a, b in zip(ours, theirs):
            _assert_nested_equal(a, b)
    else:
        assert str(ours) == str(theirs) and repr(ours) == repr(theirs)


@pytest.mark.parametrize("save_args", FORMATS, ids=["zip", "legacy"])
def test_nested_containers_round_trip_both_ways(save_args):
    _assert_nested_equal(_nested(hookgrad), through_torch(_nested(hookgrad), **save_args))
    _assert_nested_equal(through_hookgrad(_nested(torch), **save_args), _nested(torch))


def _twin_state(lib):
    lib.manual_seed(0)
    model = lib.nn.Sequential(lib.nn.Linear(3, 4), lib.nn.BatchNorm1d(4), lib.nn.Linear(4, 2))
    return model.state_dict()


def test_state_dict_with_metadata_round_trips_both_ways():
    ours = _twin_state(hookgrad)
    loaded = through_torch(ours)
    assert type(loaded) is OrderedDict and loaded._metadata == ours._metadata
    assert list(loaded) == list(ours)
    for key in ours:
        assert_same(ours[key], loaded[key])
    theirs = _twin_state(torch)
    back = through_hookgrad(theirs)
    assert type(back) is OrderedDict and back._metadata == theirs._metadata
    for key in theirs:
        assert_same(back[key], theirs[key])


def _adam_after_steps(lib, steps=2):
    lib.manual_seed(0)
    weight = lib.nn.Parameter(lib.arange(6.0).reshape(2, 3) / 10)
    optimizer = lib.optim.Adam([weight], lr=0.1, betas=(0.8, 0.9))
    for _ in range(steps):
        optimizer.zero_grad()
        (weight * weight).sum().backward()
        optimizer.step()
    return weight, optimizer


def test_hookgrad_optimizer_state_continues_in_torch():
    weight, optimizer = _adam_after_steps(hookgrad)
    state = through_torch({"weight": weight, "optimizer": optimizer.state_dict()})
    twin = torch.nn.Parameter(state["weight"].detach().clone())
    torch_optimizer = torch.optim.Adam([twin], lr=0.5)
    torch_optimizer.load_state_dict(state["optimizer"])
    for lib_weight, lib_optimizer in ((weight, optimizer), (twin, torch_optimizer)):
        lib_optimizer.zero_grad()
        (lib_weight * lib_weight).sum().backward()
        lib_optimizer.step()
    np.testing.assert_allclose(weight.detach().numpy(), twin.detach().numpy(), rtol=1e-6)


def test_torch_optimizer_state_continues_in_hookgrad():
    weight, optimizer = _adam_after_steps(torch)
    state = through_hookgrad({"weight": weight, "optimizer": optimizer.state_dict()})
    twin = hookgrad.nn.Parameter(state["weight"].detach().clone())
    ours = hookgrad.optim.Adam([twin], lr=0.5)
    ours.load_state_dict(state["optimizer"])
    for lib_weight, lib_optimizer in ((weight, optimizer), (twin, ours)):
        lib_optimizer.zero_grad()
        (lib_weight * lib_weight).sum().backward()
        lib_optimizer.step()
    np.testing.assert_allclose(twin.detach().numpy(), weight.detach().numpy(), rtol=1e-6)


@pytest.mark.parametrize("target", ["str", "pathlib", "file"])
def test_paths_and_open_files_both_ways(tmp_path, target):
    path = tmp_path / "checkpoint.pt"

    def where(mode):
        if target == "file":
            return open(path, mode)
        return contextlib.nullcontext(str(path) if target == "str" else pathlib.Path(path))

    ours = {"w": hookgrad.arange(5), "b": hookgrad.ones(2, 2)}
    with where("wb") as f:
        hookgrad.save(ours, f)
    with where("rb") as f:
        loaded = torch.load(f, weights_only=True)
    assert_same(ours["b"], loaded["b"])
    with where("wb") as f:
        torch.save(loaded, f)
    with where("rb") as f:
        back = hookgrad.load(f)
    assert_same(back["w"], loaded["w"])


def test_zip_layout_matches_torch(tmp_path):
    import zipfile

    hookgrad.save({"a": hookgrad.ones(3), "b": hookgrad.zeros(2, dtype=hookgrad.int64)},
                  tmp_path / "ours.pt")
    torch.save({"a": torch.ones(3), "b": torch.zeros(2, dtype=torch.int64)}, tmp_path / "t.pt")
    ours = zipfile.ZipFile(tmp_path / "ours.pt")
    theirs = zipfile.ZipFile(tmp_path / "t.pt")
    strip = lambda names: sorted(n.split("/", 1)[1] for n in names)  # noqa: E731
    assert strip(ours.namelist()) == strip(theirs.namelist())
    raw = (tmp_path / "ours.pt").read_bytes()
    for info in ours.infolist():
        assert info.compress_type == zipfile.ZIP_STORED
        if "/data/" in info.filename:
            name_length, extra_length = np.frombuffer(
                raw[info.header_offset + 26:info.header_offset + 30], "<u2")
            assert (info.header_offset + 30 + name_length + extra_length) % 64 == 0
    for record in ("byteorder", "version", ".format_version", ".storage_alignment"):
        assert ours.read(f"archive/{record}") == theirs.read(f"t/{record}")
