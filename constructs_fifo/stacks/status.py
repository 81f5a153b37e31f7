"""CloudFormation stack states and the bootstrap stack's name, shared by deploying and the preflight.

A leaf module: :mod:`~constructs_fifo.deploy.cdk` runs the preflight, and the preflight reads the
bootstrap stack, so what both need lives here.
"""

from __future__ import annotations

from typing import Final

from botocore.exceptions import ClientError

__all__ = ["BOOTSTRAP_STACK", "COMPLETE_STATES", "is_missing_stack"]

#: The stack ``cdk bootstrap`` creates.
BOOTSTRAP_STACK: Final = "CDKToolkit"
#: Stack states in which a stack's resources and outputs can be read.
COMPLETE_STATES: Final = frozenset(
    {"CREATE_COMPLETE", "UPDATE_COMPLETE", "UPDATE_ROLLBACK_COMPLETE", "IMPORT_COMPLETE"}
)


def is_missing_stack(error: ClientError) -> bool:
    """Whether a CloudFormation error says the stack does not exist (not, e.g., access denied)."""
    details = error.response.get("Error", {})
    return details.get("Code") == "ValidationError" and "does not exist" in details.get("Message", "")
