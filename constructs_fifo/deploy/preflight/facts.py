"""The preflight's facts and checks: what :func:`~constructs_fifo.deploy.preflight.observe.observe`
found, and what :func:`~constructs_fifo.deploy.preflight.verify.verify` says about it (no I/O).

A fact that could not be read is an :class:`Unavailable` with its reason; ``to_dict`` gives the JSON
form ``constructs-fifo doctor --output json`` prints.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any

__all__ = [
    "AccountConcurrency",
    "Bootstrap",
    "CdkCli",
    "Check",
    "Facts",
    "Identity",
    "StackConcurrency",
    "Status",
    "Unavailable",
]


class Status(StrEnum):
    """A check's outcome."""

    OK = "ok"
    PROBLEM = "problem"


@dataclass(frozen=True, slots=True)
class Unavailable:
    """A fact that could not be read, with the reason (e.g. the AWS error) and, when known, the fix."""

    reason: str
    fix: str = ""


@dataclass(frozen=True, slots=True)
class Identity:
    """STS GetCallerIdentity."""

    account: str
    arn: str


@dataclass(frozen=True, slots=True)
class CdkCli:
    """The CDK CLI that would run, and what ``cdk --version`` printed (its first word)."""

    path: str
    version: str


@dataclass(frozen=True, slots=True)
class Bootstrap:
    """The ``CDKToolkit`` stack: ``status`` ``None`` when there is none; ``version`` when readable."""

    version: int | None
    status: str | None


@dataclass(frozen=True, slots=True)
class AccountConcurrency:
    """Lambda GetAccountSettings' ``AccountLimit``."""

    limit: int
    unreserved: int


@dataclass(frozen=True, slots=True)
class StackConcurrency:
    """What the synthesized stack reserves, per function logical id, and what its assembly requires.

    Attributes
    ----------
    source
        The cloud assembly (or template) read, for messages.
    reserved
        ``ReservedConcurrentExecutions`` of each function that sets it.
    requires_bootstrap
        The highest ``requiresBootstrapStackVersion`` in the assembly's manifest (``None``: not stated).
    deployed_reserved
        What the stack's deployed functions reserve today (0 when the stack is not deployed).
    """

    source: str
    reserved: Mapping[str, int]
    requires_bootstrap: int | None = None
    deployed_reserved: int = 0

    @property
    def total(self) -> int:
        """The stack's total reserved concurrency."""
        return sum(self.reserved.values())


@dataclass(frozen=True)
class Facts:
    """Everything the checks look at; ``None`` where there was nothing to look at (``stack_name``
    ``None``: no ``--stack`` and no app to take it from)."""

    target: str
    region: str
    endpoint_url: str | None
    stack_name: str | None
    identity: Identity | Unavailable
    cdk: CdkCli | Unavailable
    bootstrap: Bootstrap | Unavailable
    account: AccountConcurrency | Unavailable | None
    stack: StackConcurrency | Unavailable | None
    known_regions: frozenset[str] = field(default_factory=frozenset)
    allow_unreserved: bool = False

    def to_dict(self) -> dict[str, Any]:
        """The facts as JSON-ready data (for ``doctor --output json``)."""

        def plain(value: object) -> object:
            if value is None or isinstance(value, str | int):
                return value
            if isinstance(value, Unavailable):
                return {"Unavailable": value.reason}
            if isinstance(value, StackConcurrency):
                return {
                    "Source": value.source,
                    "ReservedConcurrentExecutions": dict(value.reserved),
                    "Total": value.total,
                    "RequiresBootstrapStackVersion": value.requires_bootstrap,
                    "DeployedReserved": value.deployed_reserved,
                }
            fields = getattr(value, "__dataclass_fields__", {})
            return {name.title().replace("_", ""): getattr(value, name) for name in fields}

        return {
            "Target": self.target,
            "Region": self.region,
            "EndpointUrl": self.endpoint_url,
            "Stack": self.stack_name,
            "Identity": plain(self.identity),
            "CdkCli": plain(self.cdk),
            "Bootstrap": plain(self.bootstrap),
            "AccountConcurrency": plain(self.account),
            "StackConcurrency": plain(self.stack),
        }


@dataclass(frozen=True, slots=True)
class Check:
    """One preflight line: ``name``, ``status``, what was found and, for a problem, the fix."""

    name: str
    status: Status
    message: str
    fix: str = ""

    @property
    def ok(self) -> bool:
        """Whether the check passed."""
        return self.status is Status.OK

    def to_dict(self) -> dict[str, str]:
        """``{"Check": ..., "Status": ..., "Message": ..., "Fix": ...}`` (the AWS CLI's casing)."""
        return {"Check": self.name, "Status": str(self.status), "Message": self.message, "Fix": self.fix}
