"""Where a drain's function log goes, and how the logs stay bounded.

The workers' stderr (the function log: the runtime's JSON lines, whatever the job prints, and the
traceback of an error it raises) goes to a new file per drain, ``<function>.<n>.log`` with ``n`` one
more than the function's last (:func:`next_log_path`), in the log directory of the user and the
project (:func:`log_directory`):

- ``$CONSTRUCTS_FIFO_LOG_DIR`` when set (used as it is);
- else ``$XDG_STATE_HOME/constructs-fifo/<project>/logs``, ``~/.local/state/...`` without it: a
  directory of the user's own (not the shared temporary directory), and one per project, where
  ``<project>`` is the name of the directory the drain runs in (the app's) and a short hash of its
  path (two apps both called ``jobs`` keep their logs apart).

A drain never empties an earlier drain's log, so the log of a drain is still there after the drains
that follow it (a resume's, an empty queue's). Each function keeps its newest
:data:`LOG_FILES_KEPT` logs (:func:`prune`): only that project's directory, only that function's
numbered logs. A log that grows past :data:`LOG_LIMIT_BYTES` is emptied (with a line saying so,
:meth:`FunctionLog.bound`). The workers write with ``O_APPEND``, so emptying the file while they run
lets them go on writing at its new end.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import re
from pathlib import Path
from typing import Final

__all__ = [
    "LOG_DIR_ENV",
    "LOG_FILES_KEPT",
    "LOG_LIMIT_BYTES",
    "FunctionLog",
    "log_directory",
    "next_log_path",
    "project_name",
    "prune",
]

#: Environment variable naming the log directory (used as it is, no project under it).
LOG_DIR_ENV: Final = "CONSTRUCTS_FIFO_LOG_DIR"
#: A function log that grows past this is emptied (with a line saying so): logs stay bounded.
LOG_LIMIT_BYTES: Final = 16 * 1024 * 1024
#: The logs each function keeps in its project's directory: the newest, by number.
LOG_FILES_KEPT: Final = 10
#: Hex digits of the project path's hash in the project's name.
_PROJECT_HASH_DIGITS: Final = 8


def project_name(directory: Path) -> str:
    """``<name>-<hash>``: the directory's name (letters, digits, ``._-``) and a hash of its full path."""
    resolved = directory.resolve()
    name = re.sub(r"[^A-Za-z0-9._-]", "_", resolved.name) or "root"
    digest = hashlib.sha256(str(resolved).encode()).hexdigest()[:_PROJECT_HASH_DIGITS]
    return f"{name}-{digest}"


def log_directory(project_dir: Path | None = None) -> Path:
    """The function logs' directory of this user and the project in ``project_dir`` (default: the
    current directory); see the module docstring."""
    configured = os.environ.get(LOG_DIR_ENV)
    if configured:
        return Path(configured).expanduser()
    state = os.environ.get("XDG_STATE_HOME") or str(Path.home() / ".local" / "state")
    return Path(state) / "constructs-fifo" / project_name(project_dir or Path.cwd()) / "logs"


def _numbered(directory: Path, function_name: str) -> list[tuple[int, Path]]:
    """The function's numbered logs in ``directory``, oldest first."""
    pattern = re.compile(rf"{re.escape(function_name)}\.(\d+)\.log")
    found = []
    with contextlib.suppress(OSError):
        for path in directory.iterdir():
            if (match := pattern.fullmatch(path.name)) is not None:
                found.append((int(match.group(1)), path))
    return sorted(found)


def next_log_path(directory: Path, function_name: str) -> Path:
    """``<function>.<n>.log`` with ``n`` one more than the function's last log in ``directory``."""
    numbered = _numbered(directory, function_name)
    number = numbered[-1][0] + 1 if numbered else 1
    return directory / f"{function_name}.{number}.log"


def prune(directory: Path, function_name: str, *, keep: int = LOG_FILES_KEPT) -> None:
    """Remove all but the function's newest ``keep`` numbered logs of ``directory`` (best effort)."""
    for _, old in _numbered(directory, function_name)[:-keep]:
        with contextlib.suppress(OSError):
            old.unlink()


def _create(directory: Path, function_name: str) -> Path:
    """Create the function's next numbered log, exclusively (a drain running beside takes another)."""
    while True:
        path = next_log_path(directory, function_name)
        try:
            with path.open("xb"):
                return path
        except FileExistsError:
            continue


class FunctionLog:
    """A function log, opened for appending (the workers' stderr).

    Parameters
    ----------
    function_name
        Names the drain's new log in :func:`log_directory` (see the module docstring), unless
        ``path`` is given.
    path
        Another file to use, emptied first (not numbered, not pruned).
    """

    def __init__(self, function_name: str, path: Path | None = None) -> None:
        if path is None:
            directory = log_directory()
            directory.mkdir(parents=True, exist_ok=True)
            self.path = _create(directory, function_name)
            prune(directory, function_name)
        else:
            self.path = path
            self.path.parent.mkdir(parents=True, exist_ok=True)
            self.path.write_bytes(b"")
        self.file = self.path.open("ab")

    def write_line(self, text: str) -> None:
        """Add a line of the drain's own to the log (the workers write theirs through the file)."""
        with contextlib.suppress(OSError, ValueError):
            self.file.write(f"{text}\n".encode())
            self.file.flush()

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
