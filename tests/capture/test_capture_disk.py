"""capture(..., to=dir): streamed records read back bit-exact, with and without hookgrad, from
a hookgrad model and from its torch twin (``lib``)."""
import gc
import json
from pathlib import Path

import capture_models as _models
import hypothesis.extra.numpy as hnp
import hypothesis.strategies as st
import numpy as np
import pytest
import torch
from conftest import assert_close
from hypothesis import given, settings
from safetensors.numpy import load_file

import hookgrad
from hookgrad.capture import KINDS, capture, load

pytestmark = pytest.mark.filterwarnings("ignore:Full backward hook is firing")
LAYERS = ["inp", "shared", "pair", "head"]
on_both = pytest.mark.parametrize("lib", _models.libraries(), ids=_models.lib_id)


def run(to=None, steps=2, lib=hookgrad, **options):
    model = _models.build(lib, dtype=np.float32)
    with capture(model, layers=LAYERS, kinds=KINDS, to=to, **options) as cap:
        for seed in range(steps):
            _models.step(lib, model, seed=seed, dtype=np.float32)
    return cap


@on_both
@pytest.mark.parametrize("file_format", ["safetensors", "npy"])
def test_disk_round_trip_is_bit_exact(tmp_path, lib, file_format):
    memory = run(lib=lib)
    streamed = run(tmp_path / "run1", lib=lib, format=file_format)
    loaded = load(tmp_path / "run1")
    assert loaded.keys() == streamed.keys() == memory.keys()
    for key in memory:
        for reader in (streamed, loaded):
            arrays = reader[key]
            assert len(arrays) == len(memory[key])
            for got, want in zip(arrays, memory[key]):
                assert got.dtype == want.dtype and got.shape == want.shape
                assert got.tobytes() == want.tobytes(), key
    assert str(loaded.summary()) == str(memory.summary())
    assert ([(r.key, r.step, r.call) for r in loaded.records()]
            == [(r.key, r.step, r.call) for r in memory.records()])


def test_capture_load_is_the_same_reader(tmp_path):
    run(tmp_path)
    assert capture.load(tmp_path).keys() == load(tmp_path).keys()


def index_lines(root):
    return [json.loads(line) for line in (Path(root) / "index.jsonl").read_text().splitlines()]


@on_both
def test_safetensors_files_are_readable_without_hookgrad(tmp_path, lib):
    memory = run(lib=lib)
    run(tmp_path, lib=lib, format="safetensors")
    lines = index_lines(tmp_path)
    assert {"module", "kind", "call", "step", "shape", "dtype", "file", "key"} <= set(lines[0])
    by_key = {}
    for entry in lines:
        array = load_file(str(tmp_path / entry["file"]))[entry["key"]]
        assert list(array.shape) == entry["shape"] and array.dtype.name == entry["dtype"]
        by_key.setdefault(entry["key"], []).append(((entry["step"], entry["call"]), array))
    for key, pairs in by_key.items():
        arrays = [array for _, array in sorted(pairs, key=lambda pair: pair[0])]
        assert all(a.tobytes() == b.tobytes() for a, b in zip(arrays, memory[key]))


@on_both
def test_npy_files_are_readable_with_numpy(tmp_path, lib):
    memory = run(steps=1, lib=lib)
    run(tmp_path, steps=1, lib=lib, format="npy")
    for entry in index_lines(tmp_path):
        array = np.load(tmp_path / entry["file"], allow_pickle=False)
        position = [r.call for r in memory.records(entry["key"])].index(entry["call"])
        assert array.tobytes() == memory[entry["key"]][position].tobytes()


def reachable_arrays_and_size(root):
    """Arrays and non-scalar objects reachable from ``root``, not entering modules or tensors
    (the user's)."""
    seen, stack, arrays, objects = {id(root)}, [root], 0, 0
    while stack:
        item = stack.pop()
        if isinstance(item, np.ndarray):
            arrays += 1
            continue
        for child in gc.get_referents(item):
            if id(child) in seen or isinstance(child, (type, hookgrad.nn.Module, hookgrad.Tensor,
                                                       torch.nn.Module, torch.Tensor)):
                continue
            if type(child).__name__ in ("module", "function", "builtin_function_or_method"):
                continue
            seen.add(id(child))
            stack.append(child)
            objects += not isinstance(child, (int, float, str))
    return arrays, objects


@on_both
def test_streaming_keeps_memory_bounded(tmp_path, lib):
    model = _models.build(lib, dtype=np.float32)
    sizes = []
    with capture(model, layers=LAYERS, kinds=KINDS, to=tmp_path) as cap:
        for seed in range(60):
            _models.step(lib, model, seed=seed, dtype=np.float32)
            if seed in (10, 59):
                sizes.append(reachable_arrays_and_size(cap))
    assert sizes[0][0] == sizes[1][0] == 0  # no array held
    assert sizes[1][1] == sizes[0][1]        # and nothing grows with the number of steps
    assert len(index_lines(tmp_path)) == 60 * len(run(steps=1, lib=lib).records())


