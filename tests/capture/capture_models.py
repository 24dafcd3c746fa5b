"""One small model written for ``lib`` (hookgrad or torch), with the same weights in both: a
first block whose input needs no gradient, a block called twice, a two-in two-out module whose
second input needs no gradient, and a head."""
import numpy as np


def build(lib, seed: int = 0, dtype=np.float64):
    rng = np.random.default_rng(seed)

    class Block(lib.nn.Module):
        def __init__(self, n_in, n_out):
            super().__init__()
            self.weight = lib.nn.Parameter(lib.tensor(rng.standard_normal((n_in, n_out))
                                                      .astype(dtype)))

        def forward(self, x):
            return lib.tanh(x @ self.weight)

    class Pair(lib.nn.Module):
        def forward(self, a, b):
            return a * b, a + b

    class Net(lib.nn.Module):
        def __init__(self):
            super().__init__()
            self.inp = Block(3, 4)
            self.shared = Block(4, 4)
            self.pair = Pair()
            self.head = Block(4, 2)

        def forward(self, x, y):
            hidden = self.shared(self.shared(self.inp(x)))
            product, total = self.pair(hidden, y)
            return self.head(product + total.relu())

    return Net()


def inputs(lib, seed: int = 1, dtype=np.float64, batch: int = 5):
    rng = np.random.default_rng(seed)
    return (lib.tensor(rng.standard_normal((batch, 3)).astype(dtype)),
            lib.tensor(rng.standard_normal((batch, 4)).astype(dtype)))


def step(lib, model, seed: int = 1, dtype=np.float64):
    """One forward and backward with a fixed output gradient."""
    x, y = inputs(lib, seed, dtype)
    out = model(x, y)
    weights = lib.tensor(np.linspace(-1, 1, out.numel()).reshape(out.shape).astype(dtype))
    (out * weights).sum().backward()
    return out


def numpy(value):
    """A NumPy copy of a hookgrad or torch tensor."""
    return np.array(value.detach().numpy(), copy=True)


def libraries():
    """hookgrad and torch, for tests whose body runs on both (parametrize over ``lib``)."""
    import torch

    import hookgrad

    return [hookgrad, torch]


def lib_id(lib) -> str:
    return lib.__name__


def build_attention(lib, seed: int = 0, dtype=np.float64, dim: int = 4):
    """A model whose interesting values are computed by functions inside ``forward``: one
    attention called twice (``@``, ``matmul``, ``/``, ``Tensor.softmax``,
    ``scaled_dot_product_attention``, ``cat``, ``F.linear``), then ``F.relu`` and
    ``F.softmax`` in the root's own ``forward``. Each attention call keeps its intermediates in
    ``trace`` so tests can compare records with the tensors themselves."""
    rng = np.random.default_rng(seed)
    functional = lib.nn.functional

    def parameter(*shape):
        return lib.nn.Parameter(lib.tensor(rng.standard_normal(shape).astype(dtype) / 2))

    class Attention(lib.nn.Module):
        def __init__(self):
            super().__init__()
            self.qkv = parameter(dim, 3 * dim)
            self.weight = parameter(dim, 2 * dim)
            self.bias = parameter(dim)
            self.trace = []

        def forward(self, x):
            q, k, v = (x @ self.qkv).chunk(3, -1)
            scores = lib.matmul(q, k.transpose(-2, -1)) / dim ** 0.5
            weights = scores.softmax(-1)
            mixed = weights @ v
            fused = functional.scaled_dot_product_attention(q, k, v)
            out = functional.linear(lib.cat([mixed, fused], -1), self.weight, self.bias)
            self.trace.append({"scores": scores, "weights": weights, "mixed": mixed,
                               "fused": fused, "out": out})
            return out

    class Net(lib.nn.Module):
        def __init__(self):
            super().__init__()
            self.attn = Attention()

        def forward(self, x):
            hidden = functional.relu(self.attn(self.attn(x)))
            return functional.softmax(hidden, dim=-1)

    return Net()


def attention_step(lib, model, seed: int = 1, dtype=np.float64):
    """One forward and backward of ``build_attention``'s model with a fixed output gradient."""
    x = lib.tensor(np.random.default_rng(seed).standard_normal((2, 3, 4)).astype(dtype))
    out = model(x)
    weights = lib.tensor(np.linspace(-1, 1, out.numel()).reshape(out.shape).astype(dtype))
    (out * weights).sum().backward()
    return out
