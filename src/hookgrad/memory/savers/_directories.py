"""Offload's private directories: one per live store, locked by its process, and removed by
the next store to start in the same place once that process is gone (however it ended).
"""
from __future__ import annotations

import os
import shutil
import time
from typing import Optional

try:
    import fcntl
except ImportError:  # pragma: no cover - Windows: fall back to asking whether the PID lives
    fcntl = None

PREFIX = "hookgrad-offload-"
SETTLED_SECONDS = 10.0  # an unlocked directory older than this is stale even if its PID lives


def pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # alive, owned by someone else
        return True
    except OSError:
        return False
    return True


def _hold_lock(directory: str) -> Optional[int]:
    """Exclusively lock ``directory`` for this process's lifetime; returns the open descriptor
    (closing it releases the lock), or None where locks are unavailable."""
    if fcntl is None:  # pragma: no cover
        return None
    try:
        descriptor = os.open(directory, os.O_RDONLY)
    except OSError:  # pragma: no cover
        return None
    try:
        fcntl.flock(descriptor, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:  # pragma: no cover - a file system without locks
        os.close(descriptor)
        return None
    return descriptor


def _lock_free(path: str) -> Optional[bool]:
    """Whether nobody holds ``path``'s lock (None: cannot tell)."""
    if fcntl is None:  # pragma: no cover
        return None
    try:
        descriptor = os.open(path, os.O_RDONLY)
    except OSError:
        return None
    try:
        fcntl.flock(descriptor, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        return False  # its owner still holds it: alive
    finally:
        os.close(descriptor)  # releases the lock we may have taken
    return True


def _owner_gone(path: str, pid: int) -> bool:
    """Whether the process that made offload directory ``path`` is gone."""
    if pid == os.getpid():
        return False
    free = _lock_free(path)
    if free is None:
        return not pid_alive(pid)
    if not free:
        return False
    try:
        age = time.time() - os.stat(path).st_mtime
    except OSError:
        return False
    return not pid_alive(pid) or age > SETTLED_SECONDS


def clean_stale(base: str) -> list:
    """Remove offload directories in ``base`` whose process is gone; returns what was removed."""
    removed = []
    try:
        names = os.listdir(base)
    except OSError:
        return removed
    for name in names:
        if not name.startswith(PREFIX):
            continue
        pid_text = name[len(PREFIX):].split("-", 1)[0]
        if not pid_text.isdigit():
            continue
        path = os.path.join(base, name)
        if _owner_gone(path, int(pid_text)):
            shutil.rmtree(path, ignore_errors=True)
            removed.append(path)
    return removed
