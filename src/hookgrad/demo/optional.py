"""The demo's optional packages: each one missing degrades one feature, with a message naming it.
"""
from __future__ import annotations

import importlib
from types import ModuleType
from typing import List, Optional

INSTALL_HINT = "pip install hookgrad[demo]"


class Notes:
    """Messages about what the demo is doing differently, printed as they arise and kept."""

    def __init__(self, echo=print) -> None:
        self.messages: List[str] = []
        self._echo = echo

    def add(self, message: str) -> None:
        self.messages.append(message)
        self._echo(f"note: {message}")


def optional_import(name: str, package: str, instead: str, notes: Notes) -> Optional[ModuleType]:
    """``import name``, or ``None`` and a note: '<package> is not installed: <instead>'."""
    try:
        return importlib.import_module(name)
    except ImportError:
        notes.add(f"{package} is not installed: {instead} (pip install {package}, or "
                  f"{INSTALL_HINT})")
        return None
