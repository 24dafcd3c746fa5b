"""``recompute(chunks=k)``: a module run in ``k`` micro-batches, forward and again in backward.

Plain recomputation (``utils.checkpoint``) frees a module's saved activations but not its
forward's working set: while the module runs, its intermediate results for the whole batch are
alive together (a convolution's output and the ReLU after it), and backward's rerun builds them
all again before their gradients flow. When the module treats each sample on its own, running it
on a slice of the batch at a time gives the same values and gradients while only one slice's
intermediates live at once:

* forward, without recording a graph, runs each slice and writes its output into one result
  for the whole batch, and saves only the module's input (through the saved-tensor door, so a
  policy's savers apply to it as to any checkpoint's input);
* backward, for each slice, runs the module on it again with grad, and sends that slice of the
  incoming gradient back through it, adding the parameters' gradients up over the slices.

The random state is put back for the rerun, so dropout draws the same masks. Modules whose
result for one sample depends on others (batch norm with batch statistics) are refused. Written
once for hookgrad and torch: ``lib`` is the framework module, reached through public API only.
"""
from __future__ import annotations

from typing import Any, Callable, List

_BATCH_STATISTICS = ("BatchNorm", "SyncBatchNorm")


def check_chunkable(module: Any, name: str) -> None:
    """Refuse a module that mixes the samples of a batch (batch norm using batch statistics):
    micro-batches would change its result."""
    for inner_name, inner in module.named_modules():
        kind = type(inner).__name__
        if not any(part in kind for part in _BATCH_STATISTICS):
            continue
        uses_batch = inner.training or getattr(inner, "running_mean", None) is None
        if uses_batch:
            where = ".".join(part for part in (name, inner_name) if part) or "the model"
            raise ValueError(f"recompute(chunks=...) on {name or 'the model'!r}: {where} "
                             f"({kind}) uses batch statistics, which micro-batches would change")


def _rng_state(lib: Any, device: Any) -> tuple:
    cuda = None
    if getattr(device, "type", "cpu") == "cuda":  # pragma: no cover - needs a GPU
        cuda = lib.cuda.get_rng_state(device)
    return lib.get_rng_state(), cuda


def _restore_rng(lib: Any, device: Any, state: tuple) -> None:
    cpu, cuda = state
    lib.set_rng_state(cpu)
    if cuda is not None:  # pragma: no cover - needs a GPU
        lib.cuda.set_rng_state(cuda, device)


def _bounds(batch: int, chunks: int) -> List[tuple]:
    size = -(-batch // chunks)
    return [(start, min(batch, start + size)) for start in range(0, batch, size)]


def chunked_forward(lib: Any, function: Callable, module: Any, chunks: int, name: str) -> Callable:
    """``function`` (the module's forward) as a forward that runs in ``chunks`` micro-batches
    along dim 0 of its one tensor argument, in forward and in backward (see the module doc)."""

    class ChunkedRecompute(lib.autograd.Function):
        @staticmethod
        def forward(ctx, input, *params):
            ctx.save_for_backward(input)
            ctx.rng = _rng_state(lib, input.device)
            result = None
            for start, stop in _bounds(input.shape[0], chunks):
                piece = function(input[start:stop])
                if not isinstance(piece, lib.Tensor) or piece.shape[:1] != (stop - start,):
                    raise ValueError(f"recompute(chunks=...) on {name!r}: the module must return "
                                     "one tensor whose first dim is the batch of its input")
                if result is None:
                    result = piece.new_empty((input.shape[0],) + tuple(piece.shape[1:]))
                result[start:stop] = piece
                piece = None  # one slice's intermediates at a time
            return result

        @staticmethod
        def backward(ctx, grad):
            input, = ctx.saved_tensors
            params = _trainable(module)  # the module's, as at forward: not kept on ctx
            wanted = [p for p, need in zip(params, ctx.needs_input_grad[1:]) if need]
            need_input = ctx.needs_input_grad[0]
            grad_input = lib.zeros_like(input) if need_input else None
            sums: List[Any] = [None] * len(wanted)
            state = _rng_state(lib, input.device)
            _restore_rng(lib, input.device, ctx.rng)
            try:
                with lib.enable_grad():
                    for start, stop in _bounds(input.shape[0], chunks):
                        piece = input[start:stop].detach().requires_grad_(need_input)
                        output = function(piece)
                        targets = ([piece] if need_input else []) + wanted
                        found = lib.autograd.grad(output, targets, grad[start:stop],
                                                  allow_unused=True)
                        output = None
                        if need_input:
                            if found[0] is not None:
                                grad_input[start:stop] = found[0]
                            found = found[1:]
                        for index, value in enumerate(found):
                            if value is not None:
                                sums[index] = value if sums[index] is None else sums[index] + value
            finally:
                _restore_rng(lib, input.device, state)
            by_param = iter(sums)
            return (grad_input,) + tuple(next(by_param) if need else None
                                         for need in ctx.needs_input_grad[1:])

    def forward(*args: Any, **kwargs: Any) -> Any:
        if kwargs or len(args) != 1 or not isinstance(args[0], lib.Tensor) or args[0].dim() < 1:
            raise ValueError(f"recompute(chunks=...) on {name!r}: the module must take one "
                             "batched tensor argument")
        if not lib.is_grad_enabled():
            return function(*args)
        return ChunkedRecompute.apply(args[0], *_trainable(module))

    return forward


def _trainable(module: Any) -> list:
    return [p for p in module.parameters() if p.requires_grad]

