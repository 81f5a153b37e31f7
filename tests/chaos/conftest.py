"""The chaos suite's session: no endpoint override reaches moto, and the counters print at the end."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from .stats import STATS


@pytest.fixture(autouse=True, scope="session")
def _moto_environment() -> Iterator[None]:
    with pytest.MonkeyPatch.context() as patch:
        for name in ("AWS_ENDPOINT_URL", "AWS_PROFILE"):
            patch.delenv(name, raising=False)
        patch.setenv("AWS_DEFAULT_REGION", "us-east-1")
        yield


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter) -> None:
    summary = STATS.summary()
    if summary:
        terminalreporter.write_sep("-", "chaos summary")
        for line in summary.splitlines():
            terminalreporter.write_line(line)
