"""The ``provisioned_pollers`` prop: the SQS event source's provisioned mode, and what it cannot go with.

Lambda's provisioned mode keeps ``minimum`` pollers ready and scales to ``maximum``
(:data:`~constructs_fifo.runtime.aws_limits.LAMBDA_MIN_POLLERS` ...); an event source mapping takes
either a ``ProvisionedPollerConfig`` or a ``ScalingConfig.MaximumConcurrency``, never both, so
``max_concurrency`` given beside it is refused (the default ``max_concurrency``, computed from
``reserved_concurrency``, is simply not written). With the container consumer the prop is refused as
every Lambda-only prop is (``checks.containers``). Unresolved tokens are skipped.
"""

from __future__ import annotations

from constructs_fifo.construct.checks.limits import resolved_number
from constructs_fifo.construct.resources.lambda_consumer import ProvisionedPollers
from constructs_fifo.runtime.aws_limits import LAMBDA_MAX_POLLERS, LAMBDA_MIN_POLLERS, LAMBDA_MIN_POLLERS_MAX

__all__ = ["check_provisioned_pollers"]

_EXAMPLE = "provisioned_pollers=ProvisionedPollers(minimum=2, maximum=20)"


def _whole(value: object) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool) and float(value).is_integer()


def _check_range(pollers: ProvisionedPollers) -> list[str]:
    problems: list[str] = []
    low, high = pollers.minimum, pollers.maximum
    for name, value in (("minimum", low), ("maximum", high)):
        if not isinstance(value, int | float) or isinstance(value, bool):
            problems.append(
                f"provisioned_pollers.{name}={value!r} is not a whole number; pass e.g. {_EXAMPLE}."
            )
    if problems:
        return problems
    if resolved_number(low) and not (_whole(low) and LAMBDA_MIN_POLLERS <= low <= LAMBDA_MIN_POLLERS_MAX):
        problems.append(
            f"provisioned_pollers.minimum={low:g} is out of range: Lambda keeps {LAMBDA_MIN_POLLERS} to "
            f"{LAMBDA_MIN_POLLERS_MAX} pollers of an SQS event source always provisioned; pass a minimum "
            f"from {LAMBDA_MIN_POLLERS} to {LAMBDA_MIN_POLLERS_MAX}."
        )
    if resolved_number(high) and not (_whole(high) and LAMBDA_MIN_POLLERS <= high <= LAMBDA_MAX_POLLERS):
        problems.append(
            f"provisioned_pollers.maximum={high:g} is out of range: an SQS event source scales to at most "
            f"{LAMBDA_MAX_POLLERS} provisioned pollers (at least {LAMBDA_MIN_POLLERS}); pass a maximum "
            f"from {LAMBDA_MIN_POLLERS} to {LAMBDA_MAX_POLLERS}."
        )
    if not problems and resolved_number(low) and resolved_number(high) and low > high:
        problems.append(
            f"provisioned_pollers.minimum={low:g} is more than maximum={high:g}: the floor of pollers cannot "
            f"pass their ceiling; pass minimum <= maximum, e.g. {_EXAMPLE}."
        )
    return problems


def check_provisioned_pollers(pollers: object, max_concurrency: object) -> list[str]:
    """Every problem of ``provisioned_pollers``, given the ``max_concurrency`` prop as the user gave it.

    Returns
    -------
    list of str
        One message per problem, naming the prop, its value, the rule and the fix.
    """
    if pollers is None:
        return []
    if not isinstance(pollers, ProvisionedPollers):
        return [
            f"provisioned_pollers={pollers!r} is a {type(pollers).__name__}, not a ProvisionedPollers: pass "
            f"{_EXAMPLE} (from constructs_fifo), or omit it for on-demand polling."
        ]
    problems = _check_range(pollers)
    if max_concurrency is not None:
        problems.append(
            f"max_concurrency={max_concurrency!r} cannot go with provisioned_pollers: Lambda's provisioned "
            "mode and MaximumConcurrency exclude each other on an event source mapping (the deploy would "
            "fail); remove max_concurrency and bound the function with reserved_concurrency (and "
            "provisioned_pollers.maximum), or remove provisioned_pollers to keep max_concurrency."
        )
    return problems
