"""The ``torch.backends`` flags scripts read: no MPS, no cuDNN, the CPU's capability."""
from . import cpu, cudnn, mps

__all__ = ["cpu", "cudnn", "mps"]
