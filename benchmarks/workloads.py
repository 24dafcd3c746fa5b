"""The workloads of ``compare.py``, once in torch's API (run by torch and by hookgrad) and once in
MyGrad's own API. Each ``make_*`` builds its model and data and returns a ``step()`` that runs one
forward and backward pass (and an SGD update where the workload trains).

The data come from a seeded NumPy generator so every framework sees the same inputs; weights are
each framework's own default initialisation (the timing does not depend on their values).

The MyGrad versions do the same work as the torch-API ones, checked for the MLPs: float32
throughout, the same eight matrix products per step (three forward; five backward, none for the
input batch) of the same shapes, timed alike in either layout (``step_parts.py``), softmax
cross entropy averaged over the batch, and a plain SGD update of every parameter. The one
difference in form: a torch Linear keeps its weight as (out, in) and multiplies by its
transpose, MyGrad's is (in, out); either way the weight's gradient is one product in its
parameter's own layout.
"""
from __future__ import annotations

from typing import Callable

import numpy as np

Step = Callable[[], None]


def _data(*shape: int, seed: int = 0) -> np.ndarray:
    return np.random.default_rng(seed).standard_normal(shape).astype(np.float32)


def _labels(batch: int, classes: int, seed: int = 1) -> np.ndarray:
    return np.random.default_rng(seed).integers(0, classes, batch)


# -- torch API (torch and hookgrad) ------------------------------------------------------------
def small_ops(torch) -> Step:
    """100 small elementwise ops on an 8-element tensor, then backward: per-op overhead."""
    x = torch.ones(8, requires_grad=True)

    def step():
        y = x
        for i in range(100):
            kind = i % 3
            y = y * 1.0001 if kind == 0 else (y + 0.001 if kind == 1 else y.tanh())
        y.sum().backward()
        x.grad = None

    return step


def _train(torch, model, inputs, loss_of, hooked: bool = False) -> Step:
    if hooked:
        for module in model.modules():
            module.register_forward_hook(lambda module, args, output: None)
    optimizer = torch.optim.SGD(model.parameters(), lr=1e-3)

    def step():
        optimizer.zero_grad()
        loss_of(model(inputs)).backward()
        optimizer.step()

    step.model = model  # for benchmarks that add and remove hooks between steps
    return step


def _classifier_loss(torch, batch: int, classes: int):
    target = torch.tensor(_labels(batch, classes))
    return lambda output: torch.nn.functional.cross_entropy(output, target)


def mlp(torch, batch: int = 128, hooked: bool = False) -> Step:
    """MLP 784-512-512-10 with ReLU, cross entropy, one SGD step."""
    nn = torch.nn
    model = nn.Sequential(nn.Linear(784, 512), nn.ReLU(), nn.Linear(512, 512), nn.ReLU(),
                          nn.Linear(512, 10))
    return _train(torch, model, torch.tensor(_data(batch, 784)),
                  _classifier_loss(torch, batch, 10), hooked)


def mlp_small_batch(torch) -> Step:
    return mlp(torch, batch=16)


