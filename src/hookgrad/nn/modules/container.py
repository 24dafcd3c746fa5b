"""Containers (Sequential, ModuleList, ModuleDict) and the parameterless shape modules."""
from __future__ import annotations

import operator
from collections import OrderedDict
from typing import Any, Iterable, Iterator, Mapping, Optional, Tuple, Union

from ...tensor import Tensor
from .module import Module, _addindent

__all__ = ["Sequential", "ModuleList", "ModuleDict", "Identity", "Flatten", "Unflatten"]


def _checked_index(index: Any, size: int) -> int:
    index = operator.index(index)
    if not -size <= index < size:
        raise IndexError(f"index {index} is out of range")
    return index % size


def _sequence_type_error(other: Any) -> ValueError:
    return ValueError("add operator supports only objects of Sequential class, but "
                      f"{type(other)} is given.")


def _check_factor(container: Module, other: Any) -> None:
    if not isinstance(other, int):
        raise TypeError(f"unsupported operand type(s) for *: {type(container)} and "
                        f"{type(other)}")
    if other <= 0:
        raise ValueError(f"Non-positive multiplication factor {other} for {type(container)}")


class Sequential(Module):
    """Modules run one after another: ``Sequential(a, b)(x) == b(a(x))``; also takes an
    ``OrderedDict`` of named modules."""

    def __init__(self, *args: Any) -> None:
        super().__init__()
        # One OrderedDict argument supplies the names; otherwise positions become names.
        named = len(args) == 1 and isinstance(args[0], OrderedDict)
        pairs = args[0].items() if named else ((str(index), layer)
                                               for index, layer in enumerate(args))
        for name, layer in pairs:
            self.add_module(name, layer)

    def __getitem__(self, index: Union[int, slice]) -> Module:
        if isinstance(index, slice):
            return type(self)(OrderedDict(list(self._modules.items())[index]))
        return list(self._modules.values())[_checked_index(index, len(self))]

    def __setitem__(self, index: int, module: Module) -> None:
        key = list(self._modules)[_checked_index(index, len(self))]
        setattr(self, key, module)

    def __delitem__(self, index: Union[int, slice]) -> None:
        if isinstance(index, slice):
            keys = list(self._modules)[index]
        else:
            keys = [list(self._modules)[_checked_index(index, len(self))]]
        for key in keys:
            delattr(self, key)
        # renumber so indices stay contiguous, as torch does
        self._modules = OrderedDict((str(i), m) for i, m in enumerate(self._modules.values()))

    def __len__(self) -> int:
        return len(self._modules)

    def __iter__(self) -> Iterator[Module]:
        return iter(self._modules.values())

    def __add__(self, other: "Sequential") -> "Sequential":
        if not isinstance(other, Sequential):
            raise _sequence_type_error(other)
        result = Sequential()
        for layer in list(self) + list(other):
            result.append(layer)
        return result

    def __iadd__(self, other: "Sequential") -> "Sequential":
        if not isinstance(other, Sequential):
            raise _sequence_type_error(other)
        offset = len(self)
        for index, module in enumerate(other):
            self.add_module(str(index + offset), module)
        return self

    def __mul__(self, other: int) -> "Sequential":
        _check_factor(self, other)
        result = Sequential()
        for offset, module in enumerate(list(self) * other):
            result.add_module(str(offset), module)
        return result

    __rmul__ = __mul__

    def __imul__(self, other: int) -> "Sequential":
        _check_factor(self, other)
        originals = list(self._modules.values())
        for offset, module in enumerate(originals * (other - 1), start=len(originals)):
            self.add_module(str(offset), module)
        return self

    def __dir__(self):
        return [key for key in super().__dir__() if not key.isdigit()]

    def pop(self, key: Union[int, slice]) -> Module:
        """Removes the module at ``key`` and returns it."""
        value = self[key]
        del self[key]
        return value

    def append(self, module: Module) -> "Sequential":
        """Adds ``module`` at the end; returns self."""
        self.add_module(str(len(self)), module)
        return self

    def insert(self, index: int, module: Module) -> "Sequential":
        """Inserts ``module`` before position ``index``; returns self."""
        if not isinstance(module, Module):
            raise AssertionError(f"module should be of type: {Module}")
        count = len(self._modules)
        if index < -count or index > count:
            raise IndexError(f"Index out of range: {index}")
        start = index + count if index < 0 else index
        # Slots start..count each take the module one place to their left; the new key
        # str(count) is the only one added, so it lands last in the dict.
        slots = [str(position) for position in range(start, count + 1)]
        shifted = [module] + [self._modules[slot] for slot in slots[:-1]]
        for slot, layer in zip(slots, shifted):
            self._modules[slot] = layer
        return self

    def extend(self, sequential: Iterable[Module]) -> "Sequential":
        """Appends every module of ``sequential``; returns self."""
        for layer in sequential:
            self.append(layer)
        return self

    def forward(self, input):
        for module in self:
            input = module(input)
        return input


