"""Savers: round trips (exact for offload, bounded for cast/quantize), what they leave alone,
storing one buffer once, composition, and gradients against the exact run."""
import contextlib

import numpy as np
import pytest
import torch

import hookgrad
from hookgrad import memory
from hookgrad.autograd.graph import compose_hooks, saved_tensors_hooks
from hookgrad.memory.savers.cast import from_bfloat16_bits, to_bfloat16_bits
from hookgrad.memory.savers.quantize import pack_bits, unpack_bits


def _round_trip(saver, tensor):
    """Pack and unpack one activation through the saver, as autograd would."""
    seen = {}

    def record_pack(value):
        seen["packed"] = saver.pack(value)
        return seen["packed"]

    with saved_tensors_hooks(record_pack, saver.unpack):
        out = tensor.exp()  # ExpBackward0 saves its result: an activation
    unpacked = out.grad_fn._saved_result
    return out, unpacked, seen["packed"]


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("saver, rtol", [
    (lambda: memory.cast("bfloat16"), 2.0 ** -8),
    (lambda: memory.cast(hookgrad.float16), 2.0 ** -11),
    (lambda: memory.offload(), 0.0),
])
def test_cast_and_offload_round_trip_within_their_precision(rng, saver, rtol, dtype):
    x = hookgrad.tensor(rng.standard_normal((16, 8)).astype(dtype), requires_grad=True)
    out, unpacked, _ = _round_trip(saver(), x)
    assert unpacked.shape == out.shape and unpacked.dtype == out.dtype
    expected = out.detach().numpy()
    np.testing.assert_allclose(unpacked.detach().numpy(), expected, rtol=rtol, atol=0)


def test_bfloat16_bits_round_to_nearest_even_like_torch(rng):
    values = np.concatenate([
        rng.standard_normal(2000).astype(np.float32) * 1e3,
        np.array([0.0, -0.0, np.inf, -np.inf, 3.4e38, -3.4e38, 1e-40, 1.00390625, 1.01171875],
                 np.float32),
        # exact ties: the dropped half is 0x8000, with odd and even kept patterns
        np.array([0x3F808000, 0x3F818000, 0xBF808000], np.uint32).view(np.float32)])
    ours = to_bfloat16_bits(values)
    theirs = torch.from_numpy(values).to(torch.bfloat16).view(torch.int16).numpy().view(np.uint16)
    np.testing.assert_array_equal(ours, theirs)
    back = from_bfloat16_bits(ours, np.dtype(np.float32))
    np.testing.assert_array_equal(back, torch.from_numpy(ours.view(np.int16)).view(
        torch.bfloat16).float().numpy())


def test_bfloat16_bits_of_a_large_array_encoded_in_blocks_match_torch(rng):
    """More values than one encoding block (and a partial last block), NaNs in several blocks,
    in a 2-d C-ordered and a transposed layout."""
    from hookgrad.memory.savers.cast import _BLOCK
    values = (rng.standard_normal(3 * _BLOCK + 774) * 50).astype(np.float32)
    nans = rng.choice(values.size, 40, replace=False)
    values[nans] = np.nan
    values[-1] = np.nan  # in the partial block
    for array in (values.reshape(-1, 7), values.reshape(7, -1).T):
        ours = to_bfloat16_bits(array)
        assert ours.shape == array.shape and ours.dtype == np.uint16
        theirs = torch.from_numpy(np.ascontiguousarray(array)).to(torch.bfloat16)
        theirs = theirs.view(torch.int16).numpy().view(np.uint16)
        finite = ~np.isnan(array)
        np.testing.assert_array_equal(ours[finite], theirs[finite])
        back = from_bfloat16_bits(ours, np.dtype(np.float32))
        np.testing.assert_array_equal(np.isnan(back), ~finite)


def test_bfloat16_keeps_nan_a_nan():
    nan_low_payload = np.array([0x7F800001, 0xFFC00000], np.uint32).view(np.float32)
    back = from_bfloat16_bits(to_bfloat16_bits(nan_low_payload), np.dtype(np.float32))
    assert np.isnan(back).all()


