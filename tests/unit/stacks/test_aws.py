"""Where and as whom commands talk to AWS: targets, credentials, child environments."""

from __future__ import annotations

import os
import socket
import sys
from pathlib import Path

import pytest

from constructs_fifo.stacks.aws import (
    DEFAULT_REGION,
    FAKE_CREDENTIALS,
    AwsTarget,
    check_endpoint,
    configured_endpoint,
    default_region,
    free_port,
    is_local_endpoint,
)
from constructs_fifo.stacks.errors import AwsEndpointError


@pytest.fixture
def no_user_credentials(monkeypatch: pytest.MonkeyPatch) -> None:
    """This process sees no AWS credentials anywhere (environment, files, instance metadata)."""
    for name in ("AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN", "AWS_PROFILE"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("AWS_CONFIG_FILE", os.devnull)
    monkeypatch.setenv("AWS_SHARED_CREDENTIALS_FILE", os.devnull)
    monkeypatch.setenv("AWS_EC2_METADATA_DISABLED", "true")


def test_fake_credentials_cut_children_off_from_user_config() -> None:
    # GIVEN a user environment with a real profile and keys
    base = {"AWS_PROFILE": "prod", "AWS_ACCESS_KEY_ID": "AKIAREAL", "PATH": "/bin"}
    # WHEN the demo builds a child environment for its own emulator
    env = AwsTarget("http://localhost:5000", "eu-west-1", fake_credentials=True).child_environment(base)
    # THEN the child gets the fake keys, the endpoint and region, and no way to the user's config
    assert env["AWS_ACCESS_KEY_ID"] == FAKE_CREDENTIALS["AWS_ACCESS_KEY_ID"]
    assert "AWS_PROFILE" not in env
    assert env["AWS_CONFIG_FILE"] == os.devnull
    assert env["AWS_SHARED_CREDENTIALS_FILE"] == os.devnull
    assert env["AWS_ENDPOINT_URL"] == "http://localhost:5000"
    assert env["AWS_REGION"] == env["AWS_DEFAULT_REGION"] == env["CDK_DEFAULT_REGION"] == "eu-west-1"
    # AND the base mapping was not changed
    assert base == {"AWS_PROFILE": "prod", "AWS_ACCESS_KEY_ID": "AKIAREAL", "PATH": "/bin"}


def test_real_aws_children_keep_the_user_credentials() -> None:
    # GIVEN a user environment WHEN the child is for real AWS THEN credentials and profile stay
    env = AwsTarget(None, "us-east-1").child_environment({"AWS_PROFILE": "prod"})
    assert env["AWS_PROFILE"] == "prod"
    assert "AWS_ENDPOINT_URL" not in env
    assert "AWS_ACCESS_KEY_ID" not in env


def test_a_child_at_a_users_endpoint_keeps_configured_credentials_and_this_python() -> None:
    # GIVEN an environment with credentials WHEN the child environment is built for an endpoint
    target = AwsTarget("http://localhost:1", "eu-west-1", fake_credentials=False)
    env = target.child_environment({"AWS_ACCESS_KEY_ID": "mine", "PATH": "/bin"})
    # THEN the credentials are kept, and the current Python comes first on PATH
    assert env["AWS_ACCESS_KEY_ID"] == "mine"
    assert "AWS_SECRET_ACCESS_KEY" not in env
    assert env["PATH"].split(os.pathsep) == [str(Path(sys.executable).parent), "/bin"]


def test_fake_credentials_for_a_started_emulator_or_an_endpoint_without_user_credentials(
    no_user_credentials: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    # GIVEN no user credentials
    # WHEN targets are decided THEN an endpoint gets fake credentials and AWS itself never does
    assert AwsTarget.for_endpoint("http://localhost:4566").fake_credentials
    assert not AwsTarget.for_endpoint(None).fake_credentials
    # GIVEN user credentials WHEN an endpoint is named THEN the user's are used, unless we started it
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "AKIAUSER")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "secret")
    assert not AwsTarget.for_endpoint("http://localhost:4566").fake_credentials
    assert AwsTarget.for_endpoint("http://localhost:4566", started_emulator=True).fake_credentials


def test_child_credentials_are_the_fake_ones_or_the_users_resolved_ones(
    no_user_credentials: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    # GIVEN fake credentials WHEN a worker's are asked THEN the fake ones
    assert AwsTarget("http://localhost:1", fake_credentials=True).child_credentials() == FAKE_CREDENTIALS
    # GIVEN no user credentials and real AWS THEN none
    assert AwsTarget(None).child_credentials() == {}
    # GIVEN user keys THEN those
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "AKIAUSER")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "secret")
    assert AwsTarget(None).child_credentials() == {
        "AWS_ACCESS_KEY_ID": "AKIAUSER",
        "AWS_SECRET_ACCESS_KEY": "secret",
    }


@pytest.mark.parametrize(
    ("endpoint", "local"),
    [
        ("http://localhost:4566", True),
        ("http://127.0.0.1:4566", True),
        ("http://[::1]:4566", True),
        ("http://sqs.localhost:4566", True),
        ("https://sqs.eu-west-1.amazonaws.com", False),
        ("http://emulator.internal:4566", False),
        (None, False),
    ],
)
def test_local_endpoints_are_those_on_this_machine(endpoint: str | None, local: bool) -> None:
    assert is_local_endpoint(endpoint) is local
    assert AwsTarget(endpoint).is_local is local


def test_region_and_endpoint_defaults_come_from_the_environment_once() -> None:
    # GIVEN environments WHEN the defaults are read THEN the documented order holds
    assert default_region({}) == DEFAULT_REGION == "us-east-1"
    assert default_region({"AWS_DEFAULT_REGION": "eu-west-1"}) == "eu-west-1"
    assert default_region({"AWS_REGION": "eu-north-1", "AWS_DEFAULT_REGION": "eu-west-1"}) == "eu-north-1"
    assert configured_endpoint(None, {}) is None
    assert configured_endpoint(None, {"AWS_ENDPOINT_URL": "http://localhost:9"}) == "http://localhost:9"
    assert configured_endpoint("http://localhost:1", {"AWS_ENDPOINT_URL": "http://localhost:9"}) == (
        "http://localhost:1"
    )


def test_a_free_port_can_be_bound() -> None:
    # GIVEN a free port WHEN bound THEN it works
    port = free_port()
    with socket.socket() as sock:
        sock.bind(("localhost", port))
    assert 0 < port < 65536


@pytest.mark.parametrize(
    "url", ["localhost:4566", "http://localhost:99999", "ftp://localhost:4566", "http://", "4566"]
)
def test_a_value_that_is_no_endpoint_url_is_refused_naming_it(url: str) -> None:
    # WHEN a target is made for it THEN the local error naming the value and an URL to pass instead
    with pytest.raises(AwsEndpointError) as raised:
        AwsTarget.for_endpoint(url)
    assert repr(url) in raised.value.message
    assert raised.value.fix.startswith("pass --endpoint-url http://")


@pytest.mark.parametrize("url", ["http://localhost:4566", "https://sqs.eu-west-1.amazonaws.com", None])
def test_an_endpoint_url_or_none_is_accepted(url: str | None) -> None:
    check_endpoint(url)
