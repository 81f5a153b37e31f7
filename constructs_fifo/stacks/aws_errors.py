"""What a failed AWS call means for the user, and the fix: botocore errors as one-line local errors.

Credentials, connections, throttling and access denied are the environment's fault, not the
command's: :func:`explain_aws_error` turns each into an :class:`~constructs_fifo.local.errors.AwsError`
that names what failed and the fix; any other error is left alone (``None``), because a traceback is
the right report of a bug. The CLI applies it to every command; the demo applies
:func:`explain_error_code` to the error codes of a batch send.

Examples
--------
>>> from botocore.exceptions import NoCredentialsError
>>> explain_aws_error(NoCredentialsError(), doing="drain", endpoint_url=None).fix  # doctest: +ELLIPSIS
'configure credentials (`aws configure`, ...'
"""

from __future__ import annotations

import urllib.parse
from typing import Final

import botocore.session
from botocore.exceptions import (
    ClientError,
    ConnectionError,
    CredentialRetrievalError,
    HTTPClientError,
    NoCredentialsError,
    PartialCredentialsError,
    ProfileNotFound,
    SSOError,
    TokenRetrievalError,
)
from botocore.parsers import ResponseParserError

from constructs_fifo.stacks.aws import is_local_endpoint
from constructs_fifo.stacks.errors import (
    AwsAccessDeniedError,
    AwsConnectionError,
    AwsCredentialsError,
    AwsError,
    AwsResponseError,
    AwsThrottledError,
)
from constructs_fifo.stacks.extras import INSTALL_LOCAL_EXTRA, missing_server_packages

__all__ = [
    "ACCESS_DENIED_CODES",
    "CREDENTIAL_CODES",
    "THROTTLING_CODES",
    "explain_aws_error",
    "explain_error_code",
]

#: Error codes of calls AWS throttled (botocore retries them first).
THROTTLING_CODES: Final = frozenset(
    {
        "Throttling",
        "ThrottlingException",
        "ThrottledException",
        "RequestThrottled",
        "RequestThrottledException",
        "TooManyRequestsException",
        "ProvisionedThroughputExceededException",
        "RequestLimitExceeded",
        "SlowDown",
        "KmsThrottled",
        "KMS.ThrottlingException",
    }
)
#: Error codes of calls the credentials are not allowed to make.
ACCESS_DENIED_CODES: Final = frozenset(
    {"AccessDenied", "AccessDeniedException", "UnauthorizedOperation", "AuthorizationError", "Forbidden"}
)
#: Error codes of credentials AWS does not accept.
CREDENTIAL_CODES: Final = frozenset(
    {
        "ExpiredToken",
        "ExpiredTokenException",
        "InvalidClientTokenId",
        "UnrecognizedClientException",
        "InvalidAccessKeyId",
        "SignatureDoesNotMatch",
        "InvalidSignatureException",
        "IncompleteSignature",
        "MissingAuthenticationToken",
        "AuthFailure",
        "RequestExpired",
    }
)
#: botocore errors raised while looking for credentials, before any call.
_CREDENTIAL_LOOKUP_ERRORS: Final = (
    NoCredentialsError,
    PartialCredentialsError,
    ProfileNotFound,
    CredentialRetrievalError,
    SSOError,
    TokenRetrievalError,
)
_CONFIGURE_CREDENTIALS: Final = (
    "configure credentials (`aws configure`, AWS_PROFILE, or AWS_ACCESS_KEY_ID and "
    "AWS_SECRET_ACCESS_KEY), or pass --endpoint-url to use a local emulator"
)


def _where(endpoint_url: str | None) -> str:
    return endpoint_url or "AWS"


