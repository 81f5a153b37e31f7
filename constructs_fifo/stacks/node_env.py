"""The environment a Node child of the CLI (the CDK CLI, a CDK app through jsii) runs in, quiet.

jsii prints a many-line end-of-life banner for an old Node, once per jsii process, and the AWS SDK
inside the CDK CLI a warning of Node versions it will drop; the user can do nothing about either
within a command, and they bury its output (CDK's "No stacks match" among them). The Makefile silences
them for ``make``'s own runs; :func:`quiet_node` does it for the CLI's children. A user's own
``python app.py`` or ``cdk synth`` is theirs: this package never sets them in its importer's
environment, since jsii starts Node when ``aws_cdk`` is imported, which an app does before or without
importing the construct, and a library must not change the environment of the process importing it.
"""

from __future__ import annotations

import functools
import shutil
import subprocess
from collections.abc import Mapping
from typing import Final

__all__ = ["JSII_END_OF_LIFE_VARIABLE", "SDK_NODE_WARNING_VARIABLE", "quiet_node"]

#: jsii prints its Node end-of-life banner unless this lists the running Node's major version.
JSII_END_OF_LIFE_VARIABLE: Final = "JSII_SILENCE_WARNING_END_OF_LIFE_NODE_VERSION"
#: The AWS SDK for JavaScript inside the CDK CLI warns of Node versions it will drop unless this is "true".
SDK_NODE_WARNING_VARIABLE: Final = "AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED"
_NODE_VERSION_TIMEOUT_SECONDS: Final = 30


@functools.cache
def _node_major(node: str) -> str | None:
    try:
        done = subprocess.run(
            [node, "--version"],
            capture_output=True,
            text=True,
            timeout=_NODE_VERSION_TIMEOUT_SECONDS,
            check=False,
        )
    except (OSError, subprocess.TimeoutExpired):
        return None
    major = done.stdout.strip().removeprefix("v").split(".")[0]
    return major if major.isdigit() else None


def quiet_node(env: Mapping[str, str]) -> dict[str, str]:
    """``env`` with jsii's Node end-of-life banner silenced for the Node its ``PATH`` runs, and the CDK
    CLI's AWS SDK warning of Node versions it will drop.

    The banners fill a CDK app's output (tens of lines, once per jsii or CDK CLI process) and the
    user can do nothing about them within the command. The deprecation banner and the
    CDK CLI's version notice are silenced by
    :meth:`~constructs_fifo.stacks.aws.AwsTarget.child_environment`; this one needs the major version
    (``node --version``, read once per process). A value the user set is kept.
    """
    quiet = dict(env)
    quiet.setdefault(SDK_NODE_WARNING_VARIABLE, "true")
    if JSII_END_OF_LIFE_VARIABLE in quiet:
        return quiet
    node = shutil.which("node", path=quiet.get("PATH"))
    major = _node_major(node) if node else None
    if major is not None:
        quiet[JSII_END_OF_LIFE_VARIABLE] = major
    return quiet
