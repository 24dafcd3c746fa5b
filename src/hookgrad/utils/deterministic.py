"""``torch.utils.deterministic``: ``fill_uninitialized_memory`` (True by default) says whether,
in deterministic mode, ``empty`` and its kin fill new memory with NaN or the dtype's largest
value. Reading and setting it goes to the switch the factories read."""
import sys
import types

from .._flags import fill_uninitialized_memory as _switch


class _DeterministicModule(types.ModuleType):
    @property
    def fill_uninitialized_memory(self) -> bool:
        """Whether deterministic mode fills uninitialised memory."""
        return _switch[0]

    @fill_uninitialized_memory.setter
    def fill_uninitialized_memory(self, mode: bool) -> None:
        if not isinstance(mode, bool):
            raise RuntimeError(f"expected a bool, but got {type(mode).__name__}")
        _switch[0] = mode


sys.modules[__name__].__class__ = _DeterministicModule
