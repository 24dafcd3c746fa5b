"""The layout of elementwise results (unary, binary, comparison, where, ternary, with type
promotion), checked against torch's TensorIterator on generated stride patterns.

Operands are made in both libraries with ``as_strided`` over the same storage, so each case
reaches the elementwise rule with exactly torch's strides: permuted dense orders, gaps (a step
slice), expanded (stride 0) dimensions, size-1 dimensions with any stride, 0-d and empty
operands. Each result must agree with torch's in values, dtype, ``stride()`` (size-1
dimensions included) and ``is_contiguous()``.
"""
import random

import numpy as np
import pytest
import torch

import hookgrad

DTYPES = {"float32": (np.float32, torch.float32, hookgrad.float32),
          "float64": (np.float64, torch.float64, hookgrad.float64),
          "int64": (np.int64, torch.int64, hookgrad.int64)}


def _spec(rng: random.Random, shape: tuple = None, dtype: str = "float32") -> tuple:
    """A random strided layout of ``shape`` (or of a random shape): ``(shape, strides,
    offset, dtype)``."""
    if shape is None:
        shape = tuple(rng.choice([0, 1, 2, 3] if rng.random() < 0.08 else [1, 1, 2, 3, 4])
                      for _ in range(rng.randint(0, 4)))
    order = list(range(len(shape)))
    if rng.random() < 0.7:
        rng.shuffle(order)
    strides, step = [0] * len(shape), 1
    for d in reversed(order):  # fastest first
        size = shape[d]
        if size == 1 and rng.random() < 0.6:  # a size-1 dimension may carry any stride
            strides[d] = rng.choice([0, 1, 2, 5, 7, 13])
            continue
        if size > 1 and rng.random() < 0.12:  # expanded
            continue
        gap = 2 if rng.random() < 0.15 else 1  # a step slice
        strides[d] = step * gap
        step *= max(size, 1) * gap
    if shape and 0 in shape and not any(strides):
        strides[-1] = 1  # (an empty tensor with all-zero strides reads as row-major here)
    return tuple(shape), tuple(strides), rng.randint(0, 2), dtype


def _broadcastable(rng: random.Random, shape: tuple) -> tuple:
    """A shape that broadcasts with ``shape``: some trailing dimensions, some set to 1, maybe
    a new leading one."""
    keep = shape[rng.randint(0, len(shape)):] if shape else ()
    result = tuple(1 if rng.random() < 0.4 else n for n in keep)
    if rng.random() < 0.2 and len(result) < 4:
        result = (rng.choice([1, 2]),) + result
    return result


def _make(lib, spec: tuple, seed: int):
    shape, strides, offset, dtype = spec
    span = offset + 1 + sum((n - 1) * s for n, s in zip(shape, strides) if n > 0)
    numpy_type, torch_type, hookgrad_type = DTYPES[dtype]
    values = np.random.default_rng(seed).standard_normal(span) * 3
    values = values.round() if dtype == "int64" else values
    base = lib.tensor(values.astype(numpy_type),
                      dtype=torch_type if lib is torch else hookgrad_type)
    return base.as_strided(shape, strides, offset)


def _layout(result) -> tuple:
    data = result.detach().numpy() if isinstance(result, torch.Tensor) else result.numpy()
    return (tuple(result.shape), str(result.dtype).split(".")[-1], tuple(result.stride()),
            result.is_contiguous(), data)


def _check(fn, specs: list, seed: int) -> None:
    """``fn(lib, *operands)`` agrees with torch in values, dtype, strides and contiguity."""
    outcomes = []
    for lib in (torch, hookgrad):
        operands = [_make(lib, spec, seed + i) for i, spec in enumerate(specs)]
        try:
            outcomes.append(_layout(fn(lib, *operands)))
        except RuntimeError as error:
            outcomes.append(type(error))
    theirs, ours = outcomes[0], outcomes[1]
    if not isinstance(theirs, tuple):
        assert ours == theirs, f"torch raised {theirs.__name__}, hookgrad gave {ours}"
        return
    assert isinstance(ours, tuple), f"hookgrad raised {ours.__name__}"
    assert ours[:4] == theirs[:4], f"{specs}: hookgrad {ours[:4]} != torch {theirs[:4]}"
    np.testing.assert_allclose(ours[4], theirs[4], rtol=1e-5, atol=1e-6, equal_nan=True)


