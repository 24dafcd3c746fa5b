"""FunctionCtx: what a Function's ``forward`` and ``backward`` receive as ``ctx``.

Kept apart from ``function.py`` because it only records what the user declares (tensors to save,
dirty and non-differentiable outputs); the node that is also this ctx is built in function.py.
"""
from __future__ import annotations


class FunctionCtx:
    """What ``forward`` and ``backward`` receive as ``ctx`` (it is the backward node itself)."""

    _to_save = None
    _dirty = None
    _non_differentiable = None
    _materialize_grads = True
    needs_input_grad: tuple = ()
    _on_arrays = False  # a built-in formula running on arrays: saved_tensors gives arrays

    def save_for_backward(self, *tensors) -> None:
        """Keep tensors (inputs, outputs, others, or ``None``) for ``backward``; each passes the
        saved-tensor hooks now and is version-checked when read through ``saved_tensors``."""
        self._to_save = tensors

    def mark_dirty(self, *tensors) -> None:
        """Declare inputs that ``forward`` modified in place (they must be returned)."""
        self._dirty = tensors

    def mark_non_differentiable(self, *tensors) -> None:
        """Declare outputs that get no gradient (their grad in ``backward`` is zeros)."""
        self._non_differentiable = tensors

    def set_materialize_grads(self, value: bool) -> None:
        """With ``False``, ``backward`` receives ``None`` for outputs that got no gradient."""
        self._materialize_grads = value

    @property
    def saved_tensors(self) -> tuple:
        """The tensors given to ``save_for_backward``, unpacked (through any unpack hook); raises
        after they are freed."""
        saved = self._saved
        if len(saved) == 1:  # the common case, inline: one saved tensor (tanh's result, ...)
            one = saved[0]
            if one is None:
                return (None,)
            return (one.unpack_array(self) if self._on_arrays else one.unpack(self),)
        if self._on_arrays:
            return tuple([None if one is None else one.unpack_array(self) for one in saved])
        return tuple([None if one is None else one.unpack(self) for one in saved])

    saved_variables = saved_tensors

    def save_for_forward(self, *tensors) -> None:
        """Keeps tensors for a forward-mode ``jvp``; accepted for compatibility.

        Differs from torch: hookgrad has no forward-mode engine, so nothing reads them."""
        self._saved_for_forward = tensors
