"""Loading never runs code from a file: the restricted unpickler refuses what is not weights."""
from __future__ import annotations

import io
import os
import pickle
import zipfile
from collections import OrderedDict

import numpy as np
import pytest
import torch

import hookgrad
from hookgrad.serialization import _unpickler


class Announce:
    """Unpickling it calls print: the classic code-on-load payload."""

    def __reduce__(self):
        return (print, ("code from the file ran",))


class Shell:
    """Unpickling it runs a shell command that leaves a marker file."""

    def __init__(self, marker: str) -> None:
        self.marker = marker

    def __reduce__(self):
        return (os.system, (f"touch {self.marker}",))


def torch_file(obj, **save_args) -> io.BytesIO:
    buffer = io.BytesIO()
    torch.save(obj, buffer, **save_args)
    buffer.seek(0)
    return buffer


def plain_pickle(obj) -> io.BytesIO:
    return io.BytesIO(pickle.dumps(obj, protocol=2))


WRITERS = {"torch zip": (torch_file, torch),
           "torch legacy": (lambda obj: torch_file(obj, _use_new_zipfile_serialization=False),
                            torch),
           "hookgrad pickle": (plain_pickle, hookgrad)}  # what hookgrad.save wrote before


def payload_file(writer: str, make) -> io.BytesIO:
    write, lib = WRITERS[writer]
    return write(make(lib))


@pytest.mark.parametrize("writer", sorted(WRITERS))
@pytest.mark.parametrize("weights_only", [None, True])
def test_a_print_payload_is_refused_and_never_runs(writer, weights_only, capsys):
    payload = payload_file(writer, lambda lib: {"weight": lib.ones(2), "evil": Announce()})
    with pytest.raises(pickle.UnpicklingError) as error:
        hookgrad.load(payload, weights_only=weights_only)
    assert "GLOBAL print was not an allowed global" in str(error.value)
    assert "weights_only" in str(error.value)
    assert "code from the file ran" not in capsys.readouterr().out


@pytest.mark.parametrize("writer", sorted(WRITERS))
def test_a_shell_payload_is_refused_and_never_runs(writer, tmp_path):
    marker = tmp_path / "pwned"
    payload = payload_file(writer, lambda lib: [lib.zeros(1), Shell(str(marker))])
    with pytest.raises(pickle.UnpicklingError, match=rf"{os.system.__module__}\.system"):
        hookgrad.load(payload)
    assert not marker.exists()


def test_torch_refuses_the_same_payloads_naming_the_global_the_same_way():
    for lib in (torch, hookgrad):
        with pytest.raises(pickle.UnpicklingError, match="GLOBAL print was not an allowed global"):
            lib.load(torch_file(Announce()), weights_only=True)


def test_weights_only_false_is_full_pickle_and_runs_the_payload(capsys):
    hookgrad.load(plain_pickle(Announce()), weights_only=False)  # documented as unsafe
    assert "code from the file ran" in capsys.readouterr().out


def test_builtins_named_the_python_2_way_are_still_refused(capsys):
    payload = b"\x80\x02c__builtin__\nprint\nX\x05\x00\x00\x00hello\x85R."
    with pytest.raises(pickle.UnpicklingError, match="GLOBAL print was not"):
        hookgrad.load(io.BytesIO(payload))
    assert "hello" not in capsys.readouterr().out


def test_build_cannot_rewrite_an_allowed_function():
    defaults = _unpickler._rebuild_tensor_v2.__defaults__
    payload = (b"\x80\x02ctorch._utils\n_rebuild_tensor_v2\n"
               b"N}X\x0c\x00\x00\x00__defaults__)s\x86b.")
    with pytest.raises(pickle.UnpicklingError, match="not allowed"):
        hookgrad.load(io.BytesIO(payload))
    assert _unpickler._rebuild_tensor_v2.__defaults__ == defaults


def test_build_cannot_set_dunder_attributes_of_an_ordered_dict():
    payload = (b"\x80\x02ccollections\nOrderedDict\n)R}X\t\x00\x00\x00__class__"
               b"ccollections\nCounter\nsb.")
    with pytest.raises(pickle.UnpicklingError, match="__class__"):
        hookgrad.load(io.BytesIO(payload))


def test_reduce_on_a_value_that_is_not_an_allowed_callable_is_refused():
    # push torch.Size (allowed), call it, then try to call the result
    payload = b"\x80\x02ctorch\nSize\n)R)R."
    with pytest.raises(pickle.UnpicklingError, match="not allowed"):
        hookgrad.load(io.BytesIO(payload))


def _with_data_pkl(buffer: io.BytesIO, edit) -> io.BytesIO:
    source = zipfile.ZipFile(buffer)
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w") as target:
        for info in source.infolist():
            data = source.read(info.filename)
            target.writestr(info.filename, edit(data) if info.filename.endswith("data.pkl")
                            else data)
    out.seek(0)
    return out


