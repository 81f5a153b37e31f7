"""Credentials for local endpoints: one place decides when fake ones are used and what they are.

The emulator accepts any credentials. The demo's own children (the emulator, the CDK CLI, the function
workers) get :data:`FAKE_CREDENTIALS` and are cut off from the user's profiles, so nothing they run can
reach a real account; a command pointed at a user's endpoint uses the user's credentials when there
are any, and fake ones otherwise.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import Final

import boto3

__all__ = [
    "FAKE_CREDENTIALS",
    "isolated_environment",
    "make_session",
    "needs_fake_credentials",
    "session_for",
]

#: Credentials the emulator accepts; given only to children, never written anywhere.
FAKE_CREDENTIALS: Final = {
    "AWS_ACCESS_KEY_ID": "testing",
    "AWS_SECRET_ACCESS_KEY": "testing",
    "AWS_SESSION_TOKEN": "testing",
}
#: Environment variables that would point a child at the user's own AWS configuration.
_USER_CONFIG_VARIABLES: Final = ("AWS_PROFILE", "AWS_DEFAULT_PROFILE")


def needs_fake_credentials(endpoint_url: str | None, *, started_emulator: bool = False) -> bool:
    """Fake credentials for an emulator we started, or for a local endpoint when the user has none.

    Real AWS (no endpoint) always uses the user's own credential chain.
    """
    if started_emulator:
        return True
    if endpoint_url is None:
        return False
    return boto3.session.Session().get_credentials() is None


def make_session(region: str | None, *, fake_credentials: bool) -> boto3.session.Session:
    """An explicit boto3 session: fake credentials, or the user's chain (never the default session).

    ``region`` ``None`` leaves the region to boto3 (``AWS_REGION``, the profile).
    """
    if fake_credentials:
        return boto3.session.Session(
            aws_access_key_id=FAKE_CREDENTIALS["AWS_ACCESS_KEY_ID"],
            aws_secret_access_key=FAKE_CREDENTIALS["AWS_SECRET_ACCESS_KEY"],
            aws_session_token=FAKE_CREDENTIALS["AWS_SESSION_TOKEN"],
            region_name=region,
        )
    return boto3.session.Session(region_name=region)


def session_for(endpoint_url: str | None, region: str | None) -> boto3.session.Session:
    """The session a command uses for ``endpoint_url``: see :func:`needs_fake_credentials`."""
    return make_session(region, fake_credentials=needs_fake_credentials(endpoint_url))


def isolated_environment(env: Mapping[str, str]) -> dict[str, str]:
    """``env`` with :data:`FAKE_CREDENTIALS` and no way to the user's profiles or config files."""
    isolated = {name: value for name, value in env.items() if name not in _USER_CONFIG_VARIABLES}
    isolated.update(FAKE_CREDENTIALS)
    isolated["AWS_CONFIG_FILE"] = os.devnull
    isolated["AWS_SHARED_CREDENTIALS_FILE"] = os.devnull
    return isolated
