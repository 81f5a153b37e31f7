"""Every client class meets the environment (region, credentials, endpoint) with the producer's errors.

A new user's shell (no region, no credentials, no endpoint, no config) and an endpoint nobody listens
on: each class of the client package says which of the three is missing and how to fix it, as
``JobProducer`` does, never botocore's raw ``NoRegionError``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from constructs_fifo.client import (
    CredentialsNotFoundError,
    EndpointNotReachableError,
    JobOutcomes,
    ParkedGroups,
    RegionNotSetError,
)
from constructs_fifo.client.state_reader import GroupStateReader

REGION = "us-east-1"
NOWHERE = "http://localhost:1/123456789012/jobs.fifo"  # nothing listens on port 1

#: Each client class, built with its default clients, and one read it makes.
CLASSES: dict[str, tuple[Callable[[], Any], Callable[[Any], object]]] = {
    "JobOutcomes claim mode": (
        lambda: JobOutcomes(claim_table="claims", group_table="groups"),
        lambda outcomes: outcomes.get("j-1", "ws#1"),
    ),
    "JobOutcomes state mode": (
        lambda: JobOutcomes(group_table="groups"),
        lambda outcomes: outcomes.get("j-1", "ws#1"),
    ),
    "GroupStateReader": (lambda: GroupStateReader("groups"), lambda reader: reader.get("ws#1")),
    "ParkedGroups": (
        lambda: ParkedGroups(group_table="groups", queue_url=NOWHERE, dead_letter_queue_url=NOWHERE),
        lambda groups: groups.get("ws#1"),
    ),
}


@pytest.mark.parametrize("name", CLASSES)
def test_no_region_is_the_clients_error_naming_the_class_and_the_fix(
    bare_environment: None, name: str
) -> None:
    # GIVEN no region anywhere WHEN the class is built with its default clients
    build, _ = CLASSES[name]
    with pytest.raises(RegionNotSetError) as raised:
        build()
    # THEN the client's own error: the class, the variables read, how to pass a client instead
    message = str(raised.value)
    assert message.startswith(name.split(maxsplit=1)[0] + " found no AWS region")
    assert "set AWS_REGION or AWS_DEFAULT_REGION" in message and "region_name=..." in message
    assert type(raised.value.__cause__).__name__ == "NoRegionError"


@pytest.mark.parametrize("name", CLASSES)
def test_no_credentials_is_the_clients_error_with_the_fix(
    bare_environment: None, monkeypatch: pytest.MonkeyPatch, name: str
) -> None:
    # GIVEN a region and no credentials
    monkeypatch.setenv("AWS_REGION", REGION)
    build, read = CLASSES[name]
    client = build()
    # WHEN it reads THEN the client's own error naming what was not read and the fix
    with pytest.raises(CredentialsNotFoundError) as raised:
        read(client)
    message = str(raised.value)
    assert "was not read from table" in message and "no usable AWS credentials" in message
    assert "AWS_ACCESS_KEY_ID=testing AWS_SECRET_ACCESS_KEY=testing" in message
    assert type(raised.value.__cause__).__name__ == "NoCredentialsError"


@pytest.mark.parametrize("name", CLASSES)
def test_an_unreachable_endpoint_is_the_clients_error_with_the_fix(
    bare_environment: None, monkeypatch: pytest.MonkeyPatch, name: str
) -> None:
    # GIVEN credentials and an endpoint nobody listens on
    monkeypatch.setenv("AWS_REGION", REGION)
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "testing")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "testing")
    monkeypatch.setenv("AWS_ENDPOINT_URL", "http://localhost:1")
    build, read = CLASSES[name]
    # WHEN it reads THEN the client's own error: where it could not connect, and the fix
    with pytest.raises(EndpointNotReachableError) as raised:
        read(build())
    assert "could not connect to http://localhost:1/" in str(raised.value)
    assert "`constructs-fifo local serve`" in str(raised.value)
