"""range (deprecated, inclusive), empty_permuted, frombuffer, from_file and DLPack exchange,
against torch: values, dtypes, strides, shared memory, warnings and errors."""
import array
import warnings

import numpy as np
import pytest
import torch

import hookgrad
from conftest import assert_close, assert_same_error

LIBS = (torch, hookgrad)


def _quietly(fn):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return fn()


# -- range --------------------------------------------------------------------------------------
@pytest.mark.parametrize("args,kwargs", [
    ((1, 4), {}), ((0, 1, 0.25), {}), ((5, 0, -1), {}), ((0.5, 2.6), {}), ((0, 1, 0.1), {}),
    ((1, 4), {"dtype": "int64"}), ((1.0, 3), {"dtype": "int32"}), ((1, 3), {"dtype": "float64"}),
    ((1, 3), {"requires_grad": True}), ((2, 2), {}),
])
def test_range_values(args, kwargs):
    results = []
    for lib in LIBS:
        options = dict(kwargs)
        if "dtype" in options:
            options["dtype"] = getattr(lib, options["dtype"])
        results.append(_quietly(lambda: lib.range(*args, **options)))
    assert_close(results[1], results[0])
    assert results[1].requires_grad == results[0].requires_grad


def test_range_warns_as_torch():
    messages = []
    for lib in LIBS:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            lib.range(0, 2)
        messages.append([(w.category, str(w.message)) for w in caught])
    assert messages[1] == messages[0]
    assert len(messages[0]) == 1


@pytest.mark.parametrize("args", [(0, 1, 0), (3, 0), (0, 3, -1)])
def test_range_errors(args):
    _quietly(lambda: assert_same_error(lambda lib: lib.range(*args)))


def test_range_needs_an_end():
    for lib in LIBS:
        with pytest.raises(TypeError, match="end"):
            lib.range(1)


def test_range_takes_tensor_bounds():
    results = [_quietly(lambda: lib.range(lib.tensor(1), lib.tensor(3))) for lib in LIBS]
    assert_close(results[1], results[0])


# -- empty_permuted -----------------------------------------------------------------------------
@pytest.mark.parametrize("size,layout", [((2, 3, 4), (2, 0, 1)), ((2, 3, 4, 5), (0, 2, 3, 1)),
                                         ((3, 2), (1, 0)), ((2, 0, 3), (1, 2, 0)), ((), ())])
def test_empty_permuted_strides(size, layout):
    made = [lib.empty_permuted(size, layout, dtype=lib.float64) for lib in LIBS]
    assert made[1].shape == made[0].shape
    assert made[1].stride() == made[0].stride()
    assert made[1].dtype == hookgrad.float64


@pytest.mark.parametrize("size,layout", [((2, 3), (0,)), ((2, 3), (0, 0)), ((2, 3), (0, 2))])
def test_empty_permuted_errors(size, layout):
    assert_same_error(lambda lib: lib.empty_permuted(size, layout))


def test_empty_permuted_requires_grad():
    for lib in LIBS:
        assert lib.empty_permuted((2, 2), (1, 0), requires_grad=True).requires_grad
    assert_same_error(lambda lib: lib.empty_permuted((2,), (0,), dtype=lib.int64,
                                                     requires_grad=True))


# -- frombuffer ---------------------------------------------------------------------------------
BUFFER = bytes(range(1, 17))


@pytest.mark.parametrize("dtype,kwargs", [
    ("int32", {}), ("int32", {"count": 1, "offset": 4}), ("float64", {}), ("int16", {"count": -2}),
    ("uint8", {"offset": 15}), ("float32", {"requires_grad": True}), ("int8", {"count": 3}),
])
def test_frombuffer_values(dtype, kwargs):
    results = [lib.frombuffer(bytearray(BUFFER), dtype=getattr(lib, dtype), **kwargs)
               for lib in LIBS]
    assert_close(results[1], results[0])
    assert results[1].requires_grad == results[0].requires_grad


def test_frombuffer_shares_memory():
    for lib in LIBS:
        buffer = bytearray(8)
        tensor = lib.frombuffer(buffer, dtype=lib.int8)
        buffer[0] = 9
        tensor[1] = 7
        assert tensor[0].item() == 9 and buffer[1] == 7


def test_frombuffer_of_array_module_and_read_only_bytes():
    for lib in LIBS:
        floats = lib.frombuffer(array.array("f", [1.5, 2.5]), dtype=lib.float32)
        assert floats.tolist() == [1.5, 2.5]
    warned = []
    for lib in LIBS:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            assert lib.frombuffer(BUFFER, dtype=lib.uint8).tolist() == list(BUFFER)
        warned.append(any("not writable" in str(w.message) for w in caught))
    assert warned[1] == warned[0]


