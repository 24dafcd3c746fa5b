"""Measuring a step's real memory peak, the figure users run out of: tracemalloc over NumPy's
allocations for hookgrad, the CUDA allocator's peak or the profiler's memory events for torch.
Each meter is a context manager that leaves its result in ``peak`` (bytes)."""
from __future__ import annotations

from typing import Optional


class PeakMeter:
    """Measures nothing: hookgrad has no allocator to ask (``peak`` stays None)."""

    peak: Optional[int] = None

    def __enter__(self) -> "PeakMeter":
        return self

    def __exit__(self, *exc) -> bool:
        return False


class TracemallocPeakMeter(PeakMeter):
    """The step's peak of traced memory above where it began: NumPy reports every data
    allocation to ``tracemalloc``, so for hookgrad this is the arrays' real peak. tracemalloc
    keeps one peak for the process; meters that nest share it: whenever one reads it, it
    carries the figure to every open meter and resets it (``poll``), so none loses the other's
    peak. ``poll()`` also returns whether the peak rose since the last poll, for attribution.
    """

    _open: list = []

    def __init__(self):
        self.started = False
        self.base = 0
        self.highest = 0
        self.last_peak = 0

    def __enter__(self) -> "TracemallocPeakMeter":
        import tracemalloc
        if not tracemalloc.is_tracing():
            tracemalloc.start()
            self.started = True
        else:
            self.poll()
        tracemalloc.reset_peak()
        self.base = self.highest = tracemalloc.get_traced_memory()[0]
        TracemallocPeakMeter._open.append(self)
        return self

    @staticmethod
    def poll() -> bool:
        """Carry tracemalloc's peak since the last poll to every open meter; True if it set a
        new high for the innermost one."""
        import tracemalloc
        if not TracemallocPeakMeter._open or not tracemalloc.is_tracing():
            return False
        peak = tracemalloc.get_traced_memory()[1]
        tracemalloc.reset_peak()
        innermost = TracemallocPeakMeter._open[-1]
        innermost.last_peak = peak - innermost.base  # the highest since the last poll
        rose = peak > innermost.highest
        for meter in TracemallocPeakMeter._open:
            if peak > meter.highest:
                meter.highest = peak
        return rose

    def current(self) -> int:
        """Traced bytes alive now, above where the meter began."""
        import tracemalloc
        return tracemalloc.get_traced_memory()[0] - self.base if self.started or \
            tracemalloc.is_tracing() else 0

    def __exit__(self, *exc) -> bool:
        import tracemalloc
        self.poll()
        TracemallocPeakMeter._open.remove(self)
        self.peak = self.highest - self.base
        if self.started:
            tracemalloc.stop()
        return False


class CudaPeakMeter(PeakMeter):  # pragma: no cover - needs a GPU
    """The step's peak of allocated GPU memory, above what was allocated when it began."""

    def __init__(self, torch, device):
        self.torch, self.device = torch, device

    def __enter__(self) -> "CudaPeakMeter":
        cuda = self.torch.cuda
        cuda.synchronize(self.device)
        cuda.reset_peak_memory_stats(self.device)
        self.start = cuda.memory_allocated(self.device)
        return self

    def __exit__(self, *exc) -> bool:
        cuda = self.torch.cuda
        cuda.synchronize(self.device)
        self.peak = cuda.max_memory_allocated(self.device) - self.start
        return False


class ProfilerPeakMeter(PeakMeter):
    """The step's peak of CPU memory allocated by torch, above where it began: torch's profiler
    with ``profile_memory=True`` reports every allocation and free of its CPU allocator; their
    running sum in time order peaks at the step's peak. If the profiler cannot start, or its
    results are laid out differently (another torch version), ``peak`` stays None."""

    def __init__(self, torch):
        self.torch = torch
        self.profiler = None

    def __enter__(self) -> "ProfilerPeakMeter":
        profiler = self.torch.profiler
        try:
            self.profiler = profiler.profile(activities=[profiler.ProfilerActivity.CPU],
                                             profile_memory=True)
            self.profiler.__enter__()
        except RuntimeError:
            self.profiler = None
        return self

    def __exit__(self, *exc) -> bool:
        if self.profiler is None:
            return False
        self.profiler.__exit__(*exc)
        try:
            results = self.profiler.profiler.kineto_results
            events = sorted(((event.start_ns(), event.nbytes()) for event in results.events()
                             if event.name() == "[memory]"
                             and event.device_type().name == "CPU"),
                            key=lambda item: item[0])
        except (AttributeError, RuntimeError):  # pragma: no cover - another torch's layout
            return False
        current = peak = 0
        for _when, size in events:
            current += size
            peak = max(peak, current)
        self.peak = peak
        return False