class ModuleList(Module):
    """A list of modules, registered so their parameters are seen; it has no forward."""

    def __init__(self, modules: Optional[Iterable[Module]] = None) -> None:
        super().__init__()
        if modules is not None:
            self += modules

    def _absolute_key(self, index: Any) -> str:
        index = operator.index(index)
        if not -len(self) <= index < len(self):
            raise IndexError(f"index {index} is out of range")
        return str(index % len(self))

    def __getitem__(self, index: Union[int, slice]):
        if isinstance(index, slice):
            return type(self)(list(self._modules.values())[index])
        return self._modules[self._absolute_key(index)]

    def __setitem__(self, index: int, module: Module) -> None:
        setattr(self, self._absolute_key(index), module)

    def __delitem__(self, index: Union[int, slice]) -> None:
        if isinstance(index, slice):
            for k in range(len(self._modules))[index]:
                delattr(self, str(k))
        else:
            delattr(self, self._absolute_key(index))
        self._modules = OrderedDict((str(i), m) for i, m in enumerate(self._modules.values()))

    def __len__(self) -> int:
        return len(self._modules)

    def __iter__(self) -> Iterator[Module]:
        return iter(self._modules.values())

    def __iadd__(self, modules: Iterable[Module]) -> "ModuleList":
        return self.extend(modules)

    def __add__(self, other: Iterable[Module]) -> "ModuleList":
        combined = ModuleList()
        for index, module in enumerate([*self, *other]):
            combined.add_module(str(index), module)
        return combined

    def __repr__(self) -> str:
        """Runs of identical reprs are folded into ``(i-j): n x Layer(...)`` as torch does."""
        reprs = [repr(item) for item in self]
        if not reprs:
            return self._get_name() + "()"
        blocks = []  # [start, end, repr]
        for index, text in enumerate(reprs):
            if blocks and blocks[-1][2] == text:
                blocks[-1][1] = index
            else:
                blocks.append([index, index, text])
        lines = []
        for start, end, text in blocks:
            line = f"({start}): {text}" if start == end else \
                f"({start}-{end}): {end - start + 1} x {text}"
            lines.append(_addindent(line, 2))
        return self._get_name() + "(\n  " + "\n  ".join(lines) + "\n)"

    def __dir__(self):
        return [key for key in super().__dir__() if not key.isdigit()]

    def insert(self, index: int, module: Module) -> None:
        """Inserts ``module`` before position ``index``."""
        for i in range(len(self._modules), index, -1):
            self._modules[str(i)] = self._modules[str(i - 1)]
        self._modules[str(index)] = module

    def append(self, module: Module) -> "ModuleList":
        """Adds ``module`` at the end; returns self."""
        self.add_module(str(len(self)), module)
        return self

    def pop(self, key: Union[int, slice]) -> Module:
        """Removes the module at ``key`` and returns it."""
        value = self[key]
        del self[key]
        return value

    def extend(self, modules: Iterable[Module]) -> "ModuleList":
        """Appends every module of ``modules``; returns self."""
        if not isinstance(modules, Iterable) or isinstance(modules, (str, bytes)):
            raise TypeError("ModuleList.extend should be called with an iterable, but got "
                            + type(modules).__name__)
        offset = len(self)
        for index, module in enumerate(modules):
            self.add_module(str(offset + index), module)
        return self