UNARY = {
    "exp": lambda L, a: a.exp(),
    "neg": lambda L, a: -a,
    "abs": lambda L, a: L.abs(a),
    "sigmoid": lambda L, a: a.sigmoid(),
    "relu": lambda L, a: L.relu(a),
    "plus_number": lambda L, a: a + 2,
    "number_times": lambda L, a: 2.5 * a,
    "gt_number": lambda L, a: a > 0,
    "clamp_numbers": lambda L, a: a.clamp(-1, 1),
    "int_to_float": lambda L, a: L.sqrt(a.long().abs()),
}
BINARY = {
    "add": lambda L, a, b: a + b,
    "sub": lambda L, a, b: L.sub(a, b, alpha=2),
    "mul": lambda L, a, b: a * b,
    "div": lambda L, a, b: a / b,
    "rsub": lambda L, a, b: L.rsub(a, b),
    "floor_divide": lambda L, a, b: L.div(a, b, rounding_mode="floor"),
    "remainder": lambda L, a, b: L.remainder(a, b),
    "pow": lambda L, a, b: L.pow(a.abs(), b),
    "maximum": lambda L, a, b: L.maximum(a, b),
    "atan2": lambda L, a, b: L.atan2(a, b),
    "hypot": lambda L, a, b: L.hypot(a, b),
    "xlogy": lambda L, a, b: L.xlogy(a, b.abs()),
    "lt": lambda L, a, b: a < b,
    "eq": lambda L, a, b: L.eq(a, b),
    "logical_and": lambda L, a, b: L.logical_and(a, b),
    "clamp_min_tensor": lambda L, a, b: L.clamp(a, min=b),
    "where_self": lambda L, a, b: L.where(a > 0, a, b),
}
TERNARY = {
    "where": lambda L, a, b, c: L.where(a > 0, b, c),
    "clamp": lambda L, a, b, c: L.clamp(a, b, c),
    "lerp": lambda L, a, b, c: L.lerp(a, b, c),
    "addcmul": lambda L, a, b, c: L.addcmul(a, b, c, value=0.5),
    "addcdiv": lambda L, a, b, c: L.addcdiv(a, b, c.abs() + 1),
}


# ops whose torch form is not one plain elementwise call: a number that is a parameter, not an
# operand (pow), a result written into empty_like(self) (deg2rad, nan_to_num, hardtanh), or a
# composite whose first step sets the layout (isinf is abs(x) == inf, isclose starts at ==)
UNARY.update({
    "square": lambda L, a: a.square(),
    "pow_number": lambda L, a: a ** 3,
    "deg2rad": lambda L, a: a.deg2rad(),
    "int_rad2deg": lambda L, a: a.long().rad2deg(),
    "nan_to_num": lambda L, a: a.nan_to_num(),
    "int_nan_to_num": lambda L, a: a.long().nan_to_num(),
    "hardtanh": lambda L, a: L.nn.functional.hardtanh(a),
    "relu6": lambda L, a: L.nn.functional.relu6(a),
    "hardshrink": lambda L, a: L.nn.functional.hardshrink(a),
    "isnan": lambda L, a: a.isnan(),
    "isinf": lambda L, a: a.isinf(),
    "isfinite": lambda L, a: a.isfinite(),
    "int_isinf": lambda L, a: a.long().isinf(),
    "logical_not": lambda L, a: L.logical_not(a),
    "bitwise_not": lambda L, a: ~(a > 0),
    "isclose_self": lambda L, a: L.isclose(a, a),
    "isclose_row": lambda L, a: L.isclose(a, L.ones(a.shape[-1:])),
})


@pytest.mark.parametrize("name", sorted(UNARY))
@pytest.mark.parametrize("seed", range(12))
def test_unary_result_layout_matches_torch(name, seed):
    rng = random.Random(f"unary{name}{seed}")
    _check(UNARY[name], [_spec(rng)], seed)


def _pair(rng: random.Random, same_shape: bool, dtypes=("float32", "float32")) -> list:
    first = _spec(rng, dtype=dtypes[0])
    shape = first[0] if same_shape else _broadcastable(rng, first[0])
    second = _spec(rng, shape, dtypes[1])
    return [first, second] if rng.random() < 0.5 else [second, first]


@pytest.mark.parametrize("name", sorted(BINARY))
@pytest.mark.parametrize("seed", range(16))
def test_binary_result_layout_matches_torch(name, seed):
    rng = random.Random(f"binary{name}{seed}")
    _check(BINARY[name], _pair(rng, same_shape=seed % 4 == 0), seed)


# an operand of another dtype is copied to the common dtype first (torch's ``Tensor.to``):
# an expanded or strided operand is dense by then, and ranked as such
PROMOTING = [("float32", "float64"), ("float64", "float32"), ("int64", "float32"),
             ("float32", "int64"), ("int64", "int64")]


@pytest.mark.parametrize("dtypes", PROMOTING, ids="-".join)
@pytest.mark.parametrize("name", ["add", "mul", "div", "lt", "eq", "atan2", "maximum",
                                  "where_self"])
@pytest.mark.parametrize("seed", range(10))
def test_type_promoting_result_layout_matches_torch(dtypes, name, seed):
    rng = random.Random(f"promote{dtypes}{name}{seed}")
    _check(BINARY[name], _pair(rng, same_shape=seed % 3 == 0, dtypes=dtypes), seed)