@pytest.mark.parametrize("bits", [8, 4, 2])
@pytest.mark.parametrize("per", ["channel", "tensor"])
def test_quantize_error_is_at_most_half_a_step(rng, bits, per):
    x = hookgrad.tensor(rng.standard_normal((32, 6)).astype(np.float32), requires_grad=True)
    out, unpacked, packed = _round_trip(memory.quantize(bits, per=per), x)
    values = out.detach().numpy()
    axis = 0 if per == "channel" else None
    step = (values.max(axis=axis) - values.min(axis=axis)) / ((1 << bits) - 1)
    error = np.abs(unpacked.detach().numpy() - values)
    assert unpacked.dtype == out.dtype and unpacked.shape == out.shape
    assert np.all(error <= step / 2 * 1.0001 + 1e-6)
    assert packed.nbytes < values.nbytes * bits / 32 + 64


@pytest.mark.parametrize("bits", [4, 2])
def test_bit_packing_round_trips_odd_sizes(rng, bits):
    codes = rng.integers(0, 1 << bits, size=37).astype(np.uint8)
    packed = pack_bits(codes, bits)
    assert packed.size == -(-37 * bits // 8)
    np.testing.assert_array_equal(unpack_bits(packed, bits, 37), codes)


@pytest.mark.parametrize("bits", [8, 4, 2])
def test_quantize_keeps_the_relu_mask_exact(rng, bits):
    x = hookgrad.tensor(rng.standard_normal((64, 16)).astype(np.float32), requires_grad=True)
    with memory.quantize(bits):
        y = x.relu()
    y.backward(hookgrad.ones_like(y))
    np.testing.assert_array_equal(x.grad.numpy(), (x.detach().numpy() > 0).astype(np.float32))


@pytest.mark.parametrize("lib", [hookgrad, torch], ids=["hookgrad", "torch"])
@pytest.mark.parametrize("per", ["group", "channel"])
def test_stochastic_rounding_keeps_the_relu_mask_exact(rng, lib, per):
    # small positive values that round to code 0 must still pass ReLU's gradient through,
    # as they do in torch's exact backward
    values = rng.standard_normal((64, 16)) * np.where(rng.random((64, 16)) < 0.3, 1e-3, 1.0)
    framework = "torch" if lib is torch else "hookgrad"
    x = lib.tensor(values.astype(np.float32), requires_grad=True)
    with memory.quantize(2, per=per, group_size=64, rounding="stochastic", framework=framework):
        y = x.relu()
    y.backward(lib.ones_like(y))
    exact = torch.tensor(values.astype(np.float32), requires_grad=True)
    exact.relu().backward(torch.ones(64, 16))
    np.testing.assert_array_equal(x.grad.numpy(), exact.grad.numpy())


def test_stochastic_rounding_of_relu_outputs_is_unbiased(rng):
    # the mask of positive values is kept beside the codes, so codes need not be pushed up
    # to keep it: the mean of many roundings is the value itself, zeros stay exact zeros
    from hookgrad.memory.savers.quantize import quantize_groups
    values = np.maximum(rng.standard_normal((4, 256)), 0).astype(np.float32)
    values[:, ::7] *= 1e-3  # many values far below one step
    decoded = np.array([quantize_groups(values, 2, 64, seed=seed).decode()
                        for seed in range(600)])
    np.testing.assert_array_equal(decoded[:, values == 0], 0)
    assert (decoded[:, values > 0] > 0).all()
    step = values.reshape(4, 4, 64).max(-1).repeat(64, -1) / 3
    bias = np.abs(decoded.mean(0) - values) / step
    assert bias.mean() < 0.02 and bias.max() < 0.15  # 600 draws: noise of ~0.5 / sqrt(600)
    stored = quantize_groups(values, 2, 64, seed=0)
    assert stored.nbytes == values.size * 2 // 8 + values.size // 8 + 16 * 2 * 4


def test_quantize_keeps_non_finite_values_exact():
    x = hookgrad.tensor(np.array([[1.0, np.inf], [2.0, 3.0]], np.float32), requires_grad=True)
    _, unpacked, _ = _round_trip(memory.quantize(8), x)
    np.testing.assert_array_equal(unpacked.detach().numpy(), x.detach().exp().numpy())


def _passes_through(saver, tensor):
    return _round_trip(saver, tensor)[2]


@pytest.mark.parametrize("saver", [memory.cast("bfloat16"), memory.quantize(8),
                                   memory.offload()], ids=repr)
def test_savers_leave_parameters_and_inputs_alone(rng, saver):
    weight = hookgrad.tensor(rng.standard_normal((4, 3)).astype(np.float32), requires_grad=True)
    batch = hookgrad.tensor(rng.standard_normal((5, 4)).astype(np.float32))
    packed = []

    def pack(value):
        packed.append(saver.pack(value))
        return packed[-1]

    with saved_tensors_hooks(pack, saver.unpack):
        batch @ weight          # saves batch (grad of weight needs it)
        batch @ weight.t().t()  # a view of the parameter
        (weight * 2).sum()      # MulBackward0 saves nothing needing weight... but may save 2
        weight.sin()            # saves the parameter itself
    assert packed and all(isinstance(p, hookgrad.Tensor) for p in packed)


def test_min_bytes_leaves_small_tensors_alone(rng):
    saver = memory.quantize(8, min_bytes=1000)
    small = hookgrad.tensor(rng.standard_normal(10).astype(np.float32), requires_grad=True)
    large = hookgrad.tensor(rng.standard_normal(1000).astype(np.float32), requires_grad=True)
    assert isinstance(_passes_through(saver, small), hookgrad.Tensor)
    assert isinstance(_passes_through(saver, large), memory.Packed)


def test_integer_tensors_are_not_cast_or_quantized_only_narrowed_losslessly():
    """An integer tensor an op makes and saves (max's indices) is narrowed to the smallest
    integer type that holds it; an index tensor the caller passed is the caller's, saved as
    it is (its version counter then catches a change before backward, as in torch)."""
    saver = memory.quantize(8)
    packed = []
    with saved_tensors_hooks(lambda v: packed.append(saver.pack(v)) or packed[-1], saver.unpack):
        leaf = hookgrad.arange(12.0, requires_grad=True)
        index = hookgrad.tensor([2, 0])
        _, where = leaf.reshape(3, 4).max(dim=1)
        y = leaf.reshape(3, 4)[index].sum() + leaf.reshape(3, 4).max(dim=1)[0].sum()
    integers = [p for p in packed if isinstance(p, memory.Packed) and p.dtype.kind != "f"]
    assert integers and all(p.kind == "uint8" for p in integers)
    for p in integers:
        back = p.unpack().numpy()
        assert back.dtype == np.int64 and back.tolist() == where.tolist()
    assert any(p is index for p in packed)
    y.backward()
    expected = np.repeat([1, 0, 1], 4).astype(np.float32)
    expected[[3, 7, 11]] += 1
    np.testing.assert_array_equal(leaf.grad.numpy(), expected)


def test_views_of_one_buffer_are_stored_once(rng):
    saver = memory.quantize(8)
    x = hookgrad.tensor(rng.standard_normal((8, 6)).astype(np.float32), requires_grad=True)
    packs = []

    def pack(value):
        packs.append(saver.pack(value))
        return packs[-1]

    with saved_tensors_hooks(pack, saver.unpack):
        h = x.exp()                    # saves h
        y = (h.t() @ h).sum()          # saves h.t() and h: views of the same buffer
    stored = {id(p.stored) for p in packs}
    assert len(packs) == 3 and len(stored) == 1
    y.backward()
    exact = hookgrad.tensor(x.detach().numpy(), requires_grad=True)
    he = exact.exp()
    (he.t() @ he).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), exact.grad.numpy(), rtol=0.05, atol=0.05)


