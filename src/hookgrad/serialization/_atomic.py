"""Writing a file so that it is either whole or absent: shared by ``save`` and the safetensors
writer (which sits in ``utils`` and so must not import the package that imports it)."""
from __future__ import annotations

import os
import tempfile
from contextlib import contextmanager
from typing import Iterator, Union

PathLike = Union[str, os.PathLike]


@contextmanager
def atomic_path(path: PathLike) -> Iterator[str]:
    """The path of a temporary file beside ``path`` that replaces it only once fully written;
    removed on any error or interrupt, so a failed save leaves neither a torn file nor a
    temporary one."""
    path = os.fspath(path)
    directory = os.path.dirname(os.path.abspath(path))
    descriptor, temporary = tempfile.mkstemp(dir=directory, suffix=".tmp",
                                             prefix=f".{os.path.basename(path)}.")
    os.close(descriptor)
    try:
        yield temporary
        os.chmod(temporary, _file_mode(path))
        os.replace(temporary, path)
    except BaseException:
        try:
            os.unlink(temporary)
        except OSError:
            pass
        raise


def _file_mode(path: str) -> int:
    try:
        return os.stat(path).st_mode & 0o777
    except OSError:
        umask = os.umask(0)
        os.umask(umask)
        return 0o666 & ~umask
