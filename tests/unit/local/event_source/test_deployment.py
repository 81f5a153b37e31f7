"""Fetching the deployed function's code."""

from __future__ import annotations

import io
import zipfile
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
