"""Storages against torch's: untyped (bytes) and typed (elements) windows on a tensor's memory,
the legacy classes, and ``Tensor.set_``/``is_set_to``/``_is_view``, each run in both libraries."""
from __future__ import annotations

import warnings

import numpy as np
import pytest
import torch

import hookgrad


def both(fn):
    """``fn(lib)`` under torch and hookgrad, with the typed-storage deprecation warning muted."""
    results = []
    for lib in (torch, hookgrad):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            try:
                results.append(fn(lib))
            except Exception as error:  # the same kind of error is part of the behaviour
                results.append(type(error).__name__)
    return results


def plain(value):
    """Results made comparable across the libraries: tensors as (dtype name, values)."""
    if isinstance(value, (torch.Tensor, hookgrad.Tensor)):
        return str(value.dtype).split(".")[-1], tuple(value.shape), value.stride(), \
            value.detach().numpy().tolist()
    if isinstance(value, (list, tuple)):
        return type(value)(plain(v) for v in value)
    if isinstance(value, (torch.dtype, hookgrad.dtype)):
        return str(value)
    return value


UNTYPED = {
    "nbytes": lambda L, x: x.untyped_storage().nbytes(),
    "size": lambda L, x: x.untyped_storage().size(),
    "len": lambda L, x: len(x.untyped_storage()),
    "element_size": lambda L, x: x.untyped_storage().element_size(),
    "tolist": lambda L, x: x.untyped_storage().tolist(),
    "first byte": lambda L, x: x.untyped_storage()[0],
    "last byte": lambda L, x: x.untyped_storage()[-1],
    "out of range": lambda L, x: x.untyped_storage()[10 ** 6],
    "slice": lambda L, x: x.untyped_storage()[2:6].tolist(),
    "slice shares": lambda L, x: x.untyped_storage()[2:6].data_ptr()
    - x.untyped_storage().data_ptr(),
    "views share": lambda L, x: x.t().untyped_storage().data_ptr()
    == x.untyped_storage().data_ptr() == x.data_ptr(),
    "clone is a copy": lambda L, x: (x.untyped_storage().clone().data_ptr()
                                     != x.untyped_storage().data_ptr(),
                                     x.untyped_storage().clone().tolist()
                                     == x.untyped_storage().tolist()),
    "write a byte": lambda L, x: (x.untyped_storage().__setitem__(0, 7), x)[1],
    "fill": lambda L, x: (x.untyped_storage().fill_(0), x)[1],
    "device": lambda L, x: str(x.untyped_storage().device),
    "is_shared": lambda L, x: x.untyped_storage().is_shared(),
    "is_storage": lambda L, x: (L.is_storage(x.untyped_storage()), L.is_storage(x.storage()),
                                L.is_storage(x)),
    "new zeroed": lambda L, x: L.UntypedStorage(5).nbytes(),
    "copy_": lambda L, x: (x.untyped_storage().copy_(L.ones_like(x).untyped_storage()), x)[1],
}
TYPED = {
    "size": lambda L, x: x.storage().size(),
    "len": lambda L, x: len(x.storage()),
    "nbytes": lambda L, x: x.storage().nbytes(),
    "element_size": lambda L, x: x.storage().element_size(),
    "dtype": lambda L, x: x.storage().dtype,
    "tolist": lambda L, x: x.storage().tolist(),
    "item": lambda L, x: x.storage()[1],
    "negative item": lambda L, x: x.storage()[-1],
    "slice refused": lambda L, x: x.storage()[0:2],
    "out of range": lambda L, x: x.storage()[100],
    "iter": lambda L, x: list(x.storage()),
    "write": lambda L, x: (x.storage().__setitem__(2, 9), x)[1],
    "fill": lambda L, x: (x.storage().fill_(3), x)[1],
    "data_ptr": lambda L, x: x.storage().data_ptr() == x.data_ptr(),
    "untyped": lambda L, x: x.storage().untyped().nbytes(),
    "storage_type": lambda L, x: x.storage_type().__name__,
    "legacy isinstance": lambda L, x: (isinstance(x.storage(), L.FloatStorage),
                                       isinstance(x.storage(), L.LongStorage),
                                       isinstance(x.storage(), L.TypedStorage)),
    "legacy call": lambda L, x: (L.DoubleStorage(3).size(), L.DoubleStorage(3).dtype,
                                 L.LongStorage([1, 2]).tolist()),
    "clone": lambda L, x: x.storage().clone().tolist(),
}