def test_a_tensor_reaching_past_its_storage_is_refused_as_torch_refuses_it():
    def grow(data: bytes) -> bytes:  # size (4,) -> (100,): same opcode, same length
        assert data.count(b"K\x04\x85") == 1
        return data.replace(b"K\x04\x85", b"K\x64\x85")

    crafted = _with_data_pkl(torch_file(torch.zeros(4)), grow)
    with pytest.raises(RuntimeError):
        torch.load(crafted, weights_only=True)
    crafted.seek(0)
    with pytest.raises(RuntimeError, match="out of bounds"):
        hookgrad.load(crafted)


@pytest.mark.parametrize("dtype", [torch.complex64, torch.uint16,
                                   torch.float8_e4m3fn])
def test_a_dtype_hookgrad_lacks_raises_naming_it(dtype):
    assert not hasattr(hookgrad, str(dtype).split(".")[1]), f"hookgrad has {dtype} now"
    with pytest.raises(TypeError, match=str(dtype).replace("torch.", r"torch\.")):
        hookgrad.load(torch_file({"w": torch.zeros(3, dtype=dtype)}))


def test_old_hookgrad_pickles_still_load_with_and_without_weights_only():
    weight = hookgrad.nn.Parameter(hookgrad.arange(6.0).reshape(2, 3))
    state = OrderedDict(weight=weight, steps=hookgrad.tensor(3), dtype=hookgrad.float64,
                        scale=np.float32(0.5), shape=hookgrad.Size([2, 3]))
    for protocol in (2, 4, 5):
        for weights_only in (True, False):
            loaded = hookgrad.load(io.BytesIO(pickle.dumps(state, protocol=protocol)),
                                   weights_only=weights_only)
            assert isinstance(loaded["weight"], hookgrad.nn.Parameter)
            np.testing.assert_array_equal(loaded["weight"].detach().numpy(),
                                          weight.detach().numpy())
            assert loaded["steps"].item() == 3 and loaded["dtype"] is hookgrad.float64
            assert loaded["scale"] == np.float32(0.5) and loaded["shape"] == (2, 3)


def test_numpy_object_arrays_in_old_pickles_are_refused(capsys):
    payload = plain_pickle({"objects": np.array([Announce()], dtype=object)})
    with pytest.raises(pickle.UnpicklingError):
        hookgrad.load(payload)
    assert "code from the file ran" not in capsys.readouterr().out


class Allowed:
    def __init__(self, value=0):
        self.value = value


def test_add_safe_globals_admits_a_trusted_class_as_torch_does():
    payload = torch_file({"config": Allowed(4)})
    with pytest.raises(pickle.UnpicklingError, match="Allowed"):
        hookgrad.load(payload)
    with hookgrad.serialization.safe_globals([Allowed]):
        payload.seek(0)
        assert hookgrad.load(payload)["config"].value == 4
    assert Allowed not in hookgrad.serialization.get_safe_globals()
    payload.seek(0)
    with pytest.raises(pickle.UnpicklingError):
        hookgrad.load(payload)


def test_an_explicit_pickle_module_with_weights_only_is_an_error_as_in_torch():
    for lib in (torch, hookgrad):
        with pytest.raises(RuntimeError, match="pickle_module"):
            lib.load(torch_file(torch.ones(1)), pickle_module=pickle, weights_only=True)


def test_corrupted_checkpoints_raise_errors_and_never_crash():
    import random

    base = torch.arange(12.0).reshape(3, 4)
    state = OrderedDict(w=base, v=base[1:, ::2], n=torch.tensor(3))
    files = [torch_file(state).getvalue(),
             torch_file(state, _use_new_zipfile_serialization=False).getvalue()]
    generator = random.Random(0)
    outcomes = set()
    for _ in range(300):
        data = bytearray(generator.choice(files))
        for _ in range(generator.randint(1, 4)):
            data[generator.randrange(len(data))] = generator.randrange(256)
        try:
            hookgrad.load(io.BytesIO(bytes(data)))
            outcomes.add("loaded")
        except Exception:  # any ordinary error is fine; a crash or a hang is not
            outcomes.add("refused")
    assert outcomes == {"loaded", "refused"}


def test_a_whole_module_loads_only_with_weights_only_false_as_in_torch():
    for lib in (torch, hookgrad):
        model = lib.nn.Sequential(lib.nn.Linear(3, 2), lib.nn.ReLU())
        buffer = io.BytesIO()
        lib.save(model, buffer)
        buffer.seek(0)
        with pytest.raises(pickle.UnpicklingError, match=r"GLOBAL \S*Sequential was not"):
            lib.load(buffer)
        buffer.seek(0)
        loaded = lib.load(buffer, weights_only=False)  # trusted: our own file
        inputs = lib.ones(1, 3)
        assert lib.equal(loaded(inputs), model(inputs))
        assert type(loaded[0].weight) is lib.nn.Parameter
