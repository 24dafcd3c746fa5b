"""PNG figures with matplotlib's Agg backend (no display needed)."""
from __future__ import annotations

from pathlib import Path
from typing import Any, List

import numpy as np

from .training import RunResult


def pyplot(matplotlib: Any) -> Any:
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def _save(plt: Any, figure: Any, path: Path) -> Path:
    """Lay out, write and close ``figure`` (closing keeps pyplot from holding every figure)."""
    figure.tight_layout()
    figure.savefig(path, dpi=90)
    plt.close(figure)
    return path


def feature_maps(plt: Any, images: np.ndarray, maps: np.ndarray, labels: np.ndarray,
                 path: Path) -> Path:
    """One row per image: the input, then each channel of the first convolution's output."""
    count, channels = maps.shape[0], maps.shape[1]
    figure, axes = plt.subplots(count, channels + 1, figsize=(1.3 * (channels + 1), 1.3 * count),
                                squeeze=False)
    for row in range(count):
        axes[row, 0].imshow(images[row, 0], cmap="gray_r")
        axes[row, 0].set_ylabel(f"label {labels[row]}", fontsize=8)
        for channel in range(channels):
            axes[row, channel + 1].imshow(maps[row, channel], cmap="viridis")
            if row == 0:
                axes[row, channel + 1].set_title(f"conv1 #{channel}", fontsize=8)
        for axis in axes[row]:
            axis.set_xticks([])
            axis.set_yticks([])
    axes[0, 0].set_title("input", fontsize=8)
    figure.suptitle("first convolution's outputs (captured with hookgrad.capture)", fontsize=10)
    return _save(plt, figure, path)


def saved_bytes(plt: Any, runs: List[RunResult], path: Path) -> Path:
    """Bytes held by saved tensors per module, one bar per run."""
    modules: List[str] = []
    for run in runs:
        modules += [name for name in run.held_by_module() if name not in modules]
    figure, axis = plt.subplots(figsize=(max(6, 0.8 * len(modules)), 3.6))
    width = 0.8 / max(1, len(runs))
    positions = np.arange(len(modules))
    for number, run in enumerate(runs):
        held = run.held_by_module()
        axis.bar(positions + number * width, [held.get(name, 0) / 1024 for name in modules],
                 width, label=run.label)
    axis.set_xticks(positions + width * (len(runs) - 1) / 2)
    axis.set_xticklabels(modules, rotation=30, ha="right", fontsize=8)
    axis.set_ylabel("KiB held for backward")
    axis.set_title("saved bytes per module (memory ledger, one training step)", fontsize=10)
    axis.legend()
    return _save(plt, figure, path)


def memory_timeline(runs: List[RunResult], path: Path) -> Path:
    """Bytes alive through each run's first step (saved per module, gradients, workspaces),
    the runs side by side on one scale: ``hookgrad.memory.timeline_png``."""
    from hookgrad import memory

    memory.timeline_png({run.label: run.ledger for run in runs}, str(path),
                        title="memory through the first training step (memory ledger)")
    return path


def loss_curves(plt: Any, runs: List[RunResult], path: Path) -> Path:
    figure, axis = plt.subplots(figsize=(6, 3.6))
    for run in runs:
        axis.plot(np.arange(1, len(run.losses) + 1), run.losses, label=run.label, alpha=0.8)
    axis.set_xlabel("training step")
    axis.set_ylabel("cross-entropy loss")
    axis.set_yscale("log")
    axis.set_title("training loss", fontsize=10)
    axis.legend()
    return _save(plt, figure, path)
