"""In-place correctness checks (PyTorch's "Autograd mechanics" note).

Every tensor keeps a version counter; a saved tensor whose version changed before backward read it
makes backward fail, naming the tensor and the node it came from.
"""
import hookgrad as torch

# A tensor saved by sigmoid (its output) changed in place afterwards is caught in backward
a = torch.randn(3, requires_grad=True)
b = a.sigmoid()
c = b * 2
b.add_(1)
try:
    c.sum().backward()
    print(a.grad)
except RuntimeError as error:
    print(type(error).__name__)
b = a.sigmoid()
b.mul_(2)
try:
    b.sum().backward()
except RuntimeError as error:
    print(str(error).split(";")[0])

# An input saved by mul, changed in place: the message names the tensor's current producer
b = a.exp()
c = b * a
b.mul_(2)
try:
    c.sum().backward()
except RuntimeError as error:
    print(str(error).split(";")[0])

# Versions: every in-place operation bumps the counter shared by a tensor and its views
x = torch.zeros(3)
view = x[1:]
print(x._version, view._version)
view.add_(1)
x.mul_(2)
print(x._version, view._version, x)
