"""A seeded generator of random autograd programs.

A program is data only: ``{"seed", "dtype", "lines"}`` where each line is a dict with ``code``
(one torch-like Python statement), ``ins`` (the names it reads), ``outs`` (the names it defines)
and ``show`` (the names whose state is recorded after it runs: its outputs, or the tensor it
changes in place). The same text runs under both libraries, prints as a pastable program and
shrinks by dropping lines (a dropped line takes the lines that read its outputs with it).

The generator tracks each name's shape and whether it probably requires grad, so most lines are
valid; some are not on purpose (a view of a non-contiguous tensor, in-place on a leaf, a second
backward through a freed graph) and then both libraries must raise the same kind of error.
"""
from __future__ import annotations

import random

import numpy as np

from .families import HookLines, ViewLines, broadcast

DTYPES = ("float64", "float64", "float64", "float32")

UNARY = [
    "{a}.exp()", "{a}.tanh()", "{a}.sigmoid()", "{a}.relu()", "{a}.sin()", "{a}.cos()",
    "-{a}", "{a}.abs()", "{a} * {a}", "{a}.pow(2)", "{a}.pow(3)", "{a} * 2.5", "{a} + 1.0",
    "{a} / 3.0", "2.0 - {a}", "torch.nn.functional.softplus({a})",
    "torch.nn.functional.leaky_relu({a}, 0.1)", "torch.nn.functional.gelu({a})",
    "{a}.abs().add(1).log()", "{a}.abs().add(0.5).sqrt()", "torch.erf({a})", "{a}.clamp(-0.5, 0.5)",
    "{a}.clamp(min=0.1)", "{a}.clone()", "{a}.contiguous()", "{a}.detach()",
    "{a}.detach().requires_grad_()", "torch.where({a} > 0, {a}, {a} * 0.5)",
]
BINARY = ["{a} + {b}", "{a} - {b}", "{a} * {b}", "{a} / ({b}.abs() + 1)",
          "torch.maximum({a}, {b})", "{a} * {b}.detach()", "torch.add({a}, {b}, alpha=2)"]
IN_PLACE = ["{a}.mul_(2.0)", "{a}.add_(1.5)", "{a}.clamp_(-1, 1)", "{a}.zero_()", "{a}.exp_()",
            "{a}.sigmoid_()", "{a}.relu_()", "{a}.sub_(0.5)", "{a}.tanh_()"]
CUSTOM = ["Square", "SquareOnce", "WithCount", "DoubleInPlace", "WithMask", "Lazy"]


