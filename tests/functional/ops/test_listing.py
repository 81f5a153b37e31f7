"""listing.py: ``groups list`` pages as the AWS CLI pages, never splits a group, refuses a foreign token.

On in-process moto with the real state-mode runtime: each group's first job writes its state item, a
poison job parks its group (a park header beside the state item: two items, one row).
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from constructs_fifo.cli import EXIT_USAGE
from constructs_fifo.runtime.exceptions import PermanentJobError

from ..ops_world import World, world

GROUPS = [f"ws#{i}" for i in range(7)]
PARKED = "ws#3"


def _poison(*_: Any) -> None:
    raise PermanentJobError("cannot apply")


@pytest.fixture(scope="module")
def groups() -> Iterator[World]:
    """Read-only tests share one world (each costs ~8 s to build and drain)."""
    for state_world in world(claim_mode=False):
        # GIVEN seven groups with a state each, one of them parked at a poison job
        state_world.harness.behaviour["bad"] = _poison
        for group in GROUPS:
            state_world.send(group, f"{group}-a")
        state_world.send(PARKED, "bad", "after")
        state_world.drain()
        yield state_world


def test_max_items_pages_cover_every_group_once(groups: World) -> None:
    # WHEN the groups are listed three at a time, each page's token passed to the next
    everything = groups.cli_json("groups", "list")
    pages: list[list[str]] = []
    token: str | None = None
    while True:
        more = ["--starting-token", token] if token else []
        page = groups.cli_json("groups", "list", "--max-items", "3", *more)
        pages.append([row["group"] for row in page["groups"]])
        token = page["nextToken"]
        if token is None:
            break
    # THEN no page holds more than three, and together they hold each group once
    assert all(len(page) <= 3 for page in pages)
    listed = [group for page in pages for group in page]
    assert sorted(listed) == GROUPS == [row["group"] for row in everything["groups"]]
    assert len(pages) >= 3
    assert everything["nextToken"] is None
    # AND the parked group, whose header and state are two items, is one PARKED row with its state
    rows = {row["group"]: row for row in everything["groups"]}
    assert (rows[PARKED]["status"], rows[PARKED]["deadJobId"], rows[PARKED]["version"]) == (
        "PARKED",
        "bad",
        1,
    )


def test_parked_pages_hold_only_parked_groups(groups: World) -> None:
    # WHEN only parked groups are listed, one at a time
    page = groups.cli_json("groups", "list", "--parked", "--max-items", "1")
    # THEN the one parked group is listed; a token may lead to an empty page, never to another group
    assert [row["group"] for row in page["groups"]] == [PARKED]
    if page["nextToken"] is not None:
        rest = groups.cli_json("groups", "list", "--parked", "--starting-token", page["nextToken"])
        assert rest["groups"] == []


def test_a_token_groups_list_did_not_print_is_refused_with_the_fix(
    groups: World, capsys: pytest.CaptureFixture[str]
) -> None:
    # WHEN a token that is not one of ours is passed
    code, _ = groups.cli("groups", "list", "--starting-token", "eyJub3QiOiAib3VycyJ9")
    # THEN exit 2, and the message names the value and what to pass instead
    assert code == EXIT_USAGE
    err = capsys.readouterr().err
    assert "--starting-token 'eyJub3QiOiAib3VycyJ9' is not a token" in err
    assert "nextToken" in err


def test_a_page_on_a_terminal_says_how_to_get_the_next(groups: World) -> None:
    # WHEN a page is printed as plain lines
    code, out = groups.cli("groups", "list", "--max-items", "2")
    # THEN two rows, then the option that continues
    assert code == 0
    lines = out.splitlines()
    assert len([line for line in lines if line.startswith("ws#")]) == 2
    assert lines[-1].startswith("more groups: pass --starting-token ")