def cnn(torch, batch: int = 64) -> Step:
    """Two 3x3 convs (1->32->64, padding 1) each with ReLU and 2x2 max pooling, then a linear."""
    nn = torch.nn
    model = nn.Sequential(nn.Conv2d(1, 32, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
                          nn.Conv2d(32, 64, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
                          nn.Flatten(), nn.Linear(64 * 7 * 7, 10))
    return _train(torch, model, torch.tensor(_data(batch, 1, 28, 28)),
                  _classifier_loss(torch, batch, 10))


def transformer(torch, batch: int = 16, seq: int = 64, dim: int = 128, heads: int = 4,
                hooked: bool = False) -> Step:
    """One post-norm encoder block (GELU feed-forward of 4 * dim), mean square loss."""
    block = torch.nn.TransformerEncoderLayer(dim, heads, 4 * dim, dropout=0.0, activation="gelu",
                                             batch_first=True)
    return _train(torch, block, torch.tensor(_data(batch, seq, dim)),
                  lambda output: output.square().mean(), hooked)


def deep_mlp(torch, batch: int = 256, width: int = 1024, depth: int = 16) -> Step:
    """16 Linear(1024, 1024) + ReLU, mean square loss: large GEMMs and gradient accumulation."""
    nn = torch.nn
    layers = []
    for _ in range(depth):
        layers += [nn.Linear(width, width), nn.ReLU()]
    return _train(torch, nn.Sequential(*layers[:-1]), torch.tensor(_data(batch, width)),
                  lambda output: output.square().mean())


def with_forward_hooks(make: Callable) -> Callable:
    """The workload ``make`` builds, with a forward hook that does nothing on every module of its
    model: what a tool that watches activations costs."""
    return lambda torch: make(torch, hooked=True)


# -- MyGrad's own API --------------------------------------------------------------------------
def _mygrad_param(shape: tuple, fan_in: int, seed: int):
    import mygrad as mg
    bound = 1 / fan_in ** 0.5
    values = np.random.default_rng(seed).uniform(-bound, bound, shape).astype(np.float32)
    return mg.tensor(values)


def _mygrad_train(params, loss_of) -> Step:
    def step():
        loss = loss_of()
        loss.backward()
        for p in params:
            p.data -= 1e-3 * p.grad
            p.null_grad()

    return step


def mygrad_small_ops() -> Step:
    import mygrad as mg
    x = mg.ones(8, dtype=np.float32)

    def step():
        y = x
        for i in range(100):
            kind = i % 3
            y = y * 1.0001 if kind == 0 else (y + 0.001 if kind == 1 else mg.tanh(y))
        y.sum().backward()
        x.null_grad()

    return step


def _mygrad_linears(sizes, seed: int = 0):
    params = []
    for i, (fan_in, fan_out) in enumerate(zip(sizes[:-1], sizes[1:])):
        params += [_mygrad_param((fan_in, fan_out), fan_in, seed + 2 * i),
                   _mygrad_param((fan_out,), fan_in, seed + 2 * i + 1)]
    return params


def _mygrad_mlp_forward(params, x):
    from mygrad.nnet import relu
    for i in range(0, len(params), 2):
        x = x @ params[i] + params[i + 1]
        if i < len(params) - 2:
            x = relu(x)
    return x


def mygrad_mlp(batch: int = 128) -> Step:
    from mygrad.nnet import softmax_crossentropy
    params = _mygrad_linears([784, 512, 512, 10])
    x, target = _data(batch, 784), _labels(batch, 10)
    return _mygrad_train(params, lambda: softmax_crossentropy(_mygrad_mlp_forward(params, x),
                                                              target))


def mygrad_mlp_small_batch() -> Step:
    return mygrad_mlp(batch=16)


def mygrad_cnn(batch: int = 64) -> Step:
    from mygrad.nnet import conv_nd, max_pool, relu, softmax_crossentropy
    w1, b1 = _mygrad_param((32, 1, 3, 3), 9, 0), _mygrad_param((32, 1, 1), 9, 1)
    w2, b2 = _mygrad_param((64, 32, 3, 3), 288, 2), _mygrad_param((64, 1, 1), 288, 3)
    w3, b3 = _mygrad_param((64 * 7 * 7, 10), 3136, 4), _mygrad_param((10,), 3136, 5)
    x, target = _data(batch, 1, 28, 28), _labels(batch, 10)

    def loss():
        h = max_pool(relu(conv_nd(x, w1, stride=1, padding=1) + b1), (2, 2), 2)
        h = max_pool(relu(conv_nd(h, w2, stride=1, padding=1) + b2), (2, 2), 2)
        return softmax_crossentropy(h.reshape(batch, -1) @ w3 + b3, target)

    return _mygrad_train([w1, b1, w2, b2, w3, b3], loss)


def _mygrad_layer_norm(x, weight, bias, eps: float = 1e-5):
    import mygrad as mg
    centered = x - mg.mean(x, axis=-1, keepdims=True)
    variance = mg.mean(centered * centered, axis=-1, keepdims=True)
    return centered / mg.sqrt(variance + eps) * weight + bias


def mygrad_transformer(batch: int = 16, seq: int = 64, dim: int = 128, heads: int = 4) -> Step:
    """The same post-norm block by hand; MyGrad has no erf, so GELU is its tanh form."""
    import mygrad as mg
    from mygrad.nnet import softmax
    head = dim // heads
    params = [_mygrad_param((dim, 3 * dim), dim, 0), _mygrad_param((3 * dim,), dim, 1),
              _mygrad_param((dim, dim), dim, 2), _mygrad_param((dim,), dim, 3),
              _mygrad_param((dim, 4 * dim), dim, 4), _mygrad_param((4 * dim,), dim, 5),
              _mygrad_param((4 * dim, dim), 4 * dim, 6), _mygrad_param((dim,), 4 * dim, 7),
              mg.ones(dim, dtype=np.float32), mg.zeros(dim, dtype=np.float32),
              mg.ones(dim, dtype=np.float32), mg.zeros(dim, dtype=np.float32)]
    w_in, b_in, w_out, b_out, w1, b1, w2, b2, g1, beta1, g2, beta2 = params
    x = _data(batch, seq, dim)

    def split(t):
        return mg.transpose(t.reshape(batch, seq, heads, head), (0, 2, 1, 3))

    def loss():
        qkv = x @ w_in + b_in
        q, k, v = (split(qkv[..., i * dim:(i + 1) * dim]) for i in range(3))
        weights = softmax(q @ mg.swapaxes(k, -1, -2) / head ** 0.5, axis=-1)
        attended = mg.transpose(weights @ v, (0, 2, 1, 3)).reshape(batch, seq, dim)
        h = _mygrad_layer_norm(x + attended @ w_out + b_out, g1, beta1)
        inner = h @ w1 + b1
        gelu = 0.5 * inner * (1 + mg.tanh(0.7978845608 * (inner + 0.044715 * inner ** 3)))
        out = _mygrad_layer_norm(h + gelu @ w2 + b2, g2, beta2)
        return mg.mean(out * out)

    return _mygrad_train(params, loss)


def mygrad_deep_mlp(batch: int = 256, width: int = 1024, depth: int = 16) -> Step:
    import mygrad as mg
    params = _mygrad_linears([width] * (depth + 1))
    x = _data(batch, width)

    def loss():
        out = _mygrad_mlp_forward(params, x)
        return mg.mean(out * out)

    return _mygrad_train(params, loss)


# name -> (description, torch-API builder, MyGrad builder or None)
WORKLOADS = {
    "small_ops": ("100 small ops, forward+backward", small_ops, mygrad_small_ops),
    "mlp": ("MLP 784-512-512-10, batch 128", mlp, mygrad_mlp),
    "mlp_b16": ("MLP 784-512-512-10, batch 16", mlp_small_batch, mygrad_mlp_small_batch),
    "cnn": ("CNN 2 conv + linear, batch 64, 28x28", cnn, mygrad_cnn),
    "transformer": ("transformer block d128 h4 s64 b16", transformer, mygrad_transformer),
    "deep_mlp": ("deep MLP 16x1024, batch 256", deep_mlp, mygrad_deep_mlp),
    "mlp_hooked": ("MLP batch 128, forward hook on every module", with_forward_hooks(mlp), None),
    "transformer_hooked": ("transformer, forward hook on every module",
                           with_forward_hooks(transformer), None),
}

# rows that report hooked / unhooked time of the same framework
HOOK_ROWS = {"mlp_hooked": "mlp", "transformer_hooked": "transformer"}


def build(name: str, framework: str) -> Step | None:
    """The step of workload ``name`` under ``framework`` (torch, hookgrad or mygrad); None when
    the workload has no version for that framework."""
    _, torch_api, mygrad_api = WORKLOADS[name]
    if framework == "mygrad":
        return mygrad_api() if mygrad_api is not None else None
    if framework == "torch":
        import torch
    else:
        import hookgrad as torch
    torch.manual_seed(0)
    return torch_api(torch)
