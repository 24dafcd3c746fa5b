"""Hooks for autograd saved tensors: saving on disk (PyTorch's intermediate tutorial).

Each saved tensor is written to a temporary file by the pack hook and read back by the unpack
hook; the file deletes itself when autograd releases what the pack hook returned.
"""
import os
import tempfile
import uuid

import hookgrad as torch
import hookgrad.nn as nn

tmp_dir_obj = tempfile.TemporaryDirectory()
tmp_dir = tmp_dir_obj.name


class SelfDeletingTempFile():
    def __init__(self):
        self.name = os.path.join(tmp_dir, str(uuid.uuid4()))

    def __del__(self):
        os.remove(self.name)


def pack_hook(tensor):
    temp_file = SelfDeletingTempFile()
    torch.save(tensor, temp_file.name)
    return temp_file


def unpack_hook(temp_file):
    return torch.load(temp_file.name, weights_only=True)


x = torch.randn(5, requires_grad=True)
y = x.pow(2)
y.grad_fn._raw_saved_self.register_hooks(pack_hook, unpack_hook)
print(len(os.listdir(tmp_dir)))
y.sum().backward()
print(x.grad.equal(2 * x))

x = torch.randn(5, requires_grad=True)
with torch.autograd.graph.saved_tensors_hooks(pack_hook, unpack_hook):
    y = x.pow(2).sin()
print(len(os.listdir(tmp_dir)))
y.sum().backward()
print(torch.allclose(x.grad, 2 * x * x.pow(2).cos()))
del y
print(len(os.listdir(tmp_dir)))

# Only tensors that are big enough go to disk
SAVE_ON_DISK_THRESHOLD = 1000


def pack_hook(x):
    if x.numel() < SAVE_ON_DISK_THRESHOLD:
        return x
    temp_file = SelfDeletingTempFile()
    torch.save(x, temp_file.name)
    return temp_file


def unpack_hook(tensor_or_sctf):
    if isinstance(tensor_or_sctf, torch.Tensor):
        return tensor_or_sctf
    return torch.load(tensor_or_sctf.name, weights_only=True)


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.small = nn.Linear(10, 10)
        self.big = nn.Linear(10, 200)

    def forward(self, x):
        with torch.autograd.graph.saved_tensors_hooks(pack_hook, unpack_hook):
            # ... compute output
            output = self.big(self.small(x).relu()).tanh()
        return output


model = Model()
out = model(torch.randn(8, 10))
print(len(os.listdir(tmp_dir)))
out.sum().backward()
print(model.small.weight.grad.shape, model.big.bias.grad.shape)
del out
print(len(os.listdir(tmp_dir)))
tmp_dir_obj.cleanup()
