"""Warnings that point at the user's line, as torch's C++ ops' do.

A hand-counted ``stacklevel`` is right for one call path only: the same op reached through
``out=``'s wrapper, the ``__torch_function__`` seam, a Tensor method or an nn module that calls
functional sits deeper, and the warning then names a hookgrad file. ``warn`` instead walks out
of the package and gives the first frame that is not hookgrad's, so ``filename``/``lineno`` of
the record are the caller's whatever the route. It imports nothing from hookgrad (it is below
every layer).
"""
from __future__ import annotations

import os
import sys
import warnings
from typing import Set, Type

_PACKAGE = os.path.dirname(os.path.abspath(__file__)) + os.sep

_warned_once: Set[str] = set()
# ``torch.set_warn_always(True)``: every ``warn_once`` site warns each time it is reached
warn_always = [False]


def _user_stacklevel() -> int:
    """The ``stacklevel`` for ``warnings.warn`` called from ``warn`` (or ``warn_once``) that
    names the first frame outside the package; frame 0 is this function, so level 1 (``warn``
    itself) is frame 1."""
    frame = sys._getframe(2)
    level = 2
    while frame is not None and frame.f_code.co_filename.startswith(_PACKAGE):
        frame = frame.f_back
        level += 1
    return level


def warn(message: str, category: Type[Warning] = UserWarning) -> None:
    """``warnings.warn`` with the location of the user's call that led here."""
    warnings.warn(message, category, stacklevel=_user_stacklevel())


def warn_once(message: str, category: Type[Warning] = UserWarning) -> None:
    """``warn`` the first time ``message`` is given in this process only, like torch's
    ``TORCH_WARN_ONCE`` (which no warning filter can bring back). Each of torch's once-sites
    has its own text, so the text is the key."""
    if message in _warned_once and not warn_always[0]:
        return
    _warned_once.add(message)
    warnings.warn(message, category, stacklevel=_user_stacklevel())


def forget_warned_once() -> None:
    """Let every ``warn_once`` message fire again, as in a fresh process (for tests)."""
    _warned_once.clear()


# torch's texts for two warnings ``Tensor`` gives
NON_LEAF_GRAD = (
    "The .grad attribute of a Tensor that is not a leaf Tensor is being accessed. Its .grad "
    "attribute won't be populated during autograd.backward(). If you indeed want the .grad field "
    "to be populated for a non-leaf Tensor, use .retain_grad() on the non-leaf Tensor. If you "
    "access the non-leaf Tensor by mistake, make sure you access the leaf Tensor instead. "
    "See github.com/pytorch/pytorch/pull/30531 for more information.")
SCALAR_OF_GRAD = ("Converting a tensor with requires_grad=True to a scalar may lead to unexpected "
                  "behavior.\nConsider using tensor.detach() first.")
