"""Keep what backward needs on disk rather than in memory, with one pair of saved-tensor hooks.

Every tensor an operation saves for backward passes through the pack hook, which writes it to a
file of its own and hands autograd a small ticket instead. When backward needs the tensor, the
unpack hook reads it back. A ticket deletes its file as soon as autograd lets go of it (after
backward, or when the graph is dropped unused); the temporary directory goes at the end whatever
happens, so no file outlives the program.

It also shows what the operations saved, in order, which is what a pack hook sees. Run it as it
is, or with the first import changed to ``import torch``.
"""
import os
import tempfile
import weakref

import numpy as np

import hookgrad as torch
from hookgrad import nn


def _remove_if_there(path):
    if os.path.exists(path):
        os.remove(path)


class Ticket:
    """Where one saved tensor was written; dropping the ticket deletes the file."""

    def __init__(self, directory, number, tensor):
        self.path = os.path.join(directory, f"saved-{number:03d}.pt")
        torch.save(tensor, self.path)
        weakref.finalize(self, _remove_if_there, self.path)


class DiskSpill:
    """A pack/unpack pair writing saved tensors under ``directory``, with a log of what passed."""

    def __init__(self, directory):
        self.directory = directory
        self.written = []
        self.read = 0

    def pack(self, tensor):
        self.written.append((tuple(tensor.shape), str(tensor.dtype).replace("torch.", "")))
        return Ticket(self.directory, len(self.written), tensor)

    def unpack(self, ticket):
        self.read += 1
        return torch.load(ticket.path)

    def files(self):
        return sorted(os.listdir(self.directory))


model = nn.Sequential(nn.Linear(6, 16), nn.Tanh(), nn.Linear(16, 16), nn.Sigmoid(),
                      nn.Linear(16, 3))
start = np.random.default_rng(11)
with torch.no_grad():
    for param in model.parameters():
        param.copy_(torch.tensor(start.uniform(-0.4, 0.4, tuple(param.shape)),
                                 dtype=torch.float32))
inputs = torch.tensor(np.linspace(-1.0, 1.0, 8 * 6).reshape(8, 6), dtype=torch.float32)
targets = torch.tensor(np.arange(8) % 3)

# The gradients with everything kept in memory, to compare against.
nn.functional.cross_entropy(model(inputs), targets).backward()
in_memory = [param.grad.clone() for param in model.parameters()]
model.zero_grad()

with tempfile.TemporaryDirectory() as directory:
    spill = DiskSpill(directory)
    with torch.autograd.graph.saved_tensors_hooks(spill.pack, spill.unpack):
        loss = nn.functional.cross_entropy(model(inputs), targets)
    print("saved for backward, in order:")
    for shape, dtype in spill.written:
        print("  ", shape, dtype)
    print("files after forward:", len(spill.files()))
    loss.backward()
    print("files read back:", spill.read, "- files left after backward:", len(spill.files()))
    same = all(torch.equal(param.grad, expected)
               for param, expected in zip(model.parameters(), in_memory))
    print("gradients equal the in-memory ones:", same)

    # A graph that is dropped without backward takes its files with it.
    with torch.autograd.graph.saved_tensors_hooks(spill.pack, spill.unpack):
        unused = model(inputs).pow(2).mean()
    print("files of an unused graph:", len(spill.files()))
    del unused
    print("after dropping it:", len(spill.files()))
print("temporary directory removed:", not os.path.exists(directory))

# What a node saved can be looked at directly: the result of tanh, both operands of a product.
x = torch.tensor([0.5, -1.0, 2.0], requires_grad=True)
y = torch.tensor([3.0, 0.25, -2.0], requires_grad=True)
activation = x.tanh()
print("tanh saved its result:", torch.equal(activation.grad_fn._saved_result, activation))
product = x * y
print("mul saved its operands:", torch.equal(product.grad_fn._saved_self, x),
      torch.equal(product.grad_fn._saved_other, y))

# One saved tensor can get its own pair of hooks, too.
events = []
square = x.pow(2)
square.grad_fn._raw_saved_self.register_hooks(
    lambda tensor: events.append("pack") or tensor * 10,
    lambda stored: events.append("unpack") or stored / 10)
square.sum().backward()
print("per-tensor hooks:", events, "gradient:", x.grad)

# save_on_cpu is the same idea with memory instead of files: each saved tensor is copied aside.
x.grad = None
with torch.autograd.graph.save_on_cpu():
    out = (x.sigmoid() * y).sum()
out.backward()
print("with save_on_cpu:", x.grad)
