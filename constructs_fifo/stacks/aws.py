"""Where and as whom the local commands talk to AWS: the one module that decides.

An :class:`AwsTarget` is an endpoint (``None`` for AWS itself), a region, and whether fake
credentials are used. It is decided once per command, by :meth:`AwsTarget.for_endpoint`, and every
step takes it: the deploy step (its clients and the CDK CLI's environment), the event source runner
(its clients and the workers' credentials), the emulator (its clients) and the demo.

The rule for credentials: an emulator the command started itself gets :data:`FAKE_CREDENTIALS`, and
its children are cut off from the user's profiles, so nothing they run can reach a real account; an
endpoint the user names gets the user's credentials when there are any and fake ones otherwise; AWS
itself (no endpoint) always gets the user's own credential chain.

Examples
--------
>>> target = AwsTarget("http://localhost:4566", fake_credentials=True)
>>> target.child_environment({"PATH": "/bin"})["AWS_ACCESS_KEY_ID"]
'testing'
>>> is_local_endpoint("http://localhost:4566"), is_local_endpoint(None)
(True, False)
"""

from __future__ import annotations

import os
import socket
import sys
import urllib.parse
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

import boto3

from constructs_fifo.stacks.errors import AwsEndpointError

__all__ = [
    "DEFAULT_REGION",
    "FAKE_CREDENTIALS",
    "AwsTarget",
    "check_endpoint",
    "configured_endpoint",
    "default_region",
    "free_port",
    "is_local_endpoint",
]

#: The region when neither the command line nor the environment names one.
DEFAULT_REGION: Final = "us-east-1"

#: Credentials the emulator accepts; given only to clients and children, never written anywhere.
FAKE_CREDENTIALS: Final = {
    "AWS_ACCESS_KEY_ID": "testing",
    "AWS_SECRET_ACCESS_KEY": "testing",
    "AWS_SESSION_TOKEN": "testing",
}
#: Environment variables that would point a child at the user's own AWS configuration.
_USER_CONFIG_VARIABLES: Final = ("AWS_PROFILE", "AWS_DEFAULT_PROFILE")
#: Host names of this machine.
_LOCAL_HOSTS: Final = frozenset({"localhost", "127.0.0.1", "::1"})


def default_region(env: Mapping[str, str] | None = None) -> str:
    """``AWS_REGION``, else ``AWS_DEFAULT_REGION``, else :data:`DEFAULT_REGION`."""
    env = os.environ if env is None else env
    return env.get("AWS_REGION") or env.get("AWS_DEFAULT_REGION") or DEFAULT_REGION


def configured_endpoint(explicit: str | None = None, env: Mapping[str, str] | None = None) -> str | None:
    """``explicit``, else ``AWS_ENDPOINT_URL``, else ``None`` (AWS itself)."""
    env = os.environ if env is None else env
    return explicit or env.get("AWS_ENDPOINT_URL") or None


def check_endpoint(endpoint_url: str | None) -> None:
    """Raise :class:`~constructs_fifo.local.errors.AwsEndpointError` unless ``endpoint_url`` is an
    ``http://`` or ``https://`` URL with a host (and a valid port, if any); ``None`` is AWS itself.

    botocore raises a bare ``ValueError("Invalid endpoint: localhost:4566")`` for the first client
    instead, and only when that client is made.
    """
    if endpoint_url is None:
        return
    parts = urllib.parse.urlsplit(endpoint_url)
    try:
        parts.port  # noqa: B018 - reading it is the check: a port outside 0-65535 raises ValueError
    except ValueError:
        valid_port = False
    else:
        valid_port = True
    if parts.scheme in ("http", "https") and parts.hostname and valid_port:
        return
    example = f"http://{endpoint_url}" if "://" not in endpoint_url else "http://localhost:4566"
    raise AwsEndpointError(
        f"the endpoint URL {endpoint_url!r} (--endpoint-url, else $AWS_ENDPOINT_URL) is not an http:// or "
        "https:// URL with a host and a port from 0 to 65535",
        f"pass --endpoint-url {example} (or export AWS_ENDPOINT_URL={example}); unset AWS_ENDPOINT_URL and "
        "leave --endpoint-url out for AWS itself",
    )


def is_local_endpoint(endpoint_url: str | None) -> bool:
    """Whether ``endpoint_url`` is on this machine (an emulator), e.g. ``http://localhost:4566``."""
    if not endpoint_url:
        return False
    host = urllib.parse.urlsplit(endpoint_url).hostname or ""
    return host in _LOCAL_HOSTS or host.endswith(".localhost")


def _user_has_credentials() -> bool:
    return boto3.session.Session().get_credentials() is not None


