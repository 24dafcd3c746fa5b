"""Two corners where NumPy's defaults differ from torch: the strides of empty tensors, and how a
double becomes a half (torch rounds to float first, then to half)."""
import numpy as np
import pytest
import torch

import hookgrad as hg

EMPTY_SHAPES = [(0,), (2, 0, 4, 5), (0, 3), (3, 0), (1, 0, 1), (0, 0, 2)]


@pytest.mark.parametrize("shape", EMPTY_SHAPES)
@pytest.mark.parametrize("make", ["zeros", "empty", "ones"])
def test_new_empty_tensor_strides(shape, make):
    assert getattr(hg, make)(*shape).stride() == getattr(torch, make)(*shape).stride()


VIEWS_AND_RESULTS = {
    "permute": lambda t: t.permute(*reversed(range(t.dim()))),
    "permute+contiguous": lambda t: t.permute(*reversed(range(t.dim()))).contiguous(),
    "mT": lambda t: t.mT if t.dim() > 1 else t,
    "slice": lambda t: t[1:],
    "unsqueeze": lambda t: t.unsqueeze(0),
    "view": lambda t: t.view(-1),
    "clone": lambda t: t.clone(),
    "sum": lambda t: t.sum(-1),
}


@pytest.mark.parametrize("shape", EMPTY_SHAPES)
@pytest.mark.parametrize("name", sorted(VIEWS_AND_RESULTS))
def test_empty_views_and_results(shape, name):
    make = VIEWS_AND_RESULTS[name]
    ours, theirs = make(hg.randn(*shape)), make(torch.randn(*shape))
    assert ours.stride() == theirs.stride()
    assert ours.is_contiguous() == theirs.is_contiguous()


# with a number operand torch reorders the dimensions of an empty result, and its running
# product then gives the dimensions slower than the size-0 one stride 0: (1, 0, 1) + 1 has
# strides (0, 1, 0), while exp keeps row-major ones
@pytest.mark.parametrize("shape", [(0,), (2, 0, 4, 5), (0, 3), (3, 0), (0, 0, 2), (1, 0, 1),
                                   (2, 0, 1), (0, 1)])
def test_empty_elementwise_results(shape):
    ours, theirs = hg.zeros(*shape), torch.zeros(*shape)
    assert (ours + 1).stride() == (theirs + 1).stride()
    assert ours.exp().stride() == theirs.exp().stride()


def _doubles(count: int = 200_000) -> np.ndarray:
    rng = np.random.default_rng(0)
    # wide magnitudes, subnormal halves included, so double rounding happens in many places
    return rng.standard_normal(count) * rng.choice([1e-7, 1e-5, 1e-3, 1.0, 1e2, 3e4], count)


def _same(ours, theirs) -> None:
    np.testing.assert_array_equal(ours.float().numpy(), theirs.float().numpy())


def test_double_to_half_rounds_through_float():
    x = _doubles()
    # the case this is about does occur in the data: NumPy's single rounding differs
    with np.errstate(over="ignore"):
        assert (x.astype(np.float16) != x.astype(np.float32).astype(np.float16)).any()
    _same(hg.from_numpy(x).half(), torch.from_numpy(x).half())
    _same(hg.from_numpy(x).to(hg.float16), torch.from_numpy(x).to(torch.float16))
    _same(hg.tensor(x.tolist(), dtype=hg.float16), torch.tensor(x.tolist(), dtype=torch.float16))
    _same(hg.as_tensor(x, dtype=hg.float16), torch.as_tensor(x, dtype=torch.float16))
    _same(hg.from_numpy(x).type_as(hg.zeros(1, dtype=hg.float16)),
          torch.from_numpy(x).type_as(torch.zeros(1, dtype=torch.float16)))


def test_double_written_into_half_rounds_through_float():
    x, y = _doubles(), _doubles()[::-1].copy()
    ours, theirs = hg.zeros(len(x), dtype=hg.float16), torch.zeros(len(x), dtype=torch.float16)
    ours.copy_(hg.from_numpy(x))
    theirs.copy_(torch.from_numpy(x))
    _same(ours, theirs)
    ours[:] = hg.from_numpy(y)
    theirs[:] = torch.from_numpy(y)
    _same(ours, theirs)
    ours.add_(hg.from_numpy(x))
    theirs.add_(torch.from_numpy(x))
    _same(ours, theirs)
    hg.mul(hg.from_numpy(x), hg.from_numpy(y), out=ours)
    torch.mul(torch.from_numpy(x), torch.from_numpy(y), out=theirs)
    _same(ours, theirs)


