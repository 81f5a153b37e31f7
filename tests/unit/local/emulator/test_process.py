"""The demo's emulator child process: ready line, clean stop, clear failures."""

from __future__ import annotations

import os
import sys

import pytest

from constructs_fifo.local.emulator.launch import ready_line
from constructs_fifo.local.emulator.process import EmulatorProcess
from constructs_fifo.local.errors import EmulatorError


def test_start_returns_the_endpoint_once_the_ready_line_appears_and_stop_ends_the_child() -> None:
    # GIVEN a child that prints the emulator's ready line and then serves forever
    script = f"import time; print('booting'); print({ready_line('x')!r}, flush=True); time.sleep(60)"
    emulator = EmulatorProcess(port=45999, command=[sys.executable, "-c", script])
    # WHEN started
    endpoint = emulator.start()
    process = emulator.process
    # THEN the endpoint is the localhost URL of the port (moto needs 'localhost', not 127.0.0.1)
    assert endpoint == "http://localhost:45999"
    assert process is not None and process.poll() is None
    # AND stop ends the child, which the handle still shows
    emulator.stop()
    assert emulator.process is process
    assert process.poll() is not None


def test_a_child_that_exits_early_is_one_error_with_its_last_output_and_a_fix() -> None:
    # GIVEN a child that fails before it is ready
    script = "import sys; print('ModuleNotFoundError: No module named moto'); sys.exit(4)"
    emulator = EmulatorProcess(command=[sys.executable, "-c", script])
    # WHEN started THEN the error names the exit code and the last output, and says what to do
    with pytest.raises(EmulatorError, match="exited with code 4") as caught:
        emulator.start()
    assert "No module named moto" in str(caught.value)
    assert "constructs-fifo[local]" in caught.value.fix


def test_a_silent_child_times_out_and_is_stopped() -> None:
    # GIVEN a child that never prints the ready line
    emulator = EmulatorProcess(
        command=[sys.executable, "-c", "import time; time.sleep(60)"], startup_timeout=1
    )
    # WHEN started THEN it gives up after the timeout
    with pytest.raises(EmulatorError, match="did not report ready"):
        emulator.start()
    # AND leaves no child behind: the one it started has exited
    assert emulator.process is not None
    assert emulator.process.poll() is not None


def test_the_child_gets_fake_credentials_and_no_user_profile() -> None:
    # GIVEN an emulator process WHEN its target is taken THEN it is an emulator the command started
    target = EmulatorProcess(port=45998, region="eu-west-1").target()
    assert target.endpoint_url == "http://localhost:45998"
    assert target.region == "eu-west-1"
    assert target.fake_credentials


def test_the_child_is_out_of_reach_of_the_terminals_ctrl_c_and_stop_still_ends_it() -> None:
    # GIVEN a started emulator child
    script = f"import time; print({ready_line('x')!r}, flush=True); time.sleep(60)"
    emulator = EmulatorProcess(command=[sys.executable, "-c", script])
    emulator.start()
    process = emulator.process
    assert process is not None
    try:
        # THEN it leads a process group of its own: a Ctrl-C (sent to our group) leaves it serving
        # until the command has stopped its drains
        assert os.getpgid(process.pid) == process.pid != os.getpgrp()
    finally:
        # AND stop ends it
        emulator.stop()
    assert process.poll() is not None
