"""The worker's own settings: defaults, the runtime's settings, flags, and what cannot work."""

from __future__ import annotations

import pytest

from constructs_fifo.runtime.constants import DEFAULT_HEARTBEAT_INTERVAL_SECONDS, DEFAULT_SLOTS
from constructs_fifo.runtime.settings.config import RuntimeConfig
from constructs_fifo.runtime.settings.spec import SETTINGS
from constructs_fifo.worker.errors import WorkerConfigError
from constructs_fifo.worker.loop import DEFAULT_GRACE_SECONDS
from constructs_fifo.worker.run import worker_options


def _config(visibility: int = 300) -> RuntimeConfig:
    return RuntimeConfig(
        "claims", "https://sqs.us-east-1.amazonaws.com/1/q.fifo", visibility_timeout_seconds=visibility
    )


def test_the_defaults_are_the_settings_rows() -> None:
    # GIVEN a queue with a 300 s visibility timeout and no worker settings
    # WHEN the options are read
    options = worker_options(_config(300))
    # THEN the rows' slots and heartbeat interval (4, 30 s), 110 s of grace, batches of 10
    assert (options.slots, options.heartbeat_interval_seconds) == (
        DEFAULT_SLOTS,
        DEFAULT_HEARTBEAT_INTERVAL_SECONDS,
    )
    assert (options.grace_seconds, options.batch_size) == (DEFAULT_GRACE_SECONDS, 10)


def test_the_batch_size_comes_from_the_environment_row() -> None:
    # GIVEN a container's environment with the construct's batch_size (1)
    config = RuntimeConfig.from_env(
        {
            "CONSTRUCTS_FIFO_CLAIM_TABLE": "claims",
            "CONSTRUCTS_FIFO_QUEUE_URL": "https://sqs.us-east-1.amazonaws.com/1/q.fifo",
            "CONSTRUCTS_FIFO_DEAD_LETTER_QUEUE_URL": "https://sqs.us-east-1.amazonaws.com/1/dlq.fifo",
            "CONSTRUCTS_FIFO_GROUP_TABLE": "groups",
            SETTINGS["batch_size"].variable(): "1",
        }
    )
    # WHEN the options are read without a flag, and with one
    # THEN the environment's value is taken, and a flag beats it
    assert worker_options(config).batch_size == 1
    assert worker_options(config, batch_size=3).batch_size == 3


def test_a_flag_beats_the_default() -> None:
    # GIVEN flags for each option
    # WHEN the options are read
    options = worker_options(
        _config(), slots=16, heartbeat_interval_seconds=20, grace_seconds=5, batch_size=1
    )
    # THEN each is the flag's
    assert (options.slots, options.heartbeat_interval_seconds, options.grace_seconds, options.batch_size) == (
        16,
        20,
        5,
        1,
    )


def test_every_setting_that_cannot_work_is_named_with_its_fix() -> None:
    # GIVEN a heartbeat no shorter than the visibility timeout and a batch SQS cannot receive
    # WHEN the options are read
    with pytest.raises(WorkerConfigError) as raised:
        worker_options(_config(60), heartbeat_interval_seconds=60, batch_size=11, slots=0)
    # THEN one error names all three, each with its fix
    message = str(raised.value)
    assert "heartbeat_interval=60 s" in message
    assert "--heartbeat-interval 20" in message
    assert "batch_size=11" in message
    assert "slots=0" in message