class Generator(ViewLines, HookLines):
    """Builds one program; ``vars`` maps a name to ``(shape, requires_grad)``."""

    def __init__(self, seed: int):
        self.seed = seed
        self.rng = random.Random(seed)
        self.dtype = self.rng.choice(DTYPES)
        self.lines: list[dict] = []
        self.vars: dict[str, tuple] = {}
        self.modules: list[str] = []
        self.root: dict[str, str] = {}  # a view's name -> the name whose memory it shares
        self.written: set = set()  # roots whose memory an in-place op (or assignment) changed
        self.grad_derived: set = set()  # gradients from autograd.grad, and views/maps of them
        self.retained: set = set()  # names given retain_grad (directly or by backward(inputs))
        self.producer: dict[str, list] = {}  # name -> the names its line read
        self.node_hooked: set = set()  # names whose grad_fn has a post-hook
        self.count = 0
        self.hooks = 0
        self.saved_hooks_open = False
        # In-place ops are left out of programs that use saved-tensor hooks: torch skips its
        # version check for tensors packed by hooks (a stale value gives a silently wrong
        # gradient), hookgrad deliberately keeps the check while the packed tensor still
        # shares the original's memory (saved.py, SavedTensor._unpack_hooked).
        self.saved_hooks_used = False

    # -- names and lines ---------------------------------------------------------------------
    def name(self, prefix: str = "t") -> str:
        self.count += 1
        return f"{prefix}{self.count}"

    def emit(self, code: str, ins, outs=(), show=None):
        ins = list(dict.fromkeys(ins))
        for out in outs:
            self.producer[out] = ins
        self.lines.append({"code": code, "ins": ins, "outs": list(outs),
                           "show": list(outs) if show is None else list(show)})

    def pick(self, pred=None, rg: bool = False, grads: bool = True, exclude=None,
             exclude_written_views: bool = False, exclude_names=()):
        names = [n for n, (shape, r) in self.vars.items()
                 if (pred is None or pred(shape)) and (r or not rg) and n not in exclude_names
                 and (grads or not self.root.get(n, n).startswith("g"))
                 and (exclude is None or not self.shares_memory(n, exclude))
                 and not (exclude_written_views and n in self.root
                          and self.root[n] in self.written)]
        if not names:
            return None
        # recent names are more interesting: they carry more history
        weights = [1 + i for i in range(len(names))]
        return self.rng.choices(names, weights)[0]

    def alias(self, view: str, source: str) -> None:
        self.root[view] = self.root.get(source, source)

    def base_gains_grad(self, target: str, source: str) -> None:
        """Writing a tensor that needs grad into a view makes its base need one too."""
        root = self.root.get(target, target)
        if self.rg_of(source) and root in self.vars:
            self.vars[root] = (self.shape_of(root), True)

    def shares_memory(self, a: str, b: str) -> bool:
        return self.root.get(a, a) == self.root.get(b, b)

    def wrote(self, name: str) -> None:
        self.written.add(self.root.get(name, name))

    def shape_of(self, name):
        return self.vars[name][0]

    def rg_of(self, name):
        return self.vars[name][1]

    # -- inputs ------------------------------------------------------------------------------
    def random_shape(self):
        ndim = self.rng.choice((0, 1, 1, 2, 2, 2, 3, 3))
        return tuple(self.rng.randint(1, 4) for _ in range(ndim))

    def add_input(self, shape=None, requires_grad=None):
        shape = self.random_shape() if shape is None else tuple(shape)
        rg = self.rng.random() < 0.8 if requires_grad is None else requires_grad
        values = np.random.default_rng(self.seed * 1000 + self.count).standard_normal(shape)
        literal = repr(values.round(3).tolist())
        out = self.name("x")
        flag = ", requires_grad=True" if rg else ""
        self.emit(f"{out} = torch.tensor({literal}, dtype=torch.{self.dtype}{flag})", [], [out])
        self.vars[out] = (shape, rg)
        return out

    # -- one random line ---------------------------------------------------------------------
    def step(self):
        kinds = [(self.unary, 10), (self.binary, 8), (self.reduce, 5), (self.matmul, 3),
                 (self.view, 14), (self.multi_view, 3), (self.join, 2), (self.in_place, 9),
                 (self.index_assign, 3), (self.custom, 4), (self.tensor_hooks, 5),
                 (self.node_hooks, 3), (self.module, 2), (self.saved_hooks, 2),
                 (self.backward, 3), (self.grad, 3), (self.add_input, 1)]
        fns, weights = zip(*kinds)
        self.rng.choices(fns, weights)[0]()

    def unary(self):
        a = self.pick(lambda s: True)
        if a is None:
            return
        template = self.rng.choice(UNARY)
        out = self.name()
        rg = self.rg_of(a) and ".detach()" not in template or "requires_grad_" in template
        self.emit(f"{out} = " + template.format(a=a), [a], [out])
        self.vars[out] = (self.shape_of(a), rg)
        if ".detach()" in template or "contiguous" in template:
            self.alias(out, a)  # shares a's memory (contiguous() may return a itself)
        if a in self.grad_derived:
            self.grad_derived.add(out)

    def binary(self):
        a = self.pick()
        if a is None:
            return
        shape = self.shape_of(a)
        candidates = [n for n, (s, _) in self.vars.items() if broadcast(shape, s) is not None]
        b = self.rng.choice(candidates)
        out = self.name()
        template = self.rng.choice(BINARY)
        if self.rng.random() < 0.5:
            a, b = b, a
        self.emit(f"{out} = " + template.format(a=a, b=b), [a, b], [out])
        detach_b = ".detach()" in template
        rg = self.rg_of(a) or (self.rg_of(b) and not detach_b)
        self.vars[out] = (broadcast(self.shape_of(a), self.shape_of(b)), rg)

    def reduce(self):
        a = self.pick()
        if a is None:
            return
        shape = self.shape_of(a)
        out = self.name()
        if not shape or self.rng.random() < 0.25:
            op = self.rng.choice(["sum()", "mean()", "norm()", "amax()", "prod()"])
            self.emit(f"{out} = {a}.{op}", [a], [out])
            self.vars[out] = ((), self.rg_of(a))
            return
        d = self.rng.randrange(len(shape))
        keep = self.rng.random() < 0.3
        op = self.rng.choice(["sum", "mean", "amax", "logsumexp", "softmax", "log_softmax",
                              "cumsum", "var", "prod"])
        if op in ("softmax", "log_softmax", "cumsum"):
            self.emit(f"{out} = {a}.{op}({d})", [a], [out])
            self.vars[out] = (shape, self.rg_of(a))
            return
        self.emit(f"{out} = {a}.{op}({d}{', keepdim=True' if keep else ''})", [a], [out])
        new = list(shape)
        if keep:
            new[d] = 1
        else:
            del new[d]
        self.vars[out] = (tuple(new), self.rg_of(a))

    def matmul(self):
        if self.saved_hooks_open:
            # which tensors matmul saves depends on how it folds batch dimensions into mm
            # (torch packs one more in some shapes); left out under saved-tensor hooks
            return
        a = self.pick(lambda s: 1 <= len(s) <= 3)
        if a is None:
            return
        k = self.shape_of(a)[-1]
        b = self.pick(lambda s: len(s) == 2 and s[0] == k)
        if b is None or self.rng.random() < 0.4:
            b = self.add_input((k, self.rng.randint(1, 4)))
        out = self.name()
        self.emit(f"{out} = {a} @ {b}", [a, b], [out])
        self.vars[out] = (self.shape_of(a)[:-1] + self.shape_of(b)[1:],
                          self.rg_of(a) or self.rg_of(b))

    def pick_target(self, pred=None):
        """A tensor to change in place. Not a gradient from autograd.grad: torch's backward
        formulas often return expanded views made under no_grad (a sum's gradient), which
        torch then refuses to change in place, while hookgrad's are fresh arrays; whether a
        gradient is a view is torch's implementation detail, not its API."""
        return self.pick(lambda s: pred is None or pred(s), grads=False)

    def pick_operand(self, target: str, shape: tuple):
        """The source of an in-place op on ``target``: broadcastable to ``shape`` and not
        sharing memory with it. When source and destination overlap, torch's result depends on
        the order its kernel visits elements (or it raises, depending on strides), which is
        not behaviour a program can rely on."""
        return self.pick(lambda s: broadcast(shape, s) == shape, exclude=target)

    def in_place(self):
        if self.saved_hooks_used:
            return
        a = self.pick_target()
        if a is None:
            return
        shape = self.shape_of(a)
        roll = self.rng.random()
        if roll < 0.3:
            b = self.pick_operand(a, shape)
            if b is None:
                return
            op = self.rng.choice(["add_", "copy_", "mul_"])
            self.wrote(a)
            self.emit(f"{a}.{op}({b})", [a, b], show=[a])
            self.vars[a] = (shape, self.rg_of(a) or self.rg_of(b))
            self.base_gains_grad(a, b)
        else:
            self.wrote(a)
            self.emit(self.rng.choice(IN_PLACE).format(a=a), [a], show=[a])

    def index_assign(self):
        if self.saved_hooks_used:
            return
        a = self.pick_target(lambda s: len(s) >= 1)
        if a is None:
            return
        shape = self.shape_of(a)
        d = self.rng.randrange(len(shape))
        start = self.rng.randint(0, shape[d] - 1)
        stop = self.rng.randint(start + 1, shape[d])
        target = list(shape)
        target[d] = stop - start
        index = f"{a}[{':, ' * d}{start}:{stop}]"
        self.wrote(a)
        b = self.pick_operand(a, tuple(target))
        if b is None or self.rng.random() < 0.3:
            self.emit(f"{index} = {self.rng.choice([0.0, 2.0, -1.5])}", [a], show=[a])
        else:
            self.emit(f"{index} = {b}", [a, b], show=[a])
            self.vars[a] = (shape, self.rg_of(a) or self.rg_of(b))
            self.base_gains_grad(a, b)

    def custom(self):
        a = self.pick()
        if a is None:
            return
        fn = self.rng.choice(CUSTOM)
        shape, rg = self.vars[a]
        if fn in ("WithCount", "WithMask", "Lazy"):
            first, second = self.name(), self.name()
            self.emit(f"{first}, {second} = {fn}.apply({a})", [a], [first, second])
            self.vars[first] = (shape, rg)
            if fn == "Lazy":
                self.vars[second] = (shape, rg)
            elif fn == "WithMask":
                self.vars[second] = (shape, False)
        elif fn == "DoubleInPlace":
            if self.saved_hooks_used:
                return
            out = self.name()
            self.emit(f"{out} = DoubleInPlace.apply({a})", [a], [out], show=[out, a])
            self.vars[out] = (shape, rg)
            self.alias(out, a)
            self.wrote(a)
        else:
            out = self.name()
            self.emit(f"{out} = {fn}.apply({a})", [a], [out])
            self.vars[out] = (shape, rg)


def generate(seed: int) -> dict:
    """The program for ``seed``: a few inputs, 4-16 random lines, and a backward or grad."""
    gen = Generator(seed)
    for _ in range(gen.rng.randint(1, 3)):
        gen.add_input()
    for _ in range(gen.rng.randint(4, 16)):
        gen.step()
    if not any(".backward(" in line["code"] or "autograd.grad(" in line["code"]
               for line in gen.lines[-3:]):
        gen.backward() if gen.rng.random() < 0.5 else gen.grad()
    return {"seed": seed, "dtype": gen.dtype, "lines": gen.lines}


def render(program: dict) -> str:
    """The program as Python a developer can paste after the prelude."""
    return "\n".join(line["code"] for line in program["lines"])
