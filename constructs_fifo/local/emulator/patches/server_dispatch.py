"""Speed patch of moto's server request dispatch (``moto/moto_server/werkzeug_app.py``), same behaviour.

moto 5.2.5's ``DomainDispatcherApplication.get_application`` finds the service of every request
while holding one process-wide lock, and ``get_backend_for_host`` does it by listing moto's package
directory (``os.listdir`` and one ``os.path.isdir`` per entry: about 180 system calls for an SQS
request, whose host is not a directory name) before trying every service's URL patterns. Each of
those calls releases the GIL and must win it back from the threads answering other requests, all
inside the lock, so concurrent requests queue behind it: measured on the local pipeline (figure 8 of
``make bench``), ten workers got no more jobs through per second than one.

The answer depends only on the host (the directory and the patterns do not change while the server
runs), so :func:`_get_backend_for_host` remembers it per host. moto prints a warning for an unknown
``*.amazonaws.com`` host; it now prints it once per host.

:func:`_infer_service_region_host` (fidelity): a request signed in its query string (a presigned
URL: ``X-Amz-Credential=.../us-east-1/sqs/aws4_request``) names its service there; moto looked only
at the Authorization header, took such a request for unsigned and sent ``GET queue-url?Action=...``
to S3 (404 ``NoSuchBucket``).
"""

from __future__ import annotations

from typing import Any
from urllib.parse import parse_qs

from moto.moto_server.werkzeug_app import DomainDispatcherApplication

from constructs_fifo.local.emulator.patches.registry import original, replace

__all__ = ["patch"]

#: The instance attribute holding a dispatcher's answers, by host.
_CACHE_ATTRIBUTE = "_constructs_fifo_backend_by_host"


def _get_backend_for_host(self: Any, host: str | None) -> Any:
    cache: dict[str | None, Any] = self.__dict__.setdefault(_CACHE_ATTRIBUTE, {})
    try:
        return cache[host]
    except KeyError:
        backend = original(DomainDispatcherApplication, "get_backend_for_host")(self, host)
        cache[host] = backend
        return backend


def _infer_service_region_host(self: Any, environ: dict[str, Any], path: str) -> str | None:
    """Find the service of a request signed in its query string as moto finds a header-signed one.

    AWS: sigv4-query-string-auth (the signature, and ``X-Amz-Credential`` with its scope
    ``date/region/service/aws4_request``, may travel in the query string instead of the
    Authorization header).
    """
    infer = original(DomainDispatcherApplication, "infer_service_region_host")
    if environ.get("HTTP_AUTHORIZATION"):
        return infer(self, environ, path)  # type: ignore[no-any-return]
    credential = parse_qs(str(environ.get("QUERY_STRING", ""))).get("X-Amz-Credential")
    if not credential:
        return infer(self, environ, path)  # type: ignore[no-any-return]
    signed = {**environ, "HTTP_AUTHORIZATION": f"AWS4-HMAC-SHA256 Credential={credential[0]}, Signature=-"}
    return infer(self, signed, path)  # type: ignore[no-any-return]


def patch() -> None:
    """Apply the dispatch patches (items 10 and 11 of the package docstring)."""
    replace(DomainDispatcherApplication, "get_backend_for_host", _get_backend_for_host)
    replace(DomainDispatcherApplication, "infer_service_region_host", _infer_service_region_host)