def test_a_view_saved_after_an_inplace_change_is_stored_again(rng):
    saver = memory.cast("float16")
    packs = []
    x = hookgrad.tensor(rng.standard_normal(6).astype(np.float32), requires_grad=True)
    with saved_tensors_hooks(lambda v: packs.append(saver.pack(v)) or packs[-1], saver.unpack):
        h = x * 1
        a = h.sin()      # saves h at version 0
        h.mul_(2)
        b = h.sin()      # saves h at version 1
    assert packs[0].stored is not packs[1].stored
    (a + b).sum().backward()
    expected = np.cos(x.detach().numpy()) + 2 * np.cos(2 * x.detach().numpy())
    np.testing.assert_allclose(x.grad.numpy(), expected, rtol=2e-3, atol=2e-3)


def _mlp_grads(rng, context=None, dtype=np.float64):
    weights = [hookgrad.tensor(rng.standard_normal((24, 24)).astype(dtype) / 5,
                               requires_grad=True) for _ in range(3)]
    x = hookgrad.tensor(rng.standard_normal((32, 24)).astype(dtype))

    def step():
        h = x
        for w in weights:
            h = (h @ w).tanh()
        return (h * h).sum()

    with context or contextlib.nullcontext():
        loss = step()
    loss.backward()
    return [w.grad.numpy() for w in weights]


