"""The memory timeline as a PNG: what is alive through one step, per module, for one or
several ledgers side by side (as PyTorch's memory snapshot viewer, but for saved tensors)."""
from __future__ import annotations

from typing import Dict, List

MIB = float(1 << 20)


def _largest_modules(ledgers, count: int) -> List[str]:
    """The modules whose saved bytes rise highest in any of the ledgers, largest first."""
    top: Dict[str, int] = {}
    for led in ledgers:
        for row in led.timeline:
            for name, size in row[5].items():
                top[name] = max(top.get(name, 0), size)
    return sorted(top, key=lambda name: (-top[name], name))[:count]


def timeline_png(ledgers: dict, path: str, modules: int = 6,
                 title: str = "memory through one step") -> str:
    """Draw each measured ledger's ``timeline`` (``{label: ledger}``) in its own panel, on one
    y scale: saved activations per module (the ``modules`` largest, then the rest), gradients
    made in the step and the rest of the traced bytes (transient workspaces), stacked; a line
    marks the peak reached before the next event, and the highest is labelled with its place."""
    for label, led in ledgers.items():
        if not led.timeline:
            raise RuntimeError(f"no timeline for {label!r}: measure a hookgrad step with "
                               "ledger(measure=True)")
    try:
        import matplotlib
    except ImportError as error:
        raise ImportError("timeline_png needs matplotlib: pip install matplotlib") from error
    matplotlib.use("Agg")
    from matplotlib import pyplot

    names = _largest_modules(ledgers.values(), modules)
    colors = {name: pyplot.cm.tab10(i % 10) for i, name in enumerate(names)}
    figure, axes = pyplot.subplots(1, len(ledgers), figsize=(6.5 * len(ledgers), 4.2),
                                   sharey=True, squeeze=False)
    for axis, (label, led) in zip(axes[0], ledgers.items()):
        _panel(axis, led, names, colors)
        axis.set_title(label, fontsize=10, pad=16)  # above the peak label
    axes[0][0].set_ylabel("MiB alive above the step's start")
    axes[0][0].legend(loc="upper left", fontsize=7)
    figure.suptitle(title, fontsize=11)
    figure.tight_layout()
    figure.savefig(path, dpi=90)
    pyplot.close(figure)
    return path


def _panel(axis, led, names: List[str], colors: dict) -> None:
    rows = led.timeline
    layers = [[row[5].get(name, 0) / MIB for row in rows] for name in names]
    saved = [row[1] / MIB for row in rows]
    rest = [max(0.0, s - sum(layer[i] for layer in layers)) for i, s in enumerate(saved)]
    grads = [row[2] / MIB for row in rows]
    other = [max(0.0, row[3] / MIB - s - g) for row, s, g in zip(rows, saved, grads)]
    steps = range(len(rows))
    axis.stackplot(steps, *layers, rest, grads, other,
                   labels=[f"saved: {name}" for name in names]
                   + ["saved: other modules", "gradients", "transient workspaces"],
                   colors=[colors[name] for name in names] + ["0.75", "tab:olive", "0.9"])
    # the peak between two events (a backward workspace) belongs to the earlier one
    between = [row[4] / MIB for row in rows[1:]] + [0.0]
    axis.step(steps, between, where="post", color="black", linewidth=0.8,
              label="peak before the next event")
    top = max(range(len(between)), key=between.__getitem__)
    axis.annotate(f"{rows[top][0]}\n{between[top]:.1f} MiB", (top, between[top]), fontsize=7,
                  ha="right", va="bottom")
    backward = next((i for i, row in enumerate(rows) if row[0].startswith("backward")), None)
    if backward is not None:
        axis.axvline(backward, color="0.4", linestyle=":", linewidth=0.8)
    axis.set_xlabel("event (module entered or left, tensor saved, unpacked or freed)")
