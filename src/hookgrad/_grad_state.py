"""Grad mode's thread-local state and the mark of inference tensors: below ``tensor.py``, so
both the tensor (which refuses some changes to inference tensors) and ``autograd`` read them.

An inference tensor (made inside ``inference_mode``) is marked by its version counter: an
``InferenceVersion`` instead of a plain list. Views and ``detach()`` share their source's
counter, so they are marked too, while a view of a normal tensor made in inference mode is
not, as in torch. Ops test the mark only where it matters: where a tensor is saved for
backward, and when a version is bumped (every in-place change); normal tensors pay nothing.
"""
from __future__ import annotations

import functools
import threading


class _State(threading.local):
    def __init__(self):
        self.enabled = True  # ops record a graph
        self.inference = False
        # grad mode as set inside inference mode, which records nothing whatever it says:
        # only ``is_grad_enabled()`` reads it
        self.requested = False


_state = _State()

INFERENCE_SAVE_ERROR = (
    "Inference tensors cannot be saved for backward. Please do not use Tensors created in "
    "inference mode in computation tracked by autograd. To work around this, you can make a "
    "clone to get a normal tensor and use it in autograd, or use `torch.no_grad()` instead of "
    "`torch.inference_mode()`.")
INFERENCE_INPLACE_ERROR = (
    "Inplace update to inference tensor outside InferenceMode is not allowed.You can make a "
    "clone to get a normal tensor before doing inplace update.See "
    "https://github.com/pytorch/rfcs/pull/17 for more details.")
INFERENCE_REQUIRES_GRAD_ERROR = ("Setting requires_grad=True on inference tensor outside "
                                 "InferenceMode is not allowed.")
INFERENCE_VERSION_ERROR = "Inference tensors do not track version counter."


class InferenceVersion(list):
    """The version counter of an inference tensor. Outside inference mode it may not move:
    every in-place change bumps its tensor's counter, so refusing the bump refuses every
    in-place change, after the write, as torch's check (on the bump too) does."""

    __slots__ = ()

    def __setitem__(self, index, value) -> None:
        if not _state.inference:
            raise RuntimeError(INFERENCE_INPLACE_ERROR)
        list.__setitem__(self, index, value)


def marking_constructor(constructor):
    """``constructor`` (a tensor's ``_make`` or ``_init``), then the mark on what it made when
    this thread is in inference mode."""
    @functools.wraps(constructor)
    def marking(first, *args, **kwargs):
        made = constructor(first, *args, **kwargs)
        tensor = first if made is None else made  # _init fills ``first``; _make returns one
        if _state.inference:
            tensor._version_counter = InferenceVersion([0])
        return made
    return marking


_users_lock = threading.Lock()
_users = [0]


def inference_users(entering: bool) -> bool:
    """Counts the threads' open inference-mode blocks; True while there is one."""
    with _users_lock:
        _users[0] += 1 if entering else -1
        return _users[0] > 0