def test_double_gradient_into_half_leaf():
    x = _doubles(4096)
    ours = hg.from_numpy(x).half().requires_grad_()
    theirs = torch.from_numpy(x).half().requires_grad_()
    (ours.double() * hg.from_numpy(x)).sum().backward()
    (theirs.double() * torch.from_numpy(x)).sum().backward()
    _same(ours.grad, theirs.grad)


# empty tensors whose strides are not row-major: an expanded tensor sliced to nothing keeps its
# zero strides, a view keeps its base's, and an empty NumPy array hands over its own (zeros)
EMPTY_SOURCES = {
    "expanded, sliced": lambda lib, np_: lib.ones(1, 1, 1).expand(2, 3, 4)[:, 1:1],
    "expanded, sliced, transposed":
        lambda lib, np_: lib.ones(1, 1, 1).expand(2, 3, 4)[:, 1:1].transpose(0, 2),
    "1-d expanded, sliced": lambda lib, np_: lib.ones(1).expand(3)[1:1],
    "as_strided zeros, sliced": lambda lib, np_: lib.ones(4).as_strided([2, 3], [0, 0])[1:1],
    "slice": lambda lib, np_: lib.ones(2, 3, 4)[:, 1:1],
    "transposed slice": lambda lib, np_: lib.ones(2, 3, 4).transpose(0, 2)[1:1],
    "as_strided": lambda lib, np_: lib.ones(8).as_strided([2, 0, 3], [1, 0, 2]),
    "expanded empty": lambda lib, np_: lib.ones(2, 0, 1).expand(2, 0, 3),
    "tensor(empty ndarray)": lambda lib, np_: lib.tensor(np_.empty((0, 3))),
    "from_numpy(empty ndarray)": lambda lib, np_: lib.from_numpy(np_.empty((2, 0))),
    "as_tensor(empty ndarray)": lambda lib, np_: lib.as_tensor(np_.empty((0, 2, 3))),
    "tensor(transposed empty ndarray view)":
        lambda lib, np_: lib.tensor(np_.ones((3, 4)).T[0:0]),
}

ON_EMPTY = {
    "itself": lambda t: t,
    "t": lambda t: t.transpose(0, 1),
    "unsqueeze": lambda t: t.unsqueeze(0),
    "clone": lambda t: t.clone(),
    "contiguous": lambda t: t.contiguous(),
    "double": lambda t: t.double(),
    "add": lambda t: t + 1,
    "flip": lambda t: t.flip(1),
    "roll dim": lambda t: t.roll(1, 0),
    "roll flat": lambda t: t.roll(1),
    "repeat": lambda t: t.repeat(*([1, 2] + [1] * (t.dim() - 2))),
    "rot90": lambda t: t.rot90(),
    "rot90 2": lambda t: t.rot90(2),
    "rot90 3": lambda t: t.rot90(3),
    "fliplr": lambda t: t.fliplr(),
    "sum keepdim": lambda t: t.sum(0, keepdim=True),
}


@pytest.mark.parametrize("source", sorted(EMPTY_SOURCES))
@pytest.mark.parametrize("name", sorted(ON_EMPTY))
def test_empty_tensors_with_their_own_strides(source, name):
    try:
        theirs = ON_EMPTY[name](EMPTY_SOURCES[source](torch, np))
    except (RuntimeError, IndexError) as error:  # a 1-d source has no second dim
        with pytest.raises(type(error)):
            ON_EMPTY[name](EMPTY_SOURCES[source](hg, np))
        return
    ours = ON_EMPTY[name](EMPTY_SOURCES[source](hg, np))
    assert tuple(ours.shape) == tuple(theirs.shape)
    assert ours.stride() == theirs.stride()


@pytest.mark.parametrize("source", sorted(EMPTY_SOURCES))
def test_empty_like_keeps_an_empty_tensors_strides(source):
    ours = hg.empty_like(EMPTY_SOURCES[source](hg, np))
    theirs = torch.empty_like(EMPTY_SOURCES[source](torch, np))
    assert ours.stride() == theirs.stride()