@pytest.mark.parametrize("buffer,kwargs", [
    (bytearray(8), {"dtype": "int32", "count": 3}), (bytearray(8), {"dtype": "int32", "offset": 8}),
    (bytearray(8), {"dtype": "int32", "offset": 2}), (bytearray(8), {"dtype": "int32", "count": 0}),
    (bytearray(8), {"dtype": "int32", "offset": -1}), (bytearray(), {"dtype": "int8"}),
    (3, {"dtype": "int8"}), (bytearray(8), {"dtype": "int64", "requires_grad": True}),
])
def test_frombuffer_errors(buffer, kwargs):
    def call(lib):
        options = dict(kwargs, dtype=getattr(lib, kwargs["dtype"]))
        return lib.frombuffer(buffer, **options)
    assert_same_error(call)


# -- from_file ----------------------------------------------------------------------------------
def test_from_file_reads_and_maps(tmp_path):
    path = tmp_path / "data.bin"
    np.arange(4, dtype=np.float32).tofile(path)
    for args, kwargs in [((), {"size": 4}), ((False, 2), {}), ((), {"size": 2, "dtype": "float64"}),
                         ((), {})]:
        results = []
        for lib in LIBS:
            options = dict(kwargs)
            if "dtype" in options:
                options["dtype"] = getattr(lib, options["dtype"])
            results.append(lib.from_file(str(path), *args, **options))
        assert_close(results[1], results[0])


def test_from_file_shared_writes_through_and_private_does_not(tmp_path):
    for lib in LIBS:
        path = tmp_path / f"{lib.__name__}.bin"
        np.arange(4, dtype=np.float32).tofile(path)
        lib.from_file(str(path), True, 4)[0] = 7
        lib.from_file(str(path), False, 4)[1] = 9
        assert np.fromfile(path, dtype=np.float32).tolist() == [7, 1, 2, 3]


def test_from_file_shared_creates_and_grows(tmp_path):
    sizes = []
    for lib in LIBS:
        fresh, short = tmp_path / f"{lib.__name__}-new.bin", tmp_path / f"{lib.__name__}-s.bin"
        made = lib.from_file(str(fresh), True, 3)
        np.arange(4, dtype=np.float32).tofile(short)
        grown = lib.from_file(str(short), True, 8)
        sizes.append((made.tolist(), fresh.stat().st_size, grown.tolist(), short.stat().st_size))
    assert sizes[1] == sizes[0]


def test_from_file_errors(tmp_path):
    path = tmp_path / "data.bin"
    np.arange(4, dtype=np.float32).tofile(path)
    assert_same_error(lambda lib: lib.from_file(str(path), size=5))
    assert_same_error(lambda lib: lib.from_file(str(tmp_path / "missing.bin"), size=2))


# -- DLPack -------------------------------------------------------------------------------------
def test_torch_reads_a_hookgrad_tensor_through_dlpack():
    source = hookgrad.arange(6.0).reshape(2, 3).t()
    shared = torch.from_dlpack(source)
    assert_close(source, shared)
    assert shared.stride() == source.stride()
    shared[0, 0] = 5
    assert source[0, 0].item() == 5
    assert torch.from_dlpack(hookgrad.to_dlpack(source)).tolist() == source.tolist()


def test_hookgrad_reads_torch_and_numpy_through_dlpack():
    source = torch.arange(4.0).reshape(2, 2).t()
    for given in (source, torch.to_dlpack(source)):
        shared = hookgrad.from_dlpack(given)
        assert_close(shared, source)
        assert shared.stride() == source.stride()
    values = np.arange(3)
    shared = hookgrad.from_dlpack(values)
    shared[0] = 9
    assert values[0] == 9
    assert hookgrad.from_dlpack(np.array([True, False])).dtype == hookgrad.bool


def test_numpy_reads_a_hookgrad_tensor_through_dlpack():
    source = hookgrad.arange(4, dtype=hookgrad.int32)
    assert np.from_dlpack(source).tolist() == [0, 1, 2, 3]
    assert source.__dlpack_device__() == tuple(torch.ones(1).__dlpack_device__())


def test_dlpack_refuses_what_torch_refuses():
    assert_same_error(lambda lib: lib.ones(2, requires_grad=True).__dlpack__())
    assert_same_error(lambda lib: lib.from_dlpack(3))
