"""capture on PyTorch models: the same records as on the hookgrad twin and as torch computes them
directly, and what only torch has (dtypes NumPy lacks, devices, DDP-style wrappers, no_grad)."""
import os
import subprocess
import sys
from pathlib import Path

import capture_models as _models
import numpy as np
import pytest
import torch
from conftest import assert_close

import hookgrad
from hookgrad.capture import KINDS, capture, load
from hookgrad.capture._backend import backend

pytestmark = pytest.mark.filterwarnings("ignore:Full backward hook is firing")
on_both = pytest.mark.parametrize("lib", _models.libraries(), ids=_models.lib_id)
NAMES = ["inp", "shared", "pair", "head"]


def metadata(cap):
    return [(r.key, r.module, r.kind, r.position, r.step, r.call, r.shape, r.dtype)
            for r in cap.records()]


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_a_hookgrad_model_and_its_torch_twin_give_the_same_records(dtype):
    caps = []
    for lib in _models.libraries():
        model = _models.build(lib, dtype=dtype)
        with capture(model, layers=NAMES, kinds=KINDS) as cap:
            for seed in range(2):
                _models.step(lib, model, seed=seed, dtype=dtype)
        caps.append(cap)
    ours, theirs = caps
    assert (ours.framework, theirs.framework) == ("hookgrad", "torch")
    assert ours.keys() == theirs.keys()
    assert metadata(ours) == metadata(theirs)
    for key in ours:
        for got, want in zip(ours[key], theirs[key]):
            assert_close(got, want, what=key)


def test_records_equal_what_torch_computes_directly():
    model = _models.build(torch)
    with capture(model, layers=["inp", "shared", "head"], kinds=("output", "grad_output")) as cap:
        _models.step(torch, model)
    # the same forward written out with torch ops, and its gradients by autograd.grad
    x, y = _models.inputs(torch)
    first = torch.tanh(x @ model.inp.weight)
    second = torch.tanh(first @ model.shared.weight)
    third = torch.tanh(second @ model.shared.weight)
    out = torch.tanh((third * y + (third + y).relu()) @ model.head.weight)
    weights = torch.tensor(np.linspace(-1, 1, out.numel()).reshape(out.shape))
    grads = torch.autograd.grad((out * weights).sum(), [first, second, third, out])
    expected = {"inp.output": [first], "shared.output": [second, third], "head.output": [out],
                "inp.grad_output": [grads[0]], "shared.grad_output": [grads[1], grads[2]],
                "head.grad_output": [grads[3]]}
    assert sorted(cap.keys()) == sorted(expected)
    for key, values in expected.items():
        assert len(cap[key]) == len(values)
        for got, want in zip(cap[key], values):
            assert_close(got, want, what=key)


@on_both
@pytest.mark.parametrize("mode", ["no_grad", "inference_mode"])
def test_a_forward_without_grad_records_no_backward(lib, mode):
    model = _models.build(lib)
    with capture(model, layers=NAMES, kinds=KINDS) as cap, getattr(lib, mode)():
        model(*_models.inputs(lib))
    assert cap.keys() and all(record.kind in ("input", "output") for record in cap.records())
    assert cap._tensor_handles == []  # no hook was put on a tensor that needs no gradient


def dict_outputs(lib):
    class Split(lib.nn.Module):
        def forward(self, a, b):
            return {"sum": a + b, "parts": (a * b, a - b)}

    class Net(lib.nn.Module):
        def __init__(self):
            super().__init__()
            self.split = Split()

        def forward(self, a, b):
            out = self.split(a, b)
            return out["sum"] * 3 + out["parts"][0] * out["parts"][1]

    return Net()


@pytest.mark.filterwarnings("ignore:For backward hooks to be called")
def test_dict_outputs_give_the_same_records_on_both():
    rng = np.random.default_rng(0)
    a, b = rng.standard_normal((2, 4))
    caps = []
    for lib in _models.libraries():
        model = dict_outputs(lib)
        with capture(model, layers="split", kinds=KINDS) as cap:
            model(lib.tensor(a, requires_grad=True), lib.tensor(b)).sum().backward()
        caps.append(cap)
    ours, theirs = caps
    # torch's full backward hooks see no tensor in a dict output: no grad_input, on either
    assert sorted(theirs.keys()) == sorted(
        ["split.input.0", "split.input.1", "split.output.sum", "split.output.parts.0",
         "split.output.parts.1", "split.grad_output.sum", "split.grad_output.parts.0",
         "split.grad_output.parts.1"])
    assert metadata(ours) == metadata(theirs)
    for key in theirs:
        assert_close(ours[key][0], theirs[key][0], what=key)
    np.testing.assert_array_equal(theirs["split.grad_output.sum"][0], np.full(4, 3.0))
    np.testing.assert_array_equal(theirs["split.grad_output.parts.0"][0], a - b)