class ModuleDict(Module):
    """An ordered dict of modules, registered so their parameters are seen."""

    def __init__(self, modules: Optional[Mapping[str, Module]] = None) -> None:
        super().__init__()
        if modules is not None:
            self.update(modules)

    # The mapping protocol goes straight to ``_modules``, so every entry is a registered child.
    def __contains__(self, key: str) -> bool:
        return key in self._modules

    def __len__(self) -> int:
        return len(self._modules)

    def __iter__(self) -> Iterator[str]:
        """Keys in insertion order, as a dict gives them."""
        return iter(self._modules)

    def __getitem__(self, key: str) -> Module:
        return self._modules[key]

    def __delitem__(self, key: str) -> None:
        del self._modules[key]

    def __setitem__(self, key: str, module: Module) -> None:
        """Register ``module`` as the child ``key``; the name rules of ``add_module`` apply."""
        self.add_module(key, module)

    def clear(self) -> None:
        """Removes every module."""
        self._modules.clear()

    def pop(self, key: str) -> Module:
        """Removes the module named ``key`` and returns it."""
        value = self[key]
        del self[key]
        return value

    def keys(self):
        """The names, in insertion order."""
        return self._modules.keys()

    def items(self):
        """``(name, module)`` pairs, in insertion order."""
        return self._modules.items()

    def values(self):
        """The modules, in insertion order."""
        return self._modules.values()

    def update(self, modules: Any) -> None:
        """Adds or replaces modules from a mapping or from ``(name, module)`` pairs."""
        if not isinstance(modules, Iterable):
            raise TypeError("ModuleDict.update should be called with an iterable of key/value "
                            "pairs, but got " + type(modules).__name__)
        if isinstance(modules, (OrderedDict, ModuleDict, Mapping)):
            for key, module in modules.items():
                self[key] = module
            return
        for index, pair in enumerate(modules):
            if not isinstance(pair, Iterable):
                raise TypeError(f"ModuleDict update sequence element #{index} should be "
                                f"Iterable; is {type(pair).__name__}")
            if len(pair) != 2:
                raise ValueError(f"ModuleDict update sequence element #{index} has length "
                                 f"{len(pair)}; 2 is required")
            self[pair[0]] = pair[1]


class Identity(Module):
    """Returns its input unchanged (takes and ignores any constructor arguments)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__()

    def forward(self, input: Tensor) -> Tensor:
        return input


class Flatten(Module):
    """Flattens dims ``start_dim..end_dim`` (by default all but the batch dim)."""

    def __init__(self, start_dim: int = 1, end_dim: int = -1) -> None:
        super().__init__()
        self.start_dim, self.end_dim = start_dim, end_dim

    def forward(self, input: Tensor) -> Tensor:
        return input.flatten(self.start_dim, self.end_dim)

    def extra_repr(self) -> str:
        return f"start_dim={self.start_dim}, end_dim={self.end_dim}"


class Unflatten(Module):
    """Splits dim ``dim`` into ``unflattened_size``."""

    def __init__(self, dim: Union[int, str], unflattened_size: Tuple[int, ...]) -> None:
        super().__init__()
        if not isinstance(unflattened_size, (tuple, list)):
            raise TypeError("unflattened_size must be a tuple of ints, but found type "
                            f"{type(unflattened_size).__name__}")
        for index, size in enumerate(unflattened_size):
            if not isinstance(size, int):
                raise TypeError("unflattened_size must be tuple of ints, but found element of "
                                f"type {type(size).__name__} at pos {index}")
        self.dim = dim
        self.unflattened_size = unflattened_size

    def forward(self, input: Tensor) -> Tensor:
        return input.unflatten(self.dim, self.unflattened_size)

    def extra_repr(self) -> str:
        return f"dim={self.dim}, unflattened_size={self.unflattened_size}"
