"""SQS quotas a producer meets, each stated once (AWS: quotas-messages).

The client checks jobs against them before sending; the local emulator enforces the id rules the same
way, so a job refused on AWS is refused locally too.
"""

from __future__ import annotations

from typing import Final

__all__ = ["ID_PUNCTUATION", "MAX_BATCH_ENTRIES", "MAX_ID_LENGTH", "MAX_MESSAGE_BYTES"]

#: The largest message (and the largest SendMessageBatch request), 1 MiB.
MAX_MESSAGE_BYTES: Final = 1024 * 1024
#: Entries in one SendMessageBatch.
MAX_BATCH_ENTRIES: Final = 10
#: Length of MessageGroupId and MessageDeduplicationId.
MAX_ID_LENGTH: Final = 128
#: The punctuation MessageGroupId and MessageDeduplicationId may hold besides letters and digits.
ID_PUNCTUATION: Final = "!\"#$%&'()*+,-./:;<=>?@[\\]^_`{|}~"
