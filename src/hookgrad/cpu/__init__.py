"""torch.cpu: the CPU's namespace (here only its deprecated ``amp`` spellings)."""
from . import amp  # noqa: F401
