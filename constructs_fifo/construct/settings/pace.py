"""The ``pace`` prop's type: at most ``jobs`` runs per ``per`` for each value of a key, with a ``burst``.

The construct checks it (``checks.pace``) and writes it into the consumer's environment as the runtime's
:class:`~constructs_fifo.runtime.steering.pace.PaceLimit` (``CONSTRUCTS_FIFO_PACE``); docs/steering.md,
"Pace a key", says what the runtime promises with it.
"""

from __future__ import annotations

from dataclasses import dataclass

from aws_cdk import Duration

from constructs_fifo.construct.settings import tokens
from constructs_fifo.runtime.steering.pace import KEY_GROUP, PaceLimit

__all__ = ["Pace"]


@dataclass(frozen=True)
class Pace:
    """A pace limit (``pace=`` prop): at most ``jobs`` runs of one key value per ``per``, on average, and
    ``burst`` at once after a quiet spell. Over it a job waits in its place (its group behind it), is
    never dropped or reordered, and no attempt is counted.

    Attributes
    ----------
    jobs : int
        Runs per ``per``: 1 to 100,000.
    per : Duration
        The period: 1 second to 1 day, in whole seconds.
    burst : int or None
        Runs that may start at once on an idle key: 1 to 100,000; ``None``: ``jobs``.
    key : str
        ``"group"`` (each group alone, the default), ``"body:<dotted.path>"`` (a value of the job's body,
        e.g. ``"body:payload.tenant"``: one limit across the tenant's groups) or ``"attribute:<name>"``
        (a message attribute's string value). A job without the key's value is not paced.

    Examples
    --------
    >>> Pace(jobs=60, per=Duration.minutes(1), burst=10, key="body:payload.tenant")  # doctest: +SKIP
    """

    jobs: int
    per: Duration
    burst: int | None = None
    key: str = KEY_GROUP

    def limit(self) -> PaceLimit:
        """The runtime's limit (its values resolved: the check step refuses tokens)."""
        seconds = tokens.seconds(self.per)
        return PaceLimit(
            jobs=int(self.jobs),
            period_seconds=int(seconds or 0),
            burst=int(self.burst if self.burst is not None else self.jobs),
            key=self.key,
        )