def _relative(grads, exact):
    return max(np.abs(g - e).max() / np.abs(e).max() for g, e in zip(grads, exact))


@pytest.mark.parametrize("saver, bound", [
    (lambda: memory.offload(), 0.0),
    (lambda: memory.cast("bfloat16"), 2e-2),
    (lambda: memory.cast("float16"), 3e-3),
    (lambda: memory.quantize(8), 2e-2),
    (lambda: memory.quantize(4), 0.3),
], ids=["offload", "bfloat16", "float16", "int8", "int4"])
def test_parameter_gradients_stay_close_to_exact(saver, bound):
    exact = _mlp_grads(np.random.default_rng(0))
    grads = _mlp_grads(np.random.default_rng(0), saver())
    assert _relative(grads, exact) <= bound


def test_offload_gradients_are_bitwise_exact():
    exact = _mlp_grads(np.random.default_rng(3), dtype=np.float32)
    grads = _mlp_grads(np.random.default_rng(3), memory.offload(), dtype=np.float32)
    for g, e in zip(grads, exact):
        np.testing.assert_array_equal(g, e)


def test_saver_used_as_a_plain_pair(rng):
    exact = _mlp_grads(np.random.default_rng(5))
    saver = memory.cast("float16")
    grads = _mlp_grads(np.random.default_rng(5), saved_tensors_hooks(*saver))
    assert _relative(grads, exact) < 3e-3


def test_cast_then_offload_composed_writes_the_cast_form(tmp_path):
    exact = _mlp_grads(np.random.default_rng(7))
    disk = memory.offload(tmp_path)
    pair = compose_hooks(tuple(memory.cast("bfloat16")), tuple(disk))
    with memory.ledger() as led:
        with saved_tensors_hooks(*pair, compose=True):
            grads = _mlp_grads(np.random.default_rng(7))
    assert _relative(grads, exact) < 2e-2
    kinds = {r.stored_as for r in led.records}
    assert "bfloat16 on disk" in kinds
    written = sum(r.disk for r in led.records)
    assert written == sum(r.nbytes for r in led.records if r.stored_as != "tensor") // 4


def test_saver_contexts_compose_with_enclosing_hooks(rng):
    seen = []
    saver = memory.quantize(8)
    x = hookgrad.tensor(rng.standard_normal((4, 4)).astype(np.float32), requires_grad=True)
    with saved_tensors_hooks(lambda t: seen.append("outer") or t, lambda t: t):
        with saver:
            y = x.exp()
    assert seen == ["outer"] and isinstance(y.grad_fn._raw_saved_result, object)
    y.sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), np.exp(x.detach().numpy()), rtol=2e-2)


@pytest.mark.parametrize("make, error", [
    (lambda: memory.cast("int8"), ValueError),
    (lambda: memory.quantize(3), ValueError),
    (lambda: memory.quantize(8, per="row"), ValueError),
    (lambda: memory.offload(prefetch=-1), ValueError),
    (lambda: memory.cast("bfloat16", min_bytes=-1), ValueError),
])
def test_bad_arguments_are_refused(make, error):
    with pytest.raises(error):
        make()


