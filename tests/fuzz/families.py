"""The generator's families of lines that need no state of their own: views, joins,
hooks, modules and the backward or grad that ends a program.

Mixins of ``programs.Generator``: they read and update its bookkeeping (``vars``, ``root``,
``grad_derived``...) through ``self``; the random draws are made in the same order as before the
split, so a seed gives the same program.
"""
from __future__ import annotations

import math
import random

import numpy as np


class ViewLines:
    """Views (one or several outputs) and joins."""

    def view(self):
        a = self.pick()
        if a is None:
            return
        shape = self.shape_of(a)
        ndim = len(shape)
        rng = self.rng
        choices = ["reshape", "view", "flatten", "unsqueeze", "squeeze", "expand"]
        if ndim >= 1:
            choices += ["slice", "slice", "select", "narrow"]
            choices.append("index")
        if ndim >= 2:
            choices += ["transpose", "transpose", "permute", "diagonal"]
        if ndim <= 2:
            choices += ["t"]
        op = rng.choice(choices)
        d = rng.randrange(ndim) if ndim else 0
        new = list(shape)
        if op in ("reshape", "view"):
            new = factor(math.prod(shape), rng)
            target = list(new)
            if target and rng.random() < 0.3:
                target[rng.randrange(len(target))] = -1
            code = f"{a}.{op}({', '.join(map(str, target))})" if target else f"{a}.{op}(())"
        elif op == "flatten":
            new = [math.prod(shape)]
            code = f"{a}.flatten()"
        elif op == "unsqueeze":
            d = rng.randint(0, ndim)
            new.insert(d, 1)
            code = f"{a}.unsqueeze({d})"
        elif op == "squeeze":
            new = [s for s in shape if s != 1]
            code = f"{a}.squeeze()"
        elif op == "expand":
            new = [rng.randint(2, 3) if s == 1 else s for s in shape]
            if rng.random() < 0.5:
                new.insert(0, 2)
            code = f"{a}.expand({', '.join(map(str, new))})" if new else f"{a}.expand(())"
        elif op == "slice":
            start = rng.randint(0, shape[d] - 1)
            stop = rng.randint(start + 1, shape[d])
            step = rng.choice((1, 1, 2))
            new[d] = len(range(start, stop, step))
            code = f"{a}[{':, ' * d}{start}:{stop}{':2' if step == 2 else ''}]"
        elif op == "select":
            index = rng.randint(-shape[d], shape[d] - 1)
            del new[d]
            code = f"{a}.select({d}, {index})"
        elif op == "narrow":
            start = rng.randint(0, shape[d] - 1)
            length = rng.randint(1, shape[d] - start)
            new[d] = length
            code = f"{a}.narrow({d}, {start}, {length})"
        elif op == "index":
            picks = [rng.randrange(shape[d]) for _ in range(rng.randint(1, 3))]
            new[d] = len(picks)
            code = f"{a}[{':, ' * d}{picks}]"
        elif op == "transpose":
            d0, d1 = rng.sample(range(ndim), 2)
            new[d0], new[d1] = new[d1], new[d0]
            code = f"{a}.transpose({d0}, {d1})"
        elif op == "permute":
            order = list(range(ndim))
            rng.shuffle(order)
            new = [shape[i] for i in order]
            code = f"{a}.permute({', '.join(map(str, order))})"
        elif op == "diagonal":
            new = list(shape[2:]) + [min(shape[0], shape[1])]
            code = f"{a}.diagonal()"
        else:  # t
            new = list(reversed(shape))
            code = f"{a}.t()"
        out = self.name()
        self.emit(f"{out} = {code}", [a], [out])
        self.vars[out] = (tuple(new), self.rg_of(a))
        if a in self.grad_derived:
            self.grad_derived.add(out)
        if op != "index":  # advanced indexing copies
            self.alias(out, a)

    def multi_view(self):
        a = self.pick(lambda s: len(s) >= 1 and max(s) >= 2)
        if a is None:
            return
        shape = self.shape_of(a)
        d = self.rng.choice([i for i, s in enumerate(shape) if s >= 2])
        if self.rng.random() < 0.5:
            sizes = [1] * shape[d]
            code = f"{a}.unbind({d})"
        else:
            size = self.rng.randint(1, shape[d] - 1)
            sizes = [size] * (shape[d] // size) + ([shape[d] % size] if shape[d] % size else [])
            code = f"{a}.{self.rng.choice(['split', 'split'])}({size}, {d})"
        outs = [self.name() for _ in sizes]
        self.emit(f"{', '.join(outs)}, = {code}", [a], outs)
        for out, size in zip(outs, sizes):
            self.alias(out, a)
            if a in self.grad_derived:
                self.grad_derived.add(out)
            new = list(shape)
            if code.startswith(f"{a}.unbind"):
                del new[d]
            else:
                new[d] = size
            self.vars[out] = (tuple(new), self.rg_of(a))

    def join(self):
        a = self.pick()
        if a is None:
            return
        shape = self.shape_of(a)
        b = self.pick(lambda s: s == shape) or a
        out = self.name()
        if not shape or self.rng.random() < 0.4:
            d = self.rng.randint(0, len(shape))
            self.emit(f"{out} = torch.stack([{a}, {b}], {d})", [a, b], [out])
            new = list(shape)
            new.insert(d, 2)
        else:
            d = self.rng.randrange(len(shape))
            self.emit(f"{out} = torch.cat([{a}, {b}], {d})", [a, b], [out])
            new = list(shape)
            new[d] *= 2
        self.vars[out] = (tuple(new), self.rg_of(a) or self.rg_of(b))


class HookLines:
    """Hooks of every kind, modules, saved-tensor hooks, backward and autograd.grad."""

    def tensor_hooks(self):
        # Not on a view whose memory was written in place: torch rebuilds that view's grad_fn
        # when the hook is registered, and crashes doing so for some views (register_hook on
        # ``x.mean().unsqueeze(0)`` after ``x.mean().sigmoid_()``).
        a = self.pick(exclude_written_views=True)
        if a is None:
            return
        self.hooks += 1
        roll = self.rng.random()
        if roll < 0.45:
            scale = self.rng.choice([None, None, 2.0])
            self.emit(f"{a}.register_hook(tensor_hook('hook{self.hooks}', {scale}))", [a], show=[])
        elif roll < 0.8:
            self.retained.add(a)
            self.emit(f"{a}.retain_grad()", [a], show=[])
        else:
            self.emit(f"{a}.register_post_accumulate_grad_hook(post_hook('post{self.hooks}'))",
                      [a], show=[])

    def node_hooks(self):
        a = self.pick(rg=True)
        if a is None:
            return
        self.hooks += 1
        # (a gradient's requires_grad is not known here: d(x.sum())/dx needs none even with
        # create_graph, so gradients count as not needing one)
        inputs_need_grad = all(self.vars.get(n, (None, True))[1] and n not in self.grad_derived
                               for n in self.producer.get(a, []))
        if self.rng.random() < 0.5 and inputs_need_grad:
            # a node post-hook sees gradients for every input of the node; for an input that
            # needs none, torch's formula may or may not compute one (stack does, hookgrad
            # gives None), which is how each backward is written, not behaviour: left out
            self.node_hooked.add(a)
            self.emit(f"{a}.grad_fn.register_hook(node_hook('node{self.hooks}'))", [a], show=[])
        else:
            scale = self.rng.choice([None, 0.5])
            self.emit(f"{a}.grad_fn.register_prehook(node_prehook('pre{self.hooks}', {scale}))",
                      [a], show=[])

    def module(self):
        a = self.pick(lambda s: len(s) >= 1)
        if a is None:
            return
        shape = self.shape_of(a)
        layer, weight, bias = self.name("m"), self.name("w"), self.name("b")
        outputs = self.rng.randint(1, 3)
        self.emit(f"{layer} = make_linear({shape[-1]}, {outputs}, {self.count}, "
                  f"torch.{self.dtype})", [], [layer], show=[])
        self.emit(f"{weight}, {bias} = {layer}.weight, {layer}.bias", [layer], [weight, bias])
        self.vars[weight] = ((outputs, shape[-1]), True)
        self.vars[bias] = ((outputs,), True)
        for kind in self.rng.sample(["forward_hook", "forward_pre_hook", "full_backward_hook",
                                     "full_backward_pre_hook"], self.rng.randint(0, 3)):
            self.hooks += 1
            factory = {"forward_hook": "forward_hook", "forward_pre_hook": "forward_prehook",
                       "full_backward_hook": "backward_hook",
                       "full_backward_pre_hook": "backward_prehook"}[kind]
            self.emit(f"{layer}.register_{kind}({factory}('{kind}{self.hooks}'))", [layer],
                      show=[])
        out = self.name()
        self.emit(f"{out} = {layer}({a})", [layer, a], [out])
        self.vars[out] = (shape[:-1] + (outputs,), True)
        self.root[out] = out  # with full backward hooks the output is a view (of itself here)

    def saved_hooks(self):
        if self.saved_hooks_open:
            self.emit("saved_hooks.__exit__(None, None, None)", ["saved_hooks"], show=[])
            self.saved_hooks_open = False
            return
        self.saved_hooks_used = True
        pack = self.rng.choice(["pack_same", "pack_copy"])
        self.emit(f"saved_hooks = torch.autograd.graph.saved_tensors_hooks({pack}, unpack); "
                  "saved_hooks.__enter__()", [], ["saved_hooks"], show=[])
        self.saved_hooks_open = True

    def close_saved_hooks(self):
        """Saved-tensor hooks see forward's saves only: what a backward formula saves under
        create_graph is how each library happens to write that formula."""
        if self.saved_hooks_open:
            self.emit("saved_hooks.__exit__(None, None, None)", ["saved_hooks"], show=[])
            self.saved_hooks_open = False

    def backward(self):
        self.close_saved_hooks()
        a = self.pick(rg=True)
        if a is None:
            return
        options = []
        if self.rng.random() < 0.4:
            options.append("retain_graph=True")
        if self.rng.random() < 0.3:
            options.append("create_graph=True")
        ins = [a]
        if self.rng.random() < 0.2:
            # not a tensor whose node has a post-hook: torch calls it without running the
            # node (its grad_inputs are None), hookgrad runs the node
            chosen = self.pick(rg=True, exclude_names=self.node_hooked)
            if chosen is None:
                return
            self.retained.add(chosen)
            ins.append(chosen)
            options.append(f"inputs=[{chosen}]")
        self.emit(f"{a}.sum().backward({', '.join(options)})", ins, show=[])

    def grad(self):
        self.close_saved_hooks()
        a = self.pick(rg=True)
        if a is None:
            return
        wrt = list(dict.fromkeys(self.pick(rg=True) for _ in range(self.rng.randint(1, 2))))
        create = self.rng.random() < 0.6
        options = []
        if create:
            options.append("create_graph=True")
        if self.rng.random() < 0.4:
            options.append("retain_graph=True")
        if self.rng.random() < 0.4:
            options.append("allow_unused=True")
        outs = [self.name("g") for _ in wrt]
        extra = "".join(f", {o}" for o in options)
        self.emit(f"{', '.join(outs)}, = torch.autograd.grad({a}.sum(), [{', '.join(wrt)}]{extra})",
                  [a, *wrt], outs)
        for out, name in zip(outs, wrt):
            self.vars[out] = (self.shape_of(name), create)
            self.grad_derived.add(out)


def broadcast(a, b):
    try:
        return tuple(np.broadcast_shapes(a, b))
    except ValueError:
        return None


def factor(numel: int, rng: random.Random) -> list:
    """A random shape with ``numel`` elements and at most three dimensions."""
    dims = []
    rest = numel
    for _ in range(rng.randint(0, 2)):
        divisors = [d for d in range(1, rest + 1) if rest % d == 0]
        d = rng.choice(divisors)
        dims.append(d)
        rest //= d
    if rest != 1 or not dims or rng.random() < 0.5:
        dims.append(rest)
    return dims
