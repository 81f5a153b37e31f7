"""The emulator's ready line and the check for its packages, without moto."""

from __future__ import annotations

import pytest

from constructs_fifo.local.emulator import launch
from constructs_fifo.stacks import extras
from constructs_fifo.stacks.errors import MissingExtraError


def test_the_ready_line_carries_the_endpoint_back() -> None:
    # GIVEN the line the server prints WHEN read back THEN the endpoint comes out; other lines give None
    line = launch.ready_line("http://localhost:4566")
    assert line == "constructs-fifo emulator ready at http://localhost:4566"
    assert launch.endpoint_from_ready_line(line + "\n") == "http://localhost:4566"
    assert launch.endpoint_from_ready_line("booting") is None


def test_installed_server_packages_pass_and_missing_ones_name_the_extra(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # GIVEN the dev install (the 'local' extra is there) WHEN checked THEN nothing is raised
    launch.require_server_packages()
    # GIVEN a package that is not installed WHEN checked THEN the error names it and the extra to install
    monkeypatch.setattr(extras, "SERVER_PACKAGES", ("moto", "constructs_fifo_no_such_package"))
    with pytest.raises(MissingExtraError, match="needs constructs_fifo_no_such_package,") as caught:
        launch.require_server_packages()
    assert caught.value.fix == "pip install 'constructs-fifo[local]'"
