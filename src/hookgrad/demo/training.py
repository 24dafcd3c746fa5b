"""Training runs: Adam on mini-batches, a progress bar (tqdm, or plain lines), the first step of
each run recorded by a memory ledger, test accuracy and mean step time at the end."""
from __future__ import annotations

import contextlib
import sys
import time
from typing import Any, List, Optional

import numpy as np

import hookgrad
from hookgrad.nn import functional

from .data import Digits


class RunResult:
    """What one training run produced."""

    def __init__(self, label: str) -> None:
        self.label = label
        self.losses: List[float] = []        # every step
        self.epoch_losses: List[float] = []  # mean per epoch
        self.step_seconds: List[float] = []  # steps without the ledger
        self.accuracy = float("nan")
        self.ledger: Any = None

    @property
    def step_ms(self) -> float:
        return 1e3 * float(np.median(self.step_seconds)) if self.step_seconds else float("nan")

    def held_by_module(self) -> dict:
        """Saved bytes held per module in the ledger's step (``{}`` without a ledger)."""
        if self.ledger is None:
            return {}
        return {name: row["counted"] for name, row in self.ledger.by_module().items()}


def batches(count: int, size: int, rng: np.random.Generator):
    order = rng.permutation(count)
    for start in range(0, count, size):
        yield order[start:start + size]


def accuracy(model: hookgrad.nn.Module, images: np.ndarray, labels: np.ndarray) -> float:
    model.eval()
    with hookgrad.no_grad():
        logits = model(hookgrad.from_numpy(images))
    model.train()
    return float((logits.argmax(1).numpy() == labels).mean())


def loss_of(model: hookgrad.nn.Module, images: np.ndarray, labels: np.ndarray):
    return functional.cross_entropy(model(hookgrad.from_numpy(images)),
                                    hookgrad.from_numpy(labels))


def train(model: hookgrad.nn.Module, data: Digits, epochs: int, batch_size: int, seed: int,
          label: str, tqdm: Any = None, policy: Any = None, ledger: Any = None,
          echo=print) -> RunResult:
    """Train in place; ``policy`` (a memory policy) is active around forward and backward;
    ``ledger`` (``hookgrad.memory.ledger``) records the first step."""
    result = RunResult(label)
    rng = np.random.default_rng(seed)
    optimizer = hookgrad.optim.Adam(model.parameters(), lr=1e-2)
    steps_per_epoch = -(-len(data.train_x) // batch_size)
    bar = None
    # a bar redraws itself with carriage returns: on a log file that is noise, so lines instead
    if tqdm is not None and sys.stderr.isatty():
        bar = tqdm.tqdm(total=epochs * steps_per_epoch, desc=label, unit="step", leave=True)
    for epoch in range(epochs):
        epoch_losses = []
        for index in batches(len(data.train_x), batch_size, rng):
            first = not result.losses and ledger is not None
            recorder = ledger() if first else contextlib.nullcontext()
            start = time.perf_counter()
            active = policy if policy is not None else contextlib.nullcontext()
            with recorder as led, active:
                loss = loss_of(model, data.train_x[index], data.train_y[index])
                optimizer.zero_grad()
                loss.backward()
            optimizer.step()
            if first:
                result.ledger = led
            else:
                result.step_seconds.append(time.perf_counter() - start)
            result.losses.append(loss.item())
            epoch_losses.append(loss.item())
            if bar is not None:
                bar.update(1)
                bar.set_postfix(loss=f"{loss.item():.3f}")
        result.epoch_losses.append(float(np.mean(epoch_losses)))
        if bar is None:
            echo(f"  {label}: epoch {epoch + 1}/{epochs}  loss {result.epoch_losses[-1]:.4f}")
    if bar is not None:
        bar.close()
    result.accuracy = accuracy(model, data.test_x, data.test_y)
    return result


def plan_policy(model: hookgrad.nn.Module, data: Digits, batch_size: int,
                budget_bytes: int, **options: Any) -> Optional[Any]:
    """``hookgrad.memory.plan`` on one training batch (the loss is the training loss);
    ``options`` go to ``plan``."""
    from hookgrad import memory

    images = hookgrad.from_numpy(data.train_x[:batch_size])
    labels = hookgrad.from_numpy(data.train_y[:batch_size])
    return memory.plan(model, (images,), budget_bytes,
                       loss_fn=lambda logits: functional.cross_entropy(logits, labels),
                       **options)
