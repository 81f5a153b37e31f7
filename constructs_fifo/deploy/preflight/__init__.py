"""Preflight: what a real account would refuse, found before CloudFormation runs.

Used by ``constructs-fifo deploy`` (before ``cdk deploy``) and by ``constructs-fifo doctor``
(read-only). Two halves, so the rules can be tested without AWS (style: observe, then verify):

- :mod:`~constructs_fifo.deploy.preflight.facts`: the records, :class:`~.facts.Facts` and one
  :class:`~.facts.Check` per line (each with its JSON form);
- :mod:`~constructs_fifo.deploy.preflight.observe`: :func:`~.observe.observe` gathers the facts (the
  only module here that calls AWS or the CDK CLI; every failure becomes an ``Unavailable`` fact);
- :mod:`~constructs_fifo.deploy.preflight.verify`: :func:`~.verify.verify` turns facts into checks,
  pure rules (the concurrency rule is stated there).

This module holds the names and limits the app, the CLI and the checks share, each defined once.
"""

from __future__ import annotations

from typing import Final

__all__ = [
    "ALLOW_UNRESERVED_FLAG",
    "BOOTSTRAP_VERSION_PARAMETER",
    "CONCURRENCY_QUOTA_CODE",
    "MINIMUM_UNRESERVED",
    "UNRESERVED_CONTEXT",
]

#: Lambda keeps this much of an account's concurrency unreserved (the whole limit when it is lower).
MINIMUM_UNRESERVED: Final = 100
#: Service Quotas code of Lambda's "Concurrent executions" quota.
CONCURRENCY_QUOTA_CODE: Final = "L-B99A9384"
#: Where ``cdk bootstrap`` (default qualifier) records its version; the templates' rule checks it.
BOOTSTRAP_VERSION_PARAMETER: Final = "/cdk-bootstrap/hnb659fds/version"
#: CDK context that tells an app to reserve no concurrency; the sample app (``app.py``) reads it.
UNRESERVED_CONTEXT: Final = "constructs-fifo:unreserved"
#: The ``deploy`` flag that allows deploying without reserved concurrency when the account cannot hold it.
ALLOW_UNRESERVED_FLAG: Final = "--allow-unreserved"
