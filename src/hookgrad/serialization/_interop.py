"""torch tensors handed to hookgrad (a torch state dict given to ``load_state_dict``)."""
from __future__ import annotations

import sys
from typing import Any

import hookgrad
from ._storage import hookgrad_dtype


def is_torch_tensor(value: Any) -> bool:
    """True for a torch tensor; never imports torch (if it is not imported, nothing is one)."""
    torch = sys.modules.get("torch")
    return torch is not None and isinstance(value, getattr(torch, "Tensor", ()))


def from_torch(value: Any) -> Any:
    """A hookgrad tensor on the same memory as a CPU torch tensor (a copy only for another
    device); a torch Parameter becomes a hookgrad Parameter. Anything else is returned as is."""
    if not is_torch_tensor(value):
        return value
    torch = sys.modules["torch"]
    name = str(value.dtype).replace("torch.", "")
    dtype = hookgrad_dtype(name, "a torch tensor")
    data = value.detach()
    if data.device.type != "cpu":
        data = data.cpu()
    data = data.resolve_conj().resolve_neg()
    if dtype is hookgrad.bfloat16:  # torch gives no NumPy array of bfloat16: read its bits
        array = data.view(torch.int16).numpy().view(dtype.numpy)
    else:
        array = data.numpy()
    tensor = hookgrad.from_numpy(array)
    if isinstance(value, torch.nn.Parameter):
        return hookgrad.nn.Parameter(tensor, value.requires_grad)
    return tensor
