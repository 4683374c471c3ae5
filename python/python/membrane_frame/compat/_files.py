"""Files for the migration tools: atomic replacement (a temp file in the same directory,
fsync, rename onto the target, fsync of the directory, SPEC 7.1, so a crash leaves the
old or the new file, never a mix) and reading into one reused buffer (a fresh ``bytes``
per file costs more in page faults than verifying it)."""

import os
import tempfile
from pathlib import Path
from typing import Union


class FileBuffer:
    """One growing ``bytearray`` that files are read into, in turn."""

    def __init__(self) -> None:
        self._buffer = bytearray()

    def read(self, path: Path) -> memoryview:
        """The whole of ``path``, valid until the next ``read``; release it (``with``)
        before that."""
        with open(path, "rb") as file:
            size = os.fstat(file.fileno()).st_size
            if len(self._buffer) < size + 1:
                self._buffer = bytearray(size + 1)
            with memoryview(self._buffer) as whole:
                # One byte more than the size, so a file that grew is seen to have.
                read = file.readinto(whole[: size + 1])
            if read > size:
                data = bytearray(self._buffer[:read]) + file.read()
                self._buffer = data
                return memoryview(data)
            return memoryview(self._buffer)[:read]


def replace_atomically(path: Path, data: Union[bytes, bytearray, memoryview]) -> None:
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
