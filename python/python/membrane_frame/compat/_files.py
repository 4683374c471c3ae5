"""Atomic file replacement for the migration tools: a temp file in the same directory,
fsync, rename onto the target, fsync of the directory (SPEC 7.1), so a crash leaves the
old or the new file, never a mix."""

import os
import tempfile
from pathlib import Path


def replace_atomically(path: Path, data: bytes) -> None:
    """Make ``path`` hold ``data``, atomically and durably."""
    directory = path.parent
    fd, temp = tempfile.mkstemp(dir=str(directory), prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as out:
            out.write(data)
            out.flush()
            os.fsync(out.fileno())
        os.replace(temp, path)
    except BaseException:
        try:
            os.unlink(temp)
        except FileNotFoundError:
            pass
        raise
    dir_fd = os.open(str(directory), os.O_RDONLY)
    try:
        os.fsync(dir_fd)
    finally:
        os.close(dir_fd)