@pytest.mark.parametrize("lib", [hookgrad, torch], ids=["hookgrad", "torch"])
@pytest.mark.parametrize("bits", [8, 2])
def test_quantize_handles_zero_dimensional_saved_tensors(lib, bits):
    framework = "torch" if lib is torch else "hookgrad"
    scale = lib.tensor(1.5, requires_grad=True)
    x = lib.tensor(np.linspace(-1, 1, 12).reshape(3, 4), requires_grad=True)

    def run(context):
        scale.grad = x.grad = None
        with context:
            only_scalars = (scale.exp() * 2).exp()  # each exp saves its 0-d result
            mixed = ((x * scale).tanh().mean() * scale.exp()).exp()
        only_scalars.backward()
        exact_part = scale.grad.item()
        mixed.backward()
        return exact_part, scale.grad.item(), x.grad.detach().numpy().copy()

    exact = run(memory.policy({}, framework=framework))
    rough = run(memory.quantize(bits, framework=framework))
    assert rough[0] == exact[0]  # one value per tensor: its code is the value itself
    tolerance = 0.5 if bits == 2 else 3e-2
    assert rough[1] == pytest.approx(exact[1], rel=tolerance)
    np.testing.assert_allclose(rough[2], exact[2], rtol=tolerance, atol=1e-3)


@pytest.mark.parametrize("bits", [8, 2])
@pytest.mark.parametrize("shape", [(6, 200), (3, 7, 150), (130,)])
def test_group_quantization_bounds_each_group_by_its_own_range(rng, bits, shape):
    x = hookgrad.tensor(rng.standard_normal(shape).astype(np.float32), requires_grad=True)
    out, unpacked, packed = _round_trip(memory.quantize(bits, per="group", group_size=64), x)
    values = out.detach().numpy()
    axis = int(np.argmax(values.shape))
    moved = np.moveaxis(values, axis, -1)
    length = moved.shape[-1]
    error = np.moveaxis(np.abs(unpacked.detach().numpy() - values), axis, -1)
    for start in range(0, length, 64):  # groups of 64 along the largest dimension
        group = moved[..., start:start + 64]
        step = (group.max(-1) - group.min(-1)) / ((1 << bits) - 1)
        assert np.all(error[..., start:start + 64].max(-1) <= step / 2 * 1.0001 + 1e-6)
    groups = values.size // length * -(-length // 64)
    assert packed.nbytes == -(-groups * 64 * bits // 8) + groups * 2 * 4  # codes, low, scale


def test_stochastic_rounding_is_unbiased_and_repeats_with_its_seed(rng):
    from hookgrad.memory.savers.quantize import quantize_groups
    values = rng.standard_normal((4, 256)).astype(np.float32)
    decoded = [quantize_groups(values, 2, 64, seed=seed).decode() for seed in range(400)]
    nearest = quantize_groups(values, 2, 64).decode()
    assert np.abs(np.mean(decoded, axis=0) - values).mean() < 0.2 * np.abs(nearest - values).mean()
    x = hookgrad.tensor(values, requires_grad=True)
    runs = [_round_trip(memory.quantize(2, per="group", rounding="stochastic", seed=7), x)[1]
            for _ in range(2)]
    np.testing.assert_array_equal(runs[0].detach().numpy(), runs[1].detach().numpy())
    other = _round_trip(memory.quantize(2, per="group", rounding="stochastic", seed=8), x)[1]
    assert not np.array_equal(runs[0].detach().numpy(), other.detach().numpy())


@pytest.mark.parametrize("axis", [1, None, 0])
def test_large_activations_encode_in_blocks_to_the_same_codes(monkeypatch, axis):
    # a bounded encoding workspace: the codes of a large activation, block by block, are
    # those of one pass over it (rounding to nearest)
    import importlib
    quantizer = importlib.import_module("hookgrad.memory.savers.quantize")
    values = np.maximum(np.random.default_rng(0).standard_normal((40, 6, 9, 7)), 0)
    values = values.astype(np.float32)
    whole = quantizer.quantize_array(values, 4, axis).decode()
    monkeypatch.setattr(quantizer, "ENCODE_BLOCK_BYTES", values[0].nbytes * 3)
    blocks = quantizer.quantize_array(values, 4, axis).decode()
    np.testing.assert_array_equal(blocks, whole)
    assert np.abs(blocks - values).max() <= values.max() / 15 * 1.0001  # within one step
