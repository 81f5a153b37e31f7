"""Where a drain's function log goes, and how it stays bounded.

The workers' stderr (the function log: the runtime's JSON lines and whatever the job prints) goes to
``<temp dir>/constructs-fifo/<function>.log`` (:func:`default_log_path`): one file per function,
emptied when a runner opens it and again whenever it grows past :data:`LOG_LIMIT_BYTES`
(:meth:`FunctionLog.bound`), and kept after the drain so it can be read. The directory keeps the
newest :data:`LOG_FILES_KEPT` logs: a fresh emulator deploys functions under new names, and a log per
run would pile up.

The workers write with ``O_APPEND``, so emptying the file while they run lets them go on writing at
its new end.
"""

from __future__ import annotations

import contextlib
import os
import tempfile
from pathlib import Path
from typing import Final

__all__ = ["LOG_DIR_NAME", "LOG_FILES_KEPT", "LOG_LIMIT_BYTES", "FunctionLog", "default_log_path"]

#: The directory under the system's temporary directory that holds the function logs.
LOG_DIR_NAME: Final = "constructs-fifo"
#: A function log that grows past this is emptied (with a line saying so): logs stay bounded.
LOG_LIMIT_BYTES: Final = 16 * 1024 * 1024
#: The function logs the log directory keeps: the newest, by modification time.
LOG_FILES_KEPT: Final = 10


def default_log_path(function_name: str) -> Path:
    """``<temp dir>/constructs-fifo/<function>.log``: one log per function, reused by every drain."""
    return Path(tempfile.gettempdir()) / LOG_DIR_NAME / f"{function_name}.log"


def _prune(directory: Path, *, keep: int) -> None:
    """Remove all but the newest ``keep`` ``*.log`` files of ``directory`` (best effort)."""
    with contextlib.suppress(OSError):
        logs = sorted(directory.glob("*.log"), key=lambda path: path.stat().st_mtime, reverse=True)
        for old in logs[keep:]:
            old.unlink(missing_ok=True)


class FunctionLog:
    """A function log, emptied and opened for appending (the workers' stderr).

    Parameters
    ----------
    function_name
        Names the file under :func:`default_log_path`, unless ``path`` is given.
    path
        Another file to use (not pruned with the directory's logs).
    """

    def __init__(self, function_name: str, path: Path | None = None) -> None:
        self.path = path if path is not None else default_log_path(function_name)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        if path is None:
            _prune(self.path.parent, keep=LOG_FILES_KEPT - 1)
        self.path.write_bytes(b"")
        self.file = self.path.open("ab")

    def bound(self) -> None:
        """Empty the log when it has grown past :data:`LOG_LIMIT_BYTES` (saying so in it)."""
        with contextlib.suppress(OSError):
            if self.path.stat().st_size > LOG_LIMIT_BYTES:
                os.truncate(self.path, 0)
                self.file.write(
                    f"[constructs-fifo: log emptied at {LOG_LIMIT_BYTES} bytes; it keeps the "
                    "latest lines only]\n".encode()
                )
                self.file.flush()

    def close(self) -> None:
        """Close the file (it stays on disk, for reading)."""
        self.file.close()
