"""Cold-start import time: our entry point's modules against Powertools' batch + idempotency modules.

Each figure is the median of fresh interpreters (after one untimed run that warms the file cache),
timing only the ``import`` statement inside the child, so interpreter start-up is left out. boto3 is
shown on its own and added to both sides: our entry point imports it lazily (on the first invocation,
when it builds its clients), Powertools' DynamoDB persistence layer at import.

Bytecode is kept equal on both sides through a private ``PYTHONPYCACHEPREFIX`` (which replaces every
``__pycache__`` directory, for reading too): with ``bytecode=True`` the warm-up run writes ``.pyc``
files there for every module and the timed runs load them; with ``bytecode=False`` nothing is written,
so every module is compiled from source each time, as in a Lambda asset shipped without ``.pyc``
(the standard library included, which Lambda does ship compiled: read that mode as an upper bound).
Otherwise a pip-installed package (compiled at install) would be timed against a source tree run with
``PYTHONDONTWRITEBYTECODE`` (compiled on every import).
"""

from __future__ import annotations

import os
import statistics
import subprocess
import sys
import tempfile
from dataclasses import dataclass

__all__ = ["OURS_IMPORT", "ImportTiming", "import_seconds"]

OURS_IMPORT = "import constructs_fifo.runtime.entrypoint"

_CHILD = "import time; t = time.perf_counter(); {statement}; print(time.perf_counter() - t)"


@dataclass(frozen=True)
class ImportTiming:
    """Median import time of one statement over fresh interpreters."""

    label: str
    statement: str
    seconds: list[float]

    @property
    def median_ms(self) -> float:
        return statistics.median(self.seconds) * 1000


def import_seconds(label: str, statement: str, *, runs: int = 5, bytecode: bool = True) -> ImportTiming:
    """Time ``statement`` in ``runs`` fresh interpreters (plus one untimed warm-up run).

    ``bytecode`` chooses cached ``.pyc`` files (``True``) or compiling from source every time.

    Raises
    ------
    RuntimeError
        The statement failed in the child (its stderr is in the message).
    """
    timings: list[float] = []
    with tempfile.TemporaryDirectory(prefix="bench-pycache-") as prefix:
        env = {**os.environ, "PYTHONPYCACHEPREFIX": prefix}
        env.pop("PYTHONDONTWRITEBYTECODE", None)
        if not bytecode:
            env["PYTHONDONTWRITEBYTECODE"] = "1"
        for index in range(runs + 1):
            done = subprocess.run(
                [sys.executable, "-c", _CHILD.format(statement=statement)],
                capture_output=True,
                text=True,
                check=False,
                env=env,
            )
            if done.returncode != 0:
                raise RuntimeError(
                    f"timing {statement!r} failed in a fresh interpreter: {done.stderr.strip()}"
                )
            if index:
                timings.append(float(done.stdout.strip().splitlines()[-1]))
    return ImportTiming(label, statement, timings)