@dataclass(frozen=True)
class AwsTarget:
    """An endpoint, a region and a credentials decision, shared by every step of a command.

    Parameters
    ----------
    endpoint_url
        The endpoint (e.g. the local emulator); ``None`` for AWS itself.
    region
        The region of every client and child.
    fake_credentials
        Use :data:`FAKE_CREDENTIALS` and cut children off from the user's profiles. Build the target
        with :meth:`for_endpoint` to have this decided by the module's rule.
    """

    endpoint_url: str | None
    region: str = DEFAULT_REGION
    fake_credentials: bool = False

    def __post_init__(self) -> None:
        check_endpoint(self.endpoint_url)

    @classmethod
    def for_endpoint(
        cls, endpoint_url: str | None, region: str = DEFAULT_REGION, *, started_emulator: bool = False
    ) -> AwsTarget:
        """The target of a command: fake credentials for an emulator it started, or for an endpoint
        when the user has no credentials; AWS itself always uses the user's credential chain.

        Raises
        ------
        AwsEndpointError
            ``endpoint_url`` is not an endpoint URL (e.g. ``localhost:4566``, without its scheme).
        """
        check_endpoint(endpoint_url)
        if started_emulator:
            fake = True
        elif endpoint_url is None:
            fake = False
        else:
            fake = not _user_has_credentials()
        return cls(endpoint_url, region, fake)

    @property
    def is_local(self) -> bool:
        """Whether the endpoint is on this machine (see :func:`is_local_endpoint`)."""
        return is_local_endpoint(self.endpoint_url)

    def describe(self) -> str:
        """``http://localhost:4566 (us-east-1)`` or ``AWS (eu-west-1)``, for messages."""
        return f"{self.endpoint_url or 'AWS'} ({self.region})"

    def session(self) -> boto3.session.Session:
        """An explicit boto3 session (never the process-wide default session)."""
        if self.fake_credentials:
            return boto3.session.Session(
                aws_access_key_id=FAKE_CREDENTIALS["AWS_ACCESS_KEY_ID"],
                aws_secret_access_key=FAKE_CREDENTIALS["AWS_SECRET_ACCESS_KEY"],
                aws_session_token=FAKE_CREDENTIALS["AWS_SESSION_TOKEN"],
                region_name=self.region,
            )
        return boto3.session.Session(region_name=self.region)

    def client(self, service: str, session: boto3.session.Session | None = None) -> Any:
        """A boto3 client of ``service`` for this endpoint and region (typed by the caller)."""
        return (session or self.session()).client(  # type: ignore[call-overload]
            service, endpoint_url=self.endpoint_url, region_name=self.region
        )

    def child_credentials(self) -> dict[str, str]:
        """``AWS_ACCESS_KEY_ID``... for a child that acts as this target (e.g. a function worker).

        Fake credentials, or the user's resolved ones (empty when the user has none).
        """
        if self.fake_credentials:
            return dict(FAKE_CREDENTIALS)
        credentials = self.session().get_credentials()
        if credentials is None:
            return {}
        frozen = credentials.get_frozen_credentials()
        values = {
            "AWS_ACCESS_KEY_ID": frozen.access_key or "",
            "AWS_SECRET_ACCESS_KEY": frozen.secret_key or "",
        }
        if frozen.token:
            values["AWS_SESSION_TOKEN"] = frozen.token
        return values

    def child_environment(self, env: Mapping[str, str] | None = None) -> dict[str, str]:
        """The environment of a child process (the CDK CLI, the emulator) acting as this target.

        Parameters
        ----------
        env
            The base environment; defaults to this process's environment (which is never changed).

        Returns
        -------
        dict[str, str]
            ``env`` plus the region, the endpoint and the variables that keep jsii and the CDK CLI
            quiet; with fake credentials, :data:`FAKE_CREDENTIALS` and no way to the user's profiles
            or config files. The Python running this code comes first on ``PATH``, so a CDK app runs
            with the same interpreter.
        """
        base = dict(os.environ if env is None else env)
        child = dict(base)
        for name in ("AWS_REGION", "AWS_DEFAULT_REGION", "CDK_DEFAULT_REGION"):
            child[name] = self.region
        child.setdefault("JSII_SILENCE_WARNING_DEPRECATED_NODE_VERSION", "1")
        child.setdefault("CDK_DISABLE_VERSION_CHECK", "1")
        child.setdefault("CDK_DISABLE_CLI_TELEMETRY", "true")
        child["PATH"] = os.pathsep.join([str(Path(sys.executable).parent), base.get("PATH", os.defpath)])
        if self.endpoint_url is not None:
            child["AWS_ENDPOINT_URL"] = self.endpoint_url
        if self.fake_credentials:
            for name in _USER_CONFIG_VARIABLES:
                child.pop(name, None)
            child.update(FAKE_CREDENTIALS)
            child["AWS_CONFIG_FILE"] = os.devnull
            child["AWS_SHARED_CREDENTIALS_FILE"] = os.devnull
        return child


def free_port(host: str = "localhost") -> int:
    """A TCP port that is free on ``host`` right now."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind((host, 0))
        port: int = sock.getsockname()[1]
        return port
