"""The package's rooms and doors, read from the source: who may import whom.

- no module imports a private (underscore) name of another module;
- no import cycles between modules (module-level imports, ``TYPE_CHECKING`` blocks included: a
  cycle hidden from the interpreter is still one for the reader);
- each package's errors module is a leaf;
- the runtime (shipped in the function's asset) imports no other part of the package, and the
  worker script imports nothing of it;
- the runtime's rooms: its kernel (``constructs_fifo/runtime/*.py``) imports neither mode, claim mode
  (``runtime/claim/``) and state mode (``runtime/state/``) import only the kernel and themselves;
  the package face names claim mode's public classes for type checkers only (it imports them on
  first use), and the entry point imports the configured mode inside the function that builds it;
- only the emulator's server and its patches import moto (the ``local`` extra), so every other
  module works on a plain install;
- the runtime and the construct keep each module within 500 lines and each folder's own modules within
  2,500 (a signal to split, or to give the folder rooms); a module that is one concept may pass the
  line signal when named below with its bound and why (halves of one concept are worse than one long
  module).

The benchmark (``benchmarks/``) is held to the same rules on names and cycles.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PACKAGES = ("constructs_fifo", "benchmarks")
RUNTIME = "constructs_fifo.runtime"
CONSTRUCT = "constructs_fifo.construct"
MODES = (f"{RUNTIME}.claim", f"{RUNTIME}.state")


def _module_name(path: Path) -> str:
    parts = path.relative_to(ROOT).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


MODULES = {
    _module_name(path): path for package in PACKAGES for path in sorted((ROOT / package).rglob("*.py"))
}


def _in(module: str, package: str) -> bool:
    return module == package or module.startswith(f"{package}.")


def _is_type_checking(node: ast.If) -> bool:
    return isinstance(node.test, ast.Name) and node.test.id == "TYPE_CHECKING"


def _top_level_imports(tree: ast.Module, *, typing: bool) -> Iterator[ast.Import | ast.ImportFrom]:
    """Module-level imports (not those in functions); ``typing``: also those under TYPE_CHECKING."""
    pending: list[ast.stmt] = list(tree.body)
    while pending:
        node = pending.pop(0)
        if isinstance(node, ast.Import | ast.ImportFrom):
            yield node
        elif isinstance(node, ast.If) and (typing or not _is_type_checking(node)):
            pending.extend(node.body + node.orelse)
        elif isinstance(node, ast.Try):
            pending.extend(node.body + node.orelse + node.finalbody)


def _imports(module: str, *, typing: bool = True) -> list[tuple[str, str | None]]:
    """``(imported module, imported name or None)`` for every module-level import of ``module``."""
    tree = ast.parse(MODULES[module].read_text())
    found: list[tuple[str, str | None]] = []
    for node in _top_level_imports(tree, typing=typing):
        if isinstance(node, ast.Import):
            found.extend((alias.name, None) for alias in node.names)
        elif node.module is not None and node.level == 0:
            found.extend((node.module, alias.name) for alias in node.names)
    return found


def _project_edges(module: str, *, typing: bool = True) -> set[str]:
    """The project modules ``module`` imports (``from pkg import submodule`` counts as submodule)."""
    edges: set[str] = set()
    for target, name in _imports(module, typing=typing):
        if name is not None and f"{target}.{name}" in MODULES:
            edges.add(f"{target}.{name}")
        elif target in MODULES:
            edges.add(target)
    edges.discard(module)
    return edges


def test_no_module_imports_a_private_name_of_another() -> None:
    offenders = [
        f"{module} imports {target}.{name}"
        for module in MODULES
        for target, name in _imports(module)
        if target.split(".")[0] in PACKAGES
        and name is not None
        and name.startswith("_")
        and not name.endswith("__")  # dunders such as __version__ are public
    ]
    assert offenders == []


def test_there_are_no_import_cycles() -> None:
    graph = {module: _project_edges(module) for module in MODULES}
    state: dict[str, str] = {}
    cycles: list[list[str]] = []

    def visit(module: str, trail: list[str]) -> None:
        state[module] = "open"
        for target in sorted(graph[module]):
            if state.get(target) == "open":
                cycles.append([*trail[trail.index(target) :], target])
            elif target not in state:
                visit(target, [*trail, target])
        state[module] = "done"

    for module in sorted(graph):
        if module not in state:
            visit(module, [module])
    assert cycles == []


@pytest.mark.parametrize(
    ("module", "allowed"),
    [
        ("constructs_fifo.stacks.errors", set()),
        ("constructs_fifo.local.errors", {"constructs_fifo.stacks.errors"}),
        ("constructs_fifo.ops.errors", {"constructs_fifo.stacks.errors"}),
        ("constructs_fifo.demo.errors", {"constructs_fifo.stacks.errors"}),
        ("constructs_fifo.construct.errors", set()),
        ("constructs_fifo.runtime.exceptions", set()),
        ("constructs_fifo.client.errors", {"constructs_fifo.client.results"}),
    ],
)
def test_each_packages_errors_module_is_a_leaf(module: str, allowed: set[str]) -> None:
    assert _project_edges(module) <= allowed


def test_neither_runtime_mode_imports_the_other() -> None:
    # GIVEN every module of each mode, and what it imports (type-only imports included)
    crossings = [
        f"{module} imports {target}"
        for mode, other in (MODES, MODES[::-1])
        for module in MODULES
        if _in(module, mode)
        for target in _project_edges(module)
        if _in(target, other)
    ]
    # THEN claim mode and state mode never meet: each imports only the kernel and itself
    assert crossings == []


def test_the_runtime_kernel_imports_neither_mode() -> None:
    # GIVEN the kernel: every runtime module outside the two modes' packages
    kernel = [m for m in MODULES if _in(m, RUNTIME) and not any(_in(m, mode) for mode in MODES)]
    assert {f"{RUNTIME}.entrypoint", f"{RUNTIME}.job", f"{RUNTIME}.clock"} <= set(kernel)
    # WHEN its module-level imports are read (type-only ones too, except on the package face, which
    # names claim mode's public classes for type checkers and imports them on first use)
    offenders = [
        f"{module} imports {target}"
        for module in kernel
        for target in _project_edges(module, typing=module != RUNTIME)
        if any(_in(target, mode) for mode in MODES)
    ]
    # THEN none is a mode's: the entry point picks one inside build_processor, so it loads only that one
    assert offenders == []


#: What each room of the construct may import of the others: they build on each other in one direction
#: (settings, then the asset's code and the payload bucket, then the resources; observability reads only
#: the settings; the checks read all three; the ways in, ``ingress``, read the settings and the
#: resources' grants), and only the top (``ordered_agent_queue``) assembles them all.
CONSTRUCT_ROOMS: dict[str, set[str]] = {
    "settings": set(),
    "code": {"settings"},
    "payloads": {"settings"},
    "resources": {"settings", "code", "payloads"},
    "observability": {"settings"},
    "checks": {"settings", "code", "resources", "payloads"},
    "ingress": {"settings", "resources"},
}


def _construct_room(module: str) -> str | None:
    parts = module.split(".")
    return parts[2] if len(parts) > 3 and parts[:2] == ["constructs_fifo", "construct"] else None


def test_the_constructs_rooms_import_each_other_in_one_direction() -> None:
    # GIVEN every module in a room of the construct, and the construct modules it imports
    rooms = {_construct_room(module) for module in MODULES} - {None}
    assert rooms == set(CONSTRUCT_ROOMS)
    crossings = [
        f"{module} ({room}) imports {target}"
        for module in MODULES
        if (room := _construct_room(module)) is not None
        for target in _project_edges(module)
        if (other := _construct_room(target)) is not None
        and other != room
        and other not in CONSTRUCT_ROOMS[room]
    ]
    # THEN each room imports only the rooms below it
    assert crossings == []


def test_the_runtime_imports_only_itself_and_the_worker_script_nothing() -> None:
    for module in MODULES:
        if _in(module, RUNTIME):
            outside = {m for m in _project_edges(module) if not _in(m, RUNTIME)}
            assert outside <= {"constructs_fifo"}, module
    worker = "constructs_fifo.local.event_source.worker"
    assert not [target for target, _ in _imports(worker) if target.startswith("constructs_fifo")]


WORKER = "constructs_fifo.worker"


def test_the_worker_is_production_code_on_the_runtime_alone() -> None:
    # GIVEN the container worker's modules (what a container with a plain install runs)
    worker = [m for m in MODULES if _in(m, WORKER)]
    assert f"{WORKER}.heartbeat" in worker
    # WHEN their module-level imports are read (type-only ones too)
    outside = {
        f"{module} imports {target}"
        for module in worker
        for target, _ in _imports(module)
        if target.split(".")[0] in {"constructs_fifo", "aws_cdk", "constructs", "moto"}
        and not (_in(target, WORKER) or _in(target, RUNTIME))
    }
    # THEN they import only the runtime and themselves: never the operator's rooms, the construct or aws_cdk
    assert outside == set()


def test_only_the_emulator_server_and_patches_need_the_local_extra() -> None:
    # GIVEN the modules that import moto, and every module that imports one of them, transitively
    needing = {
        module for module in MODULES if any(target.split(".")[0] == "moto" for target, _ in _imports(module))
    }
    growing = True
    while growing:
        more = {module for module in MODULES if _project_edges(module) & needing} - needing
        needing |= more
        growing = bool(more)
    # THEN they are the emulator's server, its entry point and its patches: nothing a plain install runs
    emulator = "constructs_fifo.local.emulator"
    allowed = {f"{emulator}.server", f"{emulator}.__main__"}
    assert {f"{emulator}.server", f"{emulator}.patches"} <= needing
    assert [m for m in sorted(needing) if m not in allowed and not m.startswith(f"{emulator}.patches")] == []


#: The package's rooms by where their code runs, and the rooms each may import (besides itself): the
#: floors point down. ``runtime`` runs in the function and the container; ``worker`` in the container;
#: ``client`` in a producer; ``construct`` at synth; ``stacks`` (reaching a deployed stack: session,
#: discovery, describe), ``deploy`` (preflight and the CDK CLI) and ``ops`` (operations on a deployed
#: stack) on an operator's machine against AWS or the emulator alike; ``local`` holds only the local
#: stand-ins for AWS services (the emulator, the event source mapping, pipes); ``demo`` drives the sample
#: app; ``cli`` parses and renders.
ROOMS: dict[str, set[str]] = {
    "runtime": set(),
    "worker": {"runtime"},
    "client": {"runtime"},
    "construct": {"runtime"},
    "stacks": {"runtime"},
    "deploy": {"stacks", "runtime"},
    "ops": {"stacks", "client", "runtime"},
    "local": {"stacks", "client", "runtime"},
    "demo": {"stacks", "deploy", "ops", "local", "client", "runtime"},
    "cli": {"stacks", "deploy", "ops", "local", "demo", "client", "worker", "runtime"},
}


def _room(module: str) -> str | None:
    parts = module.split(".")
    return parts[1] if len(parts) > 2 and parts[0] == "constructs_fifo" else None


def test_the_packages_rooms_are_named_by_where_their_code_runs_and_import_downwards() -> None:
    # GIVEN every module in a room of the package (the root's own modules aside), and what it imports
    rooms = {_room(module) for module in MODULES if module.startswith("constructs_fifo.")} - {None}
    assert rooms == set(ROOMS)
    crossings = [
        f"{module} ({room}) imports {target}"
        for module in MODULES
        if (room := _room(module)) is not None
        for target in _project_edges(module)
        if (other := _room(target)) is not None and other != room and other not in ROOMS[room]
    ]
    # THEN each room imports only the floors below it: nothing that talks to a deployed stack lives in
    # local/ (local/ imports the session of stacks/, never ops/ or deploy/), and nothing below the demo
    # or the CLI imports them
    assert crossings == []


def test_no_folder_of_the_package_is_flat_past_the_folder_signal() -> None:
    # GIVEN every module of the package, by folder (a folder's rooms not counted in it)
    folders: dict[Path, int] = {}
    for module, path in MODULES.items():
        if _in(module, "constructs_fifo"):
            folders[path.parent] = folders.get(path.parent, 0) + len(path.read_text().splitlines())
    # THEN no folder's own modules pass the signal: a larger concern gets rooms
    assert {str(f.relative_to(ROOT)): n for f, n in folders.items() if n > MAX_FOLDER_LINES} == {}


#: The house bar of a package's rooms (issue 15): one job per module, rooms before a folder grows flat.
MAX_MODULE_LINES = 500
MAX_FOLDER_LINES = 2_500
#: The packages held to it: the runtime (what ships in the function's asset) and the construct.
SIZED = (RUNTIME, CONSTRUCT)
#: The modules allowed past :data:`MAX_MODULE_LINES`, each one concept: its bound, and why it is one.
LONG_MODULES: dict[str, tuple[int, str]] = {
    "constructs_fifo/runtime/state/outcomes.py": (
        650,
        "a group's results after its run: its dead letters (sent now, or owed by the commit and sent "
        "after it: one protocol on the same letters and sends) and its outcome lines and metrics",
    ),
    "constructs_fifo/runtime/claim/store.py": (
        650,
        "the claim table: every conditional write on one item (claim, renew, complete, fail, release) "
        "fenced on the same owner token, its rules stated once in the module docstring (complete also "
        "writes a large result's pointer, large_payloads; a claim says whether its run shares its process)",
    ),
}


def _lines_by_module(package: str) -> dict[Path, int]:
    """The line count of every module of ``package`` (its rooms included), by path."""
    paths = [path for module, path in MODULES.items() if _in(module, package)]
    return {path: len(path.read_text().splitlines()) for path in paths}


@pytest.mark.parametrize("package", SIZED)
def test_each_package_keeps_its_modules_and_rooms_small(package: str) -> None:
    # GIVEN every module of the package, by folder
    lines = _lines_by_module(package)
    assert lines, package
    # THEN no module passes the line signal, but for the named ones, each within its own bound
    bounds = {path: bound for path, (bound, _) in LONG_MODULES.items()}
    too_long = {
        name: n
        for p, n in lines.items()
        if n > bounds.get(name := str(p.relative_to(ROOT)), MAX_MODULE_LINES)
    }
    assert too_long == {}
    # AND no folder's own modules (its rooms not counted) pass the folder signal
    folders: dict[Path, int] = {}
    for path, count in lines.items():
        folders[path.parent] = folders.get(path.parent, 0) + count
    assert {str(f.relative_to(ROOT)): n for f, n in folders.items() if n > MAX_FOLDER_LINES} == {}


def test_each_long_module_is_past_the_line_signal_and_says_why() -> None:
    # GIVEN the modules allowed past the line signal
    for path, (bound, why) in LONG_MODULES.items():
        count = len((ROOT / path).read_text().splitlines())
        # THEN each exists, needs its exception (it is past the signal) and says why it is one concept
        assert MAX_MODULE_LINES < count <= bound, path
        assert why, path
