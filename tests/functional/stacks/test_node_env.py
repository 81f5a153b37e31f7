"""node_env.py and the README's Node line: the variable the CLI sets for its children is the one the
README tells a user to set, and it silences jsii's end-of-life banner in a real ``import aws_cdk``."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from constructs_fifo.stacks.node_env import JSII_END_OF_LIFE_VARIABLE, quiet_node

README = Path(__file__).resolve().parents[3] / "README.md"
#: What jsii's banner says of an unsupported Node (its checkNode, in the embedded jsii runtime).
BANNER = "is end-of-life and not supported anymore"
_JSII_TIMEOUT_SECONDS = 120


def _readme_quiet_line() -> tuple[str, str]:
    [(name, value)] = re.findall(r"`export (JSII_\w+)=(\w+)`", README.read_text(encoding="utf-8"))
    return name, value


def _import_aws_cdk(env: dict[str, str]) -> str:
    done = subprocess.run(
        [sys.executable, "-c", "import aws_cdk"],
        env=env,
        capture_output=True,
        text=True,
        timeout=_JSII_TIMEOUT_SECONDS,
        check=True,
    )
    return done.stdout + done.stderr


def test_the_readme_quiets_the_variable_the_cli_sets_for_its_children() -> None:
    # WHEN the README's Quickstart says how to quiet the banner in one's own shell
    name, value = _readme_quiet_line()
    # THEN it names the variable the CLI sets for its children, listing Node 20's major version
    assert name == JSII_END_OF_LIFE_VARIABLE
    assert value == "20"


def test_the_readmes_line_silences_jsiis_banner_for_the_running_node() -> None:
    # GIVEN a user's shell with no silencing variable
    mine = {k: v for k, v in os.environ.items() if not k.startswith("JSII_SILENCE_")}
    # WHEN an app imports aws_cdk there
    shown = _import_aws_cdk(mine)
    if BANNER not in shown:
        pytest.skip("this machine's Node is supported by jsii: there is no banner to silence")
    # THEN jsii prints its banner; with the README's variable listing the running major (what the CLI
    # sets for its children) it prints none
    major = quiet_node(mine)[JSII_END_OF_LIFE_VARIABLE]
    assert BANNER not in _import_aws_cdk({**mine, JSII_END_OF_LIFE_VARIABLE: major})
