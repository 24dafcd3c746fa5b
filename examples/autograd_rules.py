"""The rules autograd plays by, each shown with a few lines and an event log.

- the order hooks fire in during one backward pass, and what a returned value does;
- gradients of a vector output, and how repeated backward passes add up;
- which hooks fire when only some inputs' gradients are asked for;
- a tensor hook and an in-place change;
- switching gradient recording off and on (no_grad, enable_grad, set_grad_enabled,
  inference_mode, and eval mode, which is not one of them);
- version counters, and the error backward raises when something it saved was changed in place.

Run it as it is, or with the first import changed to ``import torch``.
"""
import hookgrad as torch
from hookgrad import nn

log = []


def note(label):
    def hook(*args):
        log.append(label)
    return hook


# -- hook order ------------------------------------------------------------------------------------
leaf = torch.tensor([0.5, 1.5, -1.0], requires_grad=True)
middle = leaf * 3
middle.retain_grad()
top = middle.exp()
middle.register_hook(note("tensor hook on middle"))
middle.grad_fn.register_prehook(note("pre-hook of middle's node"))
middle.grad_fn.register_hook(note("hook of middle's node"))
leaf.register_hook(note("tensor hook on leaf"))
leaf.register_post_accumulate_grad_hook(note("leaf's gradient accumulated"))
top.sum().backward()
print("\n".join(log))
print("retained:", middle.grad)
log.clear()

# A tensor hook's result replaces the gradient; so does a node pre-hook's and a node hook's.
weights = torch.tensor([1.0, -2.0, 4.0], requires_grad=True)
scaled = weights * weights
scaled.register_hook(lambda grad: grad + 1)
scaled.grad_fn.register_prehook(lambda grad_outputs: (grad_outputs[0] * 2,))
scaled.sum().backward()
print("replaced gradients:", weights.grad)
gate = torch.tensor([0.1, 0.2], requires_grad=True)
opened = gate.sigmoid()
opened.grad_fn.register_hook(lambda grad_inputs, grad_outputs: (grad_inputs[0] * 0 + 7,))
opened.sum().backward()
print("node hook's replacement:", gate.grad)

# A removed hook does nothing; a hook on a leaf outside the graph is never called.
counter = torch.ones(2, requires_grad=True)
handle = counter.register_hook(lambda grad: grad * 1000)
handle.remove()
bystander = torch.ones(2, requires_grad=True)
bystander.register_hook(note("bystander"))
(counter * 5).sum().backward()
print("after remove:", counter.grad, "- bystander:", bystander.grad, log)

# -- gradients accumulate -------------------------------------------------------------------------
inputs = torch.tensor([1.0, 2.0, 3.0], requires_grad=True)
curve = inputs ** 3
try:
    curve.backward()
except RuntimeError as error:
    print("a vector needs a gradient to start from:", error)
curve.backward(torch.tensor([1.0, 0.0, -1.0]), retain_graph=True)
print("one vector-Jacobian product:", inputs.grad)
curve.backward(torch.tensor([1.0, 0.0, -1.0]))
print("the same again, added on:", inputs.grad)

# -- asking for some inputs only ---------------------------------------------------------------
first = torch.tensor([1.0, 2.0], requires_grad=True)
second = torch.tensor([3.0, 4.0], requires_grad=True)
joint = first * second
first.register_hook(note("first"))
second.register_hook(note("second"))
joint.grad_fn.register_hook(
    lambda grad_inputs, grad_outputs: log.append(
        "node sees " + str([None if g is None else tuple(g.shape) for g in grad_inputs])))
(only_first,) = torch.autograd.grad(joint.sum(), first, retain_graph=True)
print("grad for first only:", only_first, log)
log.clear()
joint.sum().backward(inputs=[second])
print("backward(inputs=[second]):", first.grad, second.grad, log)
log.clear()

# -- tensor hooks and in-place changes ---------------------------------------------------------
source = torch.tensor(0.8, requires_grad=True)
value = source * 2
value.register_hook(lambda grad: log.append(f"before the change: {grad.item():.4f}"))
value.sin_()
value.register_hook(lambda grad: log.append(f"after the change: {grad.item():.4f}"))
value.backward()
print(log, "gradient:", round(source.grad.item(), 4))
log.clear()

# -- recording on and off ----------------------------------------------------------------------
x = torch.tensor([2.0, 3.0], requires_grad=True)
with torch.no_grad():
    quiet = x * 2
    with torch.enable_grad():
        loud = x * 2
print("no_grad:", quiet.requires_grad, "enable_grad inside it:", loud.requires_grad)
for recording in (False, True):
    with torch.set_grad_enabled(recording):
        print(f"set_grad_enabled({recording}):", (x * 2).requires_grad,
              torch.is_grad_enabled())


@torch.no_grad()
def halve(t):
    return t / 2


print("decorated with no_grad:", halve(x).requires_grad)
with torch.inference_mode():
    fast = x * x
    print("inside inference_mode:", torch.is_inference_mode_enabled(), torch.is_grad_enabled())
print("made in inference_mode:", fast.requires_grad, fast.grad_fn)

layer = nn.Linear(2, 1)
layer.eval()
print("eval mode still records:", layer(x.unsqueeze(0)).requires_grad)

frozen = nn.Sequential(nn.Linear(2, 2), nn.ReLU(), nn.Linear(2, 1))
frozen[0].requires_grad_(False)
frozen(x.unsqueeze(0)).sum().backward()
print("frozen first layer:", [(name, param.grad is not None)
                              for name, param in frozen.named_parameters()])

# A leaf that requires grad may be changed in place only while nothing records.
step = torch.tensor([1.0, -1.0], requires_grad=True)
with torch.no_grad():
    step -= 0.5
print("updated under no_grad:", step, step.is_leaf)
try:
    step += 1
except RuntimeError as error:
    print("updated while recording:", error)

# -- versions and in-place correctness ---------------------------------------------------------
base = torch.zeros(4)
window = base[1:3]
print("versions:", base._version, window._version)
window.add_(2)
base.mul_(3)
print("after two in-place ops:", base._version, window._version, base)

theta = torch.tensor([0.3, -0.7, 1.1], requires_grad=True)
squashed = theta.tanh()      # tanh saves its result for backward
doubled = squashed * 2
squashed.add_(1)             # ...which is now changed
try:
    doubled.sum().backward()
except RuntimeError as error:
    print("saved result changed:", str(error).split(";")[0])
scaled = theta.exp()
product = scaled * theta     # mul saves both operands
scaled.mul_(2)
try:
    product.sum().backward()
except RuntimeError as error:
    print("saved operand changed:", str(error).split(";")[0])
