"""What one benchmark run produced: one row per comparison, each with its baseline, ratio and target.

A row compares one subject (``claim``, ``send_batch``, ``sample app`` ...) with its baseline in the
same run (Powertools, one SendMessage per job, a hand-written stack ...). A figure that was not
measured still has a row, with ``value`` ``None`` and a ``note`` saying why, so the table and the JSON
always hold every figure.
"""

from __future__ import annotations

import math
import operator
import os
import platform
import subprocess
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from typing import Any

__all__ = ["FIGURES", "Results", "Row", "Target", "machine"]

#: The figures, by number.
FIGURES = {
    1: "DynamoDB calls per job",
    2: "framework CPU per job (DynamoDB answered instantly)",
    3: "jobs per second per group (fixed delay per DynamoDB call)",
    4: "jobs per second on moto in-process",
    5: "cold start: import time",
    6: "producer",
    7: "synth time",
    8: "local pipeline (emulator + drain)",
    9: "what a job costs: capacity units, requests, GB-seconds, log bytes, dollars",
    10: "waiting for a job's outcome: read units per poll (per second of waiting)",
    11: "container workers: heartbeat cost, CPU per job against Lambda, slots, dollars of a 10-minute job",
}

_OPERATORS: dict[str, Callable[[float, float], bool]] = {
    "<=": operator.le,
    ">=": operator.ge,
    "=": lambda a, b: math.isclose(a, b, rel_tol=1e-9),
}


@dataclass(frozen=True)
class Target:
    """A target: the value (``on="value"``) or the ratio to the baseline (``on="ratio"``) vs a bound."""

    op: str
    bound: float
    on: str = "value"

    def met(self, value: float | None, ratio: float | None) -> bool | None:
        measured = value if self.on == "value" else ratio
        return None if measured is None else _OPERATORS[self.op](measured, self.bound)

    @property
    def text(self) -> str:
        bound = f"{self.bound:g}"
        return f"{self.op} {bound}x" if self.on == "ratio" else f"{self.op} {bound}"


@dataclass(frozen=True)
class Row:
    """One comparison of the run."""

    figure: int
    measure: str
    case: str
    subject: str
    value: float | None
    unit: str
    baseline: str = ""
    baseline_value: float | None = None
    target: Target | None = None
    note: str = ""
    digits: int = 2

    @property
    def ratio(self) -> float | None:
        if self.value is None or not self.baseline_value:
            return None
        return self.value / self.baseline_value

    @property
    def met(self) -> bool | None:
        """``True``/``False`` when the row has a target and a value, else ``None``."""
        return None if self.target is None else self.target.met(self.value, self.ratio)

    def number(self, value: float | None) -> str:
        return "" if value is None else f"{value:,.{self.digits}f}"

    @property
    def shown_value(self) -> str:
        return self.note if self.value is None else self.number(self.value)

    @property
    def shown_ratio(self) -> str:
        return "" if self.ratio is None else f"{self.ratio:.2f}x"

    @property
    def shown_met(self) -> str:
        if self.target is None:
            return "reported"
        return {True: "yes", False: "NO", None: "n/a"}[self.met]

    def as_json(self) -> dict[str, Any]:
        data = asdict(self)
        data.pop("digits")
        data["target"] = self.target.text if self.target else None
        data["ratio"] = self.ratio
        data["met"] = self.met
        return data


@dataclass
class Results:
    """Every row of one run, the parameters and the machine it ran on."""

    command: str
    parameters: dict[str, Any]
    machine: dict[str, str]
    rows: list[Row] = field(default_factory=list)
    #: What was not measured, and why (a consumer not built or not installed).
    notes: list[str] = field(default_factory=list)
    #: Correctness problems (a broken call budget, a failed or mis-run job): the run exits non-zero.
    problems: list[str] = field(default_factory=list)
    wall_seconds: float = 0.0

    def figure(self, number: int) -> list[Row]:
        return [row for row in self.rows if row.figure == number]

    def as_json(self) -> dict[str, Any]:
        return {
            "command": self.command,
            "parameters": self.parameters,
            "machine": self.machine,
            "wall_seconds": round(self.wall_seconds, 1),
            "figures": {
                str(number): {"title": title, "rows": [row.as_json() for row in self.figure(number)]}
                for number, title in FIGURES.items()
            },
            "notes": self.notes,
            "problems": self.problems,
        }


def machine() -> dict[str, str]:
    """nproc, CPU model, Python version and platform of this machine."""
    cpu = platform.processor() or platform.machine()
    try:
        lscpu = subprocess.run(["lscpu"], capture_output=True, text=True, check=False).stdout
    except OSError:
        lscpu = ""
    for line in lscpu.splitlines():
        if line.startswith("Model name:"):
            cpu = line.split(":", 1)[1].strip()
    load = ", ".join(f"{value:.1f}" for value in os.getloadavg()) if hasattr(os, "getloadavg") else "?"
    return {
        "load average at start (1, 5, 15 min)": load,
        "nproc": str(len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()),
        "cpu": cpu,
        "python": platform.python_version(),
        "platform": platform.platform(terse=True),
    }
