"""``patch``: replace what a module receives or returns, for ablations and feature mixing.

A forward pre-hook (``where="input"``) or forward hook (``where="output"``) that returns
``fn(module, value)``: torch's rule that a hook's return value replaces, and ``None`` keeps.
The same two hooks exist on PyTorch modules, so a torch model is patched by the same code.
"""
from __future__ import annotations

from typing import Any, Callable, Dict, List

from .recorder import Module, Selector, select_modules

WHERE = ("input", "output")


class patch:
    """Replace a module's output (or input) by ``fn(module, value)`` while the block runs.

    ``value`` is the module's output for ``where="output"``; for ``where="input"`` it is the
    positional argument when there is one, else the tuple of positional arguments (return a
    tuple then). Returning ``None`` keeps the value. ``layer`` selects modules like
    ``capture``'s ``layers`` (a name, glob, regex, type or module); every match is patched.
    ``model`` is a hookgrad or a PyTorch module (``fn`` then gets torch tensors).

    Example (mix each sample's features with the next sample's)::

        with patch(model, "layer1", lambda m, h: 0.5 * h + 0.5 * h.roll(1, 0)):
            logits = model(x)
    """

    def __init__(self, model: Module, layer: Selector, fn: Callable[[Module, Any], Any],
                 where: str = "output") -> None:
        if where not in WHERE:
            raise ValueError(f"where must be 'input' or 'output', got {where!r}")
        if not callable(fn):
            raise TypeError(f"fn must be callable as fn(module, value), got "
                            f"{type(fn).__name__}")
        self.where = where
        self.fn = fn
        self.modules: Dict[str, Module] = {
            name: module for name, module, _ in select_modules(model, [layer])}
        self.calls = 0
        self._handles: List[Any] = []

    def __enter__(self) -> "patch":
        for module in self.modules.values():
            if self.where == "output":
                self._handles.append(module.register_forward_hook(self._replace_output))
            else:
                self._handles.append(module.register_forward_pre_hook(self._replace_input))
        return self

    def __exit__(self, *exc_info: Any) -> None:
        self.remove()

    def remove(self) -> None:
        for handle in self._handles:
            handle.remove()
        self._handles.clear()

    def _replace_output(self, module: Module, args: tuple, output: Any) -> Any:
        self.calls += 1
        return self.fn(module, output)

    def _replace_input(self, module: Module, args: tuple) -> Any:
        self.calls += 1
        if len(args) == 1:
            replaced = self.fn(module, args[0])
            return None if replaced is None else (replaced,)
        replaced = self.fn(module, args)
        if replaced is not None and not isinstance(replaced, tuple):
            raise TypeError(f"{type(module).__name__} takes {len(args)} positional arguments: "
                            "the patch function must return a tuple of them (or None)")
        return replaced
