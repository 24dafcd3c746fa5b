"""Planner calls here assert choices and bytes, never timings: a short measurement keeps the
suite fast (``plan`` otherwise times each candidate for a few seconds on a small model)."""
import pytest

from hookgrad.memory import _costs


@pytest.fixture(autouse=True)
def short_timings(monkeypatch):
    monkeypatch.setattr(_costs, "MEASURE_SECONDS", 0.25)