NUMPY_LACKS = [torch.bfloat16, torch.float8_e4m3fn, torch.float8_e5m2]


@pytest.mark.parametrize("file_format", [None, "safetensors", "npy"])
@pytest.mark.parametrize("dtype", NUMPY_LACKS, ids=str)
def test_dtypes_numpy_lacks_are_stored_as_float32_with_their_dtype_recorded(tmp_path, dtype,
                                                                            file_format):
    value = torch.randn(3, 5).to(dtype)
    model = torch.nn.Sequential(torch.nn.Identity())
    to = None if file_format is None else tmp_path
    with capture(model, layers="0", kinds=("input",), to=to, format=file_format) as cap:
        model(value)
    readers = [cap] if to is None else [cap, load(tmp_path)]
    name = str(dtype).removeprefix("torch.")
    for reader in readers:
        (record,) = reader.records("0.input")
        assert (record.dtype, record.source_dtype) == ("float32", name)
        (array,) = reader["0.input"]
        assert array.dtype == np.float32
        assert array.tobytes() == value.float().numpy().tobytes()  # widening is exact
        assert reader.summary()["0.input"].dtype == f"float32 (from {name})"
    if to is not None:  # read back as torch tensors: the original dtype, bit for bit
        (restored,) = load(tmp_path, framework="torch")["0.input"]
        assert restored.dtype == dtype
        assert torch.equal(restored.view(torch.uint8), value.view(torch.uint8))


@pytest.mark.parametrize("file_format", ["safetensors", "npy"])
def test_float16_is_stored_as_float16(tmp_path, file_format):
    value = torch.randn(4, 2).half()
    model = torch.nn.Sequential(torch.nn.Identity())
    with capture(model, layers="0", kinds=("input",), to=tmp_path, format=file_format):
        model(value)
    (record,) = load(tmp_path).records("0.input")
    assert (record.dtype, record.source_dtype) == ("float16", None)
    assert load(tmp_path)["0.input"][0].tobytes() == value.numpy().tobytes()


class Logged(torch.Tensor):
    """A tensor that logs every torch function called on it, with its arguments."""

    calls: list = []

    @classmethod
    def __torch_function__(cls, func, types, args=(), kwargs=None):
        cls.calls.append((getattr(func, "__name__", str(func)), args[1:], kwargs or {}))
        return super().__torch_function__(func, types, args, kwargs or {})


def test_a_tensor_reaches_numpy_only_after_torch_copied_it_to_the_cpu():
    # no GPU here: the order of calls is what makes a CUDA tensor safe (torch copies it to host
    # memory; NumPy is only ever handed a CPU tensor)
    Logged.calls = []
    value = torch.randn(2, 3, requires_grad=True)
    array, source_dtype = backend(value).to_numpy(value.as_subclass(Logged))
    names = [name for name, _, _ in Logged.calls if name != "__get__"]
    assert names.index("detach") < names.index("to") < names.index("numpy")
    assert ("to", ("cpu",), {}) in Logged.calls
    assert source_dtype is None and array.flags.c_contiguous and array.flags.owndata
    np.testing.assert_array_equal(array, value.detach().numpy())


def test_a_non_contiguous_or_conjugated_tensor_is_stored_as_its_values():
    value = torch.randn(3, 4, dtype=torch.complex64).t().conj()
    array, _ = backend(value).to_numpy(value)
    assert array.flags.c_contiguous
    np.testing.assert_array_equal(array, value.resolve_conj().numpy())


def test_a_wrapped_model_is_named_as_the_model_it_wraps():
    model = _models.build(torch)
    wrapped = torch.nn.DataParallel(model)  # on a machine without GPUs it just calls model
    with capture(wrapped, layers=["inp", "module.head"], kinds=("output",)) as cap:
        for seed in range(2):
            _models.step(torch, wrapped, seed=seed)
    assert list(cap.modules) == ["inp", "head"]
    with capture(model, layers=["inp", "head"], kinds=("output",)) as plain:
        for seed in range(2):
            _models.step(torch, model, seed=seed)
    assert metadata(cap) == metadata(plain)  # steps advance at each forward of the wrapper
    with capture(wrapped, layers="", kinds=("output",)) as root:
        _models.step(torch, wrapped)
    assert root.keys() == ["output"]
    with pytest.raises(KeyError, match="'hed' not found; did you mean 'head'"):
        capture(wrapped, layers="hed")