@on_both
def test_records_are_readable_while_streaming(tmp_path, lib):
    model = _models.build(lib, dtype=np.float32)
    with capture(model, layers="head", kinds=("output",), to=tmp_path) as cap:
        out = model(*_models.inputs(lib, dtype=np.float32))
        assert cap["head.output"][0].tobytes() == out.detach().numpy().tobytes()


@on_both
def test_an_existing_capture_is_not_overwritten_silently(tmp_path, lib):
    run(tmp_path, steps=2, lib=lib)
    with pytest.raises(FileExistsError, match="overwrite=True"):
        run(tmp_path, steps=1, lib=lib)
    run(tmp_path, steps=1, lib=lib, overwrite=True)
    assert {r.step for r in load(tmp_path).records()} == {0}
    listed = {entry["file"] for entry in index_lines(tmp_path)}
    on_disk = {str(p.relative_to(tmp_path)) for p in tmp_path.rglob("*") if p.is_file()
               if p.name not in ("index.jsonl", "capture.json")}
    assert on_disk == listed


def test_load_of_a_directory_without_capture_is_a_clear_error(tmp_path):
    with pytest.raises(FileNotFoundError, match="index.jsonl is missing"):
        load(tmp_path)


@on_both
def test_capture_json_names_the_framework_modules_and_file_format(tmp_path, lib):
    run(tmp_path, steps=1, lib=lib, format="npy")
    meta = json.loads((tmp_path / "capture.json").read_text())
    assert (meta["framework"], meta["file_format"]) == (lib.__name__, "npy")
    assert meta["modules"] == {"inp": "Block", "shared": "Block", "pair": "Pair", "head": "Block"}


DTYPES = [np.float16, np.float32, np.float64, np.int8, np.uint8, np.int16, np.int32, np.int64,
          np.bool_]


@on_both
@settings(max_examples=25, deadline=None)
@given(dtype=st.sampled_from(DTYPES), file_format=st.sampled_from(["safetensors", "npy"]),
       shape=hnp.array_shapes(min_dims=0, max_dims=3, min_side=0, max_side=4), data=st.data())
def test_any_dtype_and_shape_round_trips_bit_exact(tmp_path_factory, lib, dtype, file_format,
                                                   shape, data):
    array = data.draw(hnp.arrays(dtype, shape))  # NaN, inf, -0.0 and subnormals included
    model = lib.nn.Sequential(lib.nn.Identity())
    root = tmp_path_factory.mktemp("run")
    with capture(model, layers="0", kinds=("input",), to=root, format=file_format) as cap:
        model(lib.from_numpy(np.array(array, copy=True)))
    for reader in (cap, load(root)):
        (got,) = reader["0.input"]
        assert got.dtype == array.dtype and got.shape == array.shape
        assert got.tobytes() == array.tobytes()
    assert str(load(root).summary()) == str(cap.summary())


@pytest.mark.parametrize("file_format", ["safetensors", "npy"])
def test_runs_written_from_either_framework_read_the_same(tmp_path, file_format):
    ours = load(run(tmp_path / "hookgrad", format=file_format).path)
    theirs = load(run(tmp_path / "torch", lib=torch, format=file_format).path)
    assert ours.keys() == theirs.keys()
    assert ([(r.key, r.step, r.call, r.shape, r.dtype) for r in ours.records()]
            == [(r.key, r.step, r.call, r.shape, r.dtype) for r in theirs.records()])
    for key in ours:
        for got, want in zip(ours[key], theirs[key]):
            assert_close(got, want, what=key)


def tear_line(root, number):
    """Cut index line ``number`` (1-based) in half, as a crash while appending it would."""
    path = Path(root) / "index.jsonl"
    lines = path.read_text().splitlines(keepends=True)
    lines[number - 1] = lines[number - 1][:len(lines[number - 1]) // 2]
    path.write_text("".join(lines[:number] if number == len(lines) else lines))
    return len(lines)


@pytest.mark.parametrize("newline", [False, True])
def test_a_torn_last_index_line_is_skipped_with_a_warning(tmp_path, newline):
    run(tmp_path, steps=2)
    whole = index_lines(tmp_path)
    count = tear_line(tmp_path, len(whole))
    if newline:
        with open(tmp_path / "index.jsonl", "a") as file:
            file.write("\n\n")
    with pytest.warns(RuntimeWarning, match=rf"index.jsonl:{count}: skipping a torn last line"):
        records = load(tmp_path).records()
    assert sorted((r.key, r.step, r.call) for r in records) == sorted(
        (entry["key"], entry["step"], entry["call"]) for entry in whole[:-1])
    with pytest.warns(RuntimeWarning):
        assert len(load(tmp_path)[whole[0]["key"]]) == 2  # every complete record still reads


def test_a_torn_line_before_the_last_is_an_error_naming_it(tmp_path):
    run(tmp_path, steps=1)
    tear_line(tmp_path, 3)
    with pytest.raises(ValueError, match=r"index.jsonl:3: not a capture index line"):
        load(tmp_path).records()
