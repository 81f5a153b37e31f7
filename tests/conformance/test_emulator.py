"""The emulator itself: how it starts, stops and refuses an unpinned moto (emulator-only)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys

import boto3
import pytest

from constructs_fifo.local.emulator import patches
from constructs_fifo.local.emulator.launch import endpoint_from_ready_line
from constructs_fifo.local.emulator.server import LocalEmulator
from constructs_fifo.local.errors import EmulatorError, UnsupportedMotoVersionError

from .support import RAW_ENV

pytestmark = [
    pytest.mark.emulator_only,
    # These tests apply the patches; a raw-moto run (see conftest.py) must not get them.
    pytest.mark.skipif(os.environ.get(RAW_ENV) == "1", reason="raw-moto run: the patches must stay off"),
]


def test_apply_refuses_another_moto_version(monkeypatch: pytest.MonkeyPatch) -> None:
    # GIVEN the installed moto is the pinned one THEN the check passes
    assert patches.installed_moto_version() == patches.MOTO_VERSION
    patches.check_moto_version(patches.installed_moto_version())
    # GIVEN moto reported at a version the patches were not written for
    monkeypatch.setattr(patches, "installed_moto_version", lambda: "5.3.0")
    # WHEN the patches are applied THEN they refuse, naming both versions and the fix
    with pytest.raises(UnsupportedMotoVersionError) as caught:
        patches.apply()
    assert "moto 5.3.0 is installed" in caught.value.message
    assert f"moto[server]=={patches.MOTO_VERSION}" in caught.value.fix


def test_apply_is_idempotent() -> None:
    # GIVEN the patches applied
    patches.apply()
    from moto.sqs.models import Queue

    patched = Queue.add_message
    # WHEN applied again THEN nothing changes (no patch wraps another)
    patches.apply()
    assert patches.is_applied()
    assert Queue.add_message is patched


def test_port_zero_picks_a_free_port_and_a_taken_port_is_refused() -> None:
    # GIVEN an emulator on a free port
    with LocalEmulator(port=0) as first:
        assert first.endpoint_url == f"http://localhost:{first.port}"
        # WHEN a second one asks for the same port THEN it fails naming the port and the fix
        with pytest.raises(EmulatorError, match=rf"port {first.port} on 127.0.0.1 is already in use"):
            LocalEmulator(port=first.port).start()


def test_module_serves_until_sigterm() -> None:
    # GIVEN the emulator started as a subprocess on a free port
    process = subprocess.Popen(
        [sys.executable, "-m", "constructs_fifo.local.emulator", "--port", "0"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, "PYTHONUNBUFFERED": "1"},
    )
    try:
        assert process.stdout is not None
        line = process.stdout.readline().strip()
        # THEN it prints the ready line with its endpoint, and answers there
        assert line.startswith("constructs-fifo emulator ready at http://localhost:")
        endpoint = endpoint_from_ready_line(line)
        assert endpoint is not None
        sqs = boto3.client(
            "sqs",
            endpoint_url=endpoint,
            region_name="us-east-1",
            aws_access_key_id="testing",
            aws_secret_access_key="testing",
        )
        sqs.create_queue(QueueName="ready.fifo", Attributes={"FifoQueue": "true"})
        assert sqs.list_queues()["QueueUrls"][0].endswith("/ready.fifo")
        # WHEN it gets SIGTERM THEN it exits cleanly
        process.send_signal(signal.SIGTERM)
        assert process.wait(timeout=10) == 0
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()


def test_the_server_finds_a_request_service_once_per_host(monkeypatch: pytest.MonkeyPatch) -> None:
    # GIVEN the patches applied and moto's directory listing counted
    patches.apply()
    from moto import backends
    from moto.moto_server.werkzeug_app import DomainDispatcherApplication

    from constructs_fifo.local.emulator.patches.registry import original

    listings = []
    list_modules = backends.list_of_moto_modules

    def counted() -> object:
        listings.append(1)
        return list_modules()

    monkeypatch.setattr(backends, "list_of_moto_modules", counted)
    dispatcher = DomainDispatcherApplication(create_app=lambda service: None)  # type: ignore[arg-type,return-value]
    moto_answer = original(DomainDispatcherApplication, "get_backend_for_host")
    hosts = ["sqs.us-east-1.amazonaws.com", "dynamodb", "moto_api", None]
    expected = [moto_answer(dispatcher, host) for host in hosts]
    listings.clear()
    # WHEN each host's service is asked for three times
    answers = [[dispatcher.get_backend_for_host(host) for _ in range(3)] for host in hosts]
    # THEN the answers are moto's, and moto's directory was listed at most once per host
    assert answers == [[backend] * 3 for backend in expected]
    assert expected[:2] == ["sqs", "dynamodb"]
    assert len(listings) <= len(hosts)
