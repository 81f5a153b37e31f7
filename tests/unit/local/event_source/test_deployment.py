"""Fetching the deployed function's code."""

from __future__ import annotations

import http.server
import io
import threading
import zipfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from constructs_fifo.local.event_source.deployment import fetch_function_code


class _NoGetFunction:
    """A Lambda client that fails the test if GetFunction is called."""

    def get_function(self, **_: object) -> dict[str, Any]:
        raise AssertionError("GetFunction was called although the location was given")


class _Buckets:
    """An S3 client holding one asset zip in a CDK bootstrap bucket (after another bucket)."""

    def __init__(self, archive: bytes) -> None:
        self.archive = archive
        self.asked: list[str] = []

    def list_buckets(self) -> dict[str, Any]:
        return {"Buckets": [{"Name": "aaa-other"}, {"Name": "cdk-hnb659fds-assets"}]}

    def get_object(self, *, Bucket: str, Key: str) -> dict[str, Any]:  # noqa: N803 - boto3's names
        self.asked.append(f"{Bucket}/{Key}")
        return {"Body": io.BytesIO(self.archive)}


def test_fetch_function_code_with_a_known_location_reads_the_asset_without_get_function(
    tmp_path: Path,
) -> None:
    # GIVEN the function's code location (from a GetFunction response already read) and its asset in S3
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        archive.writestr("handler.py", "def handle(event, context):\n    return None\n")
    s3 = _Buckets(buffer.getvalue())

    # WHEN the code is fetched from an emulator endpoint with that location
    code = fetch_function_code(
        "fn",
        tmp_path / "code",
        lambda_client=_NoGetFunction(),  # type: ignore[arg-type]
        s3_client=s3,
        endpoint_url="http://localhost:1",
        location="https://awslambda-us-east-1-tasks.s3.us-east-1.amazonaws.com/abc123.zip",
    )

    # THEN the CDK bucket is asked first for the key and the code is extracted; GetFunction was not called
    assert s3.asked == ["cdk-hnb659fds-assets/abc123.zip"]
    assert (code / "handler.py").read_text().startswith("def handle")


def _zip(files: dict[str, str]) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        for name, text in files.items():
            archive.writestr(name, text)
    return buffer.getvalue()


class _NoBuckets:
    """An S3 client that fails the test if it is asked (the code came by URL)."""

    def list_buckets(self) -> dict[str, Any]:
        raise AssertionError("S3 was searched although the location served the code")


@contextmanager
def _serving(archive: bytes) -> Iterator[tuple[str, list[str]]]:
    """A local HTTP server answering GET /code.zip with ``archive`` (port 0); yields its URL and paths."""
    asked: list[str] = []

    class Handler(http.server.BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            asked.append(self.path)
            found = self.path.split("?")[0] == "/code.zip"
            self.send_response(200 if found else 404)
            self.end_headers()
            if found:
                self.wfile.write(archive)

        def log_message(self, *args: object) -> None:
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}", asked
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=5)


def test_an_endpoint_that_serves_code_by_url_is_fetched_from_that_url(tmp_path: Path) -> None:
    # GIVEN an emulator whose GetFunction returns a working presigned URL on its own host (LocalStack)
    with _serving(_zip({"handler.py": "VALUE = 1\n"})) as (base, asked):
        location = f"{base}/code.zip?X-Amz-Signature=abc"
        # WHEN the code is fetched for that endpoint
        code = fetch_function_code(
            "fn",
            tmp_path / "code",
            lambda_client=_NoGetFunction(),  # type: ignore[arg-type]
            s3_client=_NoBuckets(),
            endpoint_url="http://localhost:4566",
            location=location,
        )
    # THEN the URL itself was downloaded (query included) and extracted; S3 was not searched
    assert asked == ["/code.zip?X-Amz-Signature=abc"]
    assert (code / "handler.py").read_text() == "VALUE = 1\n"


def test_a_url_that_fails_on_an_endpoint_falls_back_to_the_assets_bucket(tmp_path: Path) -> None:
    # GIVEN an endpoint URL that answers 404, and the asset in the endpoint's CDK bucket
    s3 = _Buckets(_zip({"handler.py": "VALUE = 2\n"}))
    with _serving(b"") as (base, asked):
        # WHEN the code is fetched
        code = fetch_function_code(
            "fn",
            tmp_path / "code",
            lambda_client=_NoGetFunction(),  # type: ignore[arg-type]
            s3_client=s3,
            endpoint_url="http://localhost:4566",
            location=f"{base}/abc123.zip",
        )
    # THEN the URL was tried first, then the bucket by the URL's key
    assert asked == ["/abc123.zip"]
    assert s3.asked == ["cdk-hnb659fds-assets/abc123.zip"]
    assert (code / "handler.py").read_text() == "VALUE = 2\n"