@pytest.mark.parametrize("dtype", ["float32", "float64", "int64", "int16", "uint8", "bool"])
@pytest.mark.parametrize("case", sorted(UNTYPED))
def test_untyped_storage_matches_torch(case, dtype):
    def run(lib):
        x = lib.tensor(np.arange(6).reshape(2, 3).astype(dtype))
        return plain(UNTYPED[case](lib, x))
    ours_torch, ours = both(run)
    assert ours == ours_torch


@pytest.mark.parametrize("dtype", ["float32", "float64", "int64", "int32", "bool"])
@pytest.mark.parametrize("case", sorted(TYPED))
def test_typed_storage_matches_torch(case, dtype):
    def run(lib):
        x = lib.tensor(np.arange(6).reshape(2, 3).astype(dtype))[:, 1:]  # a view: whole storage
        return plain(TYPED[case](lib, x))
    theirs, ours = both(run)
    assert ours == theirs


def test_typed_storage_warns_once_as_torch():
    hookgrad._warnings.forget_warned_once()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        hookgrad.arange(3.0).storage()
        hookgrad.arange(3.0).storage()
    assert [w.category for w in caught] == [UserWarning]
    assert "untyped_storage" in str(caught[0].message)
    assert caught[0].filename == __file__  # the user's line, not hookgrad's


SET = {
    "empty": lambda L, x, y: (y.set_(), y)[1],
    "to a tensor": lambda L, x, y: (y.set_(x), y, y.is_set_to(x), x.is_set_to(y))[1:],
    "to a view": lambda L, x, y: (y.set_(x[1:, ::2]), y, y.storage_offset())[1:],
    "tensor with geometry": lambda L, x, y: (y.set_(x, 2, (2, 2), (3, 1)), y)[1],
    "untyped storage": lambda L, x, y: (y.set_(x.untyped_storage(), 1, (2,), (2,)), y)[1],
    "untyped, sizes by default": lambda L, x, y: (y.set_(x.untyped_storage()), y)[1],
    "typed storage": lambda L, x, y: (y.set_(x.storage()), y)[1],
    "typed with offset": lambda L, x, y: (y.set_(x.storage(), 3, (3,)), y)[1],
    "shares memory": lambda L, x, y: (y.set_(x), y.add_(1), x)[2],
    "version": lambda L, x, y: (y._version, y.set_(x)._version)[1] - (0 if True else 0),
    "other dtype": lambda L, x, y: y.long().set_(x),
    "not a source": lambda L, x, y: y.set_(5),
    "leaf requiring grad": lambda L, x, y: y.requires_grad_().set_(x),
    "leaf requiring grad, no_grad": lambda L, x, y: _no_grad_set(L, x, y),
}


def _no_grad_set(lib, x, y):
    y.requires_grad_()
    with lib.no_grad():
        y.set_(x)
    return y.requires_grad, y.detach()


@pytest.mark.parametrize("case", sorted(SET))
def test_set_matches_torch(case):
    def run(lib):
        x = lib.arange(12.0).reshape(3, 4)
        y = lib.zeros(2)
        return plain(SET[case](lib, x, y))
    theirs, ours = both(run)
    assert ours == theirs


@pytest.mark.parametrize("make", [
    lambda x: x, lambda x: x[1:], lambda x: x.view(3, 4), lambda x: x.reshape(12),
    lambda x: x.detach(), lambda x: x.t() if x.ndim == 2 else x.unsqueeze(0),
    lambda x: x.clone(), lambda x: x.reshape(2, 6).contiguous(), lambda x: x[None]])
def test_is_view_and_is_set_to_match_torch(make):
    def run(lib):
        x = lib.arange(12.0)
        made = make(x)
        return made._is_view(), made.is_set_to(x), x.is_set_to(made)
    theirs, ours = both(run)
    assert ours == theirs


def test_set_past_the_end_of_a_storage_is_an_error():
    """torch grows the storage; hookgrad's memory belongs to NumPy and cannot grow under the
    tensors that share it, so it refuses with torch's out-of-bounds wording."""
    x = hookgrad.arange(3.0)
    with pytest.raises(RuntimeError, match="out of bounds for storage of size 12"):
        hookgrad.empty(0).set_(x.untyped_storage(), 0, (10,))