def test_what_is_not_a_module_is_a_type_error():
    with pytest.raises(TypeError, match=r"needs an nn.Module \(hookgrad or torch\), got Tensor"):
        capture(torch.zeros(2))


def test_load_reads_tensors_of_either_framework(tmp_path):
    model = _models.build(torch)
    with capture(model, layers="head", kinds=("output",), to=tmp_path) as cap:
        out = _models.step(torch, model)
    (as_torch,) = load(tmp_path, framework="torch")["head.output"]
    (as_hookgrad,) = load(tmp_path, framework="hookgrad")["head.output"]
    assert isinstance(as_torch, torch.Tensor) and isinstance(as_hookgrad, hookgrad.Tensor)
    assert torch.equal(as_torch, out.detach())
    np.testing.assert_array_equal(as_hookgrad.numpy(), cap["head.output"][0])
    with pytest.raises(ValueError, match="framework must be one of"):
        load(tmp_path, framework="jax")


def test_a_capture_of_a_hookgrad_model_never_imports_torch(tmp_path):
    program = """
import sys
import hookgrad
from hookgrad.capture import capture, load, patch
model = hookgrad.nn.Sequential(hookgrad.nn.Linear(3, 2), hookgrad.nn.Tanh())
for to in (None, sys.argv[1]):
    with capture(model, to=to) as cap:
        model(hookgrad.randn(4, 3, requires_grad=True)).sum().backward()
    assert len(cap["0.grad_output"]) == 1, cap.keys()
with patch(model, "1", lambda module, h: h * 0):
    assert not model(hookgrad.randn(1, 3)).detach().numpy().any()
assert load(sys.argv[1])["1.output"][0].shape == (4, 2)
assert "torch" not in sys.modules, "torch was imported"
"""
    source = str(Path(hookgrad.__file__).parents[1])
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([source, os.environ.get("PYTHONPATH", "")]))
    result = subprocess.run([sys.executable, "-c", program, str(tmp_path)], env=env,
                            capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr


def test_a_sparse_tensor_is_stored_as_its_dense_values():
    value = torch.tensor([[0.0, 2.0], [3.0, 0.0]]).to_sparse()
    array, _ = backend(value).to_numpy(value)
    np.testing.assert_array_equal(array, [[0.0, 2.0], [3.0, 0.0]])


def conv_block(lib, inplace):
    return lib.nn.Sequential(lib.nn.Conv2d(1, 2, 3), lib.nn.BatchNorm2d(2),
                             lib.nn.ReLU(inplace=inplace), lib.nn.Flatten(), lib.nn.Linear(8, 1))


def copy_weights(source, target, lib):
    target.load_state_dict({name: lib.tensor(value.detach().numpy())
                            for name, value in source.state_dict().items()})


@on_both
def test_grad_output_before_an_in_place_relu_is_the_gradient_of_the_value_before_it(lib):
    torch.manual_seed(0)
    reference = conv_block(torch, inplace=False)
    models = {inplace: conv_block(lib, inplace) for inplace in (True, False)}
    x = np.random.default_rng(0).standard_normal((2, 1, 4, 4)).astype(np.float32)
    caps = {}
    for inplace, model in models.items():
        copy_weights(reference, model, lib)
        with capture(model, layers="1", kinds=("output", "grad_output")) as caps[inplace]:
            model(lib.tensor(x)).sum().backward()
    for key in ("1.output", "1.grad_output"):
        assert_close(caps[True][key][0], caps[False][key][0], what=key)
    assert caps[True]["1.grad_output"][0].any()


@on_both
def test_grad_input_before_an_in_place_op_fails_as_torchs_full_backward_hooks_do(lib):
    # grad_input needs a full backward hook, which wraps the module's output in an identity
    # Function; torch (and hookgrad) refuse an in-place op on that output
    model = conv_block(lib, inplace=True)
    with pytest.raises(RuntimeError, match="BackwardHookFunction is a view and is being "
                                           "modified inplace"), \
            capture(model, layers="1", kinds=("grad_input",)):
        model(lib.randn(2, 1, 4, 4))
