"""What the emulator does not apply is said once; moto's per-resource warnings stay out of the way."""

from __future__ import annotations

import logging
import subprocess
import sys
import warnings
from collections.abc import Iterator

import pytest
from moto.cloudformation import parsing

from constructs_fifo.local.emulator import not_applied
from constructs_fifo.local.emulator.launch import endpoint_from_ready_line


@pytest.fixture
def moto_logger() -> Iterator[logging.Logger]:
    """The logger moto's CloudFormation parser logs to, its filters restored afterwards."""
    logger = parsing.logger
    filters = list(logger.filters)
    yield logger
    logger.filters[:] = filters


def test_moto_lines_about_known_gaps_are_dropped_and_others_shown_once(
    moto_logger: logging.Logger, caplog: pytest.LogCaptureFixture
) -> None:
    # GIVEN the emulator's quieting
    not_applied.quiet_cloudformation_warnings()
    # WHEN moto's parser meets alarms and queue policies (many times), twice a type new to us (one no
    # patch of ours adds), and moto logs something else
    with caplog.at_level(logging.WARNING, logger=moto_logger.name):
        for _ in range(11):
            assert parsing.resource_class_from_type("AWS::CloudWatch::Alarm") is None
            assert parsing.resource_class_from_type("AWS::SQS::QueuePolicy") is None
        for _ in range(2):
            assert parsing.resource_class_from_type("AWS::EventsV2::Subscriber") is None
        moto_logger.warning("something else moto says")
    # THEN only the new type is shown, once, and any other line as it was
    assert [r.getMessage() for r in caplog.records] == [
        "No Moto CloudFormation support for AWS::EventsV2::Subscriber",
        "something else moto says",
    ]


def test_motos_python_warnings_about_skipped_resources_are_ignored() -> None:
    # GIVEN the emulator's quieting, in a fresh warnings state
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        not_applied.quiet_cloudformation_warnings()
        # WHEN moto warns about a resource it skips, and something else
        warnings.warn(
            "Tried to parse AWS::CloudWatch::Alarm but it's not supported by moto's CloudFormation "
            "implementation",
            UserWarning,
            stacklevel=1,
        )
        warnings.warn("Unable to delete QueueAgeAlarm, as it was never created", UserWarning, stacklevel=1)
        warnings.warn("another warning", UserWarning, stacklevel=1)
    # THEN only the other warning remains
    assert [str(w.message) for w in caught] == ["another warning"]


def test_the_notice_names_every_gap_the_tls_only_queue_policy_included() -> None:
    # GIVEN / WHEN the notice THEN it names what is not applied, the TLS-only queue policies first
    text = not_applied.notice()
    assert "SQS queue policies, the construct's TLS-only policies included: plain HTTP is accepted" in text
    for what in (*not_applied.NOT_APPLIED.values(), *not_applied.NOT_ENFORCED):
        assert f"  - {what}" in text


def test_the_served_emulator_says_it_once_after_the_ready_line() -> None:
    # GIVEN the emulator as the demo starts it
    process = subprocess.Popen(
        [sys.executable, "-m", "constructs_fifo.local.emulator", "--port", "0"],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    try:
        assert process.stdout is not None
        # WHEN it is ready
        lines = [
            process.stdout.readline().rstrip("\n") for _ in range(1 + len(not_applied.notice().splitlines()))
        ]
    finally:
        process.terminate()
        process.wait(timeout=10)
    # THEN the ready line comes first (read by whoever started it), then the notice
    assert endpoint_from_ready_line(lines[0]) is not None
    assert "\n".join(lines[1:]) == not_applied.notice()