def explain_error_code(
    code: str, message: str, *, operation: str, doing: str, endpoint_url: str | None
) -> AwsError | None:
    """The error for an AWS error ``code`` of ``operation``, or ``None`` when it is no environment error.

    Parameters
    ----------
    doing
        What the command was doing, e.g. ``drain``: the message starts with it.
    """
    said = f"{code}: {message}" if message else code
    if code in THROTTLING_CODES:
        return AwsThrottledError(
            f"{doing}: {_where(endpoint_url)} throttled {operation} ({said}) after botocore's retries",
            "wait a minute and run it again; to retry longer, set AWS_RETRY_MODE=adaptive and "
            "AWS_MAX_ATTEMPTS=10",
        )
    if code in ACCESS_DENIED_CODES:
        return AwsAccessDeniedError(
            f"{doing}: {_where(endpoint_url)} denied {operation} to these credentials ({said})",
            f"use credentials that are allowed {operation} (e.g. another AWS_PROFILE), or have an "
            "administrator grant it",
        )
    if code in CREDENTIAL_CODES:
        return AwsCredentialsError(
            f"{doing}: {_where(endpoint_url)} did not accept the credentials for {operation} ({said})",
            "refresh or replace them (`aws sso login`, `aws configure`, or AWS_PROFILE naming a valid "
            "profile)",
        )
    return None


def _connection_fix(url: str | None) -> str:
    if url and is_local_endpoint(url):
        port = urllib.parse.urlsplit(url).port
        serve = f"constructs-fifo local serve --port {port}" if port else "constructs-fifo local serve"
        if missing_server_packages():  # a plain install: `local serve` would only ask for the extra
            serve = f"{INSTALL_LOCAL_EXTRA}`, then `{serve}"
        return f"start the emulator there (`{serve}`), or pass the --endpoint-url of a running one"
    return (
        "check the network connection, --region and --endpoint-url (unset AWS_ENDPOINT_URL to reach "
        "AWS itself)"
    )


def _known_region(region: str) -> bool:
    """Whether botocore's partition data (every partition) names ``region``; True when unreadable."""
    try:
        session = botocore.session.get_session()
        return any(
            region in session.get_available_regions("sqs", partition_name=partition)
            for partition in session.get_available_partitions()
        )
    except Exception:  # a hint only: without the partition data, say nothing about the region
        return True


def _unparsable(
    error: ResponseParserError, *, doing: str, endpoint_url: str | None, region: str | None
) -> AwsError:
    first = " ".join(str(error).split())[:120]
    if region is not None and not _known_region(region):
        return AwsResponseError(
            f"{doing}: {_where(endpoint_url)} answered with a response botocore cannot parse ({first}...); "
            f"region {region!r} is not an AWS region (the emulator serves only AWS's regions)",
            "pass --region with an AWS region such as us-east-1 (or fix AWS_REGION / AWS_DEFAULT_REGION)",
        )
    return AwsResponseError(
        f"{doing}: {_where(endpoint_url)} answered with a response botocore cannot parse ({first}...)",
        "check that --endpoint-url (or AWS_ENDPOINT_URL) is an AWS endpoint or the constructs-fifo "
        "emulator, and --region a region it serves; the endpoint's own log says what it failed on",
    )


def explain_aws_error(
    error: BaseException, *, doing: str, endpoint_url: str | None, region: str | None = None
) -> AwsError | None:
    """The one-line error for a credential, connection, throttling or access-denied failure.

    Parameters
    ----------
    error
        What botocore raised.
    doing
        What the command was doing, e.g. ``drain``: the message starts with it.
    endpoint_url
        The command's endpoint (``None`` for AWS itself), for the fix.
    region
        The command's region: an unparsable answer names it when botocore does not know it (moto
        answers an unknown region with an HTML error page).

    Returns
    -------
    AwsError or None
        ``None`` when ``error`` is of another kind (a bug, or a rule the command broke).
    """
    if isinstance(error, _CREDENTIAL_LOOKUP_ERRORS):
        return AwsCredentialsError(
            f"{doing}: no usable AWS credentials for {_where(endpoint_url)} "
            f"({type(error).__name__}: {error})",
            _CONFIGURE_CREDENTIALS,
        )
    if isinstance(error, ResponseParserError):
        return _unparsable(error, doing=doing, endpoint_url=endpoint_url, region=region)
    if isinstance(error, ConnectionError | HTTPClientError):
        url = str(error.kwargs.get("endpoint_url") or endpoint_url or "AWS")
        return AwsConnectionError(
            f"{doing}: could not connect to {url} ({type(error).__name__})", _connection_fix(url)
        )
    if isinstance(error, ClientError):
        details = error.response.get("Error", {})
        return explain_error_code(
            str(details.get("Code", "")),
            str(details.get("Message", "")),
            operation=error.operation_name,
            doing=doing,
            endpoint_url=endpoint_url,
        )
    return None
