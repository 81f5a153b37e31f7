"""SQS quotas a producer meets, under the names the client has always exported (AWS: quotas-messages).

The client checks jobs against them before sending; the local emulator enforces the id rules the same
way, so a job refused on AWS is refused locally too. Each is AWS's limit as
:mod:`constructs_fifo.runtime.aws_limits` states it, once.
"""

from __future__ import annotations

from constructs_fifo.runtime.aws_limits import SQS_ID_PUNCTUATION as ID_PUNCTUATION
from constructs_fifo.runtime.aws_limits import SQS_MAX_BATCH_ENTRIES as MAX_BATCH_ENTRIES
from constructs_fifo.runtime.aws_limits import SQS_MAX_ID_LENGTH as MAX_ID_LENGTH
from constructs_fifo.runtime.aws_limits import SQS_MAX_MESSAGE_BYTES as MAX_MESSAGE_BYTES

__all__ = ["ID_PUNCTUATION", "MAX_BATCH_ENTRIES", "MAX_ID_LENGTH", "MAX_MESSAGE_BYTES"]