@pytest.mark.parametrize("name", sorted(TERNARY))
@pytest.mark.parametrize("seed", range(16))
def test_ternary_result_layout_matches_torch(name, seed):
    rng = random.Random(f"ternary{name}{seed}")
    first = _spec(rng)
    specs = [first] + [_spec(rng, first[0] if rng.random() < 0.3
                             else _broadcastable(rng, first[0])) for _ in range(2)]
    rng.shuffle(specs)
    _check(TERNARY[name], specs, seed)


@pytest.mark.parametrize("seed", range(8))
def test_where_promotes_its_values_but_not_its_condition(seed):
    rng = random.Random(f"where{seed}")
    first = _spec(rng, dtype="float32")
    specs = [first, _spec(rng, _broadcastable(rng, first[0]), "float64"),
             _spec(rng, _broadcastable(rng, first[0]), "int64")]
    _check(TERNARY["where"], specs, seed)


EMPTY_SHAPES = [(1, 0, 1), (2, 0, 1), (0, 1), (1, 0), (3, 0, 1, 1), (0, 1, 1), (1, 1, 0),
                (2, 0, 3)]


@pytest.mark.parametrize("shape", EMPTY_SHAPES)
@pytest.mark.parametrize("name", ["plus_number", "exp", "add_self", "add_0d", "add_row",
                                  "transposed_exp", "outer"])
def test_empty_result_strides_match_torch(shape, name):
    """torch's running product gives the dimensions slower than a size-0 one stride 0 once
    the dimensions are reordered (``zeros(1, 0, 1) + 1`` has strides ``(0, 1, 0)``)."""
    calls = {
        "plus_number": lambda L, x: x + 1,
        "exp": lambda L, x: x.exp(),
        "add_self": lambda L, x: x + x,
        "add_0d": lambda L, x: L.maximum(x, L.tensor(1.0)),
        "add_row": lambda L, x: x + L.ones(shape[-1]),
        "transposed_exp": lambda L, x: x.transpose(0, -1).exp(),
        "outer": lambda L, x: x.unsqueeze(0) + x.unsqueeze(1),
    }
    theirs = _layout(calls[name](torch, torch.zeros(shape)))
    ours = _layout(calls[name](hookgrad, hookgrad.zeros(shape)))
    assert ours[:4] == theirs[:4]


def test_pointwise_result_of_reshaped_transpose_broadcast_against_a_matrix():
    """The case that kept broadcasting views out of the fuzzer: a size-1 dimension's stride
    of one operand decides the memory order where the other is broadcast."""
    def run(lib):
        x = lib.arange(24.0)
        row = x.reshape(24, 1).t().unsqueeze(1)
        return [_layout(r)[:4] for r in (row + lib.ones(5, 24), row.exp() + lib.ones(5, 24),
                                         lib.ones(5, 24) * row)]

    assert run(hookgrad) == run(torch)


def test_keepdim_mean_added_to_a_permutation():
    def run(lib):
        a = lib.arange(27.0).reshape(3, 3, 3)
        return [_layout(r)[:4] for r in (a.mean(0, keepdim=True) + a.permute(2, 0, 1),
                                         a.permute(1, 2, 0) - a.mean(1, keepdim=True),
                                         a.mean(2, keepdim=True) < a.transpose(0, 2))]

    assert run(hookgrad) == run(torch)


def test_a_number_operand_ranks_size_one_strides():
    """A number is a 0-d operand in torch: the operands no longer share one shape, so the
    full rule runs and a size-1 dimension's stride is ranked (unary ops copy the dense
    input's strides instead)."""
    def run(lib):
        x = lib.arange(12.0).as_strided((4, 1, 3), (1, 7, 4))
        return [_layout(r)[:4] for r in (x + 2, x.exp(), x * lib.tensor(2.0), x > 0)]

    assert run(hookgrad) == run(torch)


@pytest.mark.parametrize("name, integer", [("logaddexp2", False), ("ldexp", False),
                                           ("heaviside", False), ("gcd", True), ("lcm", True),
                                           ("float_power", False)])
def test_newer_binary_ops_rank_both_operands_layouts(name, integer):
    # a transposed operand against a row-major one (either order) and against a transposed
    # broadcast row: the result follows torch's ranking over both operands
    rng = np.random.default_rng(3)
    a = rng.integers(1, 20, (3, 4)) if integer else rng.uniform(1, 3, (3, 4))
    b = rng.integers(1, 20, (3, 4)) if integer else rng.uniform(1, 3, (3, 4))
    if name == "ldexp":
        b = rng.integers(-3, 4, (3, 4))
    results = {}
    for lib in (torch, hookgrad):
        f = getattr(lib, name)
        x, y = lib.tensor(a).t(), lib.tensor(np.ascontiguousarray(b.T))
        row = lib.tensor(b)[:1].t()
        outs = [f(x, y), f(y, x), f(x, row)]
        results[lib.__name__] = [(o.stride(), o.is_contiguous(), o.numpy().copy()) for o in outs]
    for (s1, c1, v1), (s2, c2, v2) in zip(results["hookgrad"], results["torch"]):
        assert (s1, c1) == (s2, c2)
        np.testing.assert_allclose(v1, v2, rtol=1e-12)
