"""stage_asset: the user's directory plus the runtime, and nothing else; staged_asset: once per process."""

from __future__ import annotations

import shutil
from pathlib import Path

from constructs_fifo.construct.code.packaging import package_root, stage_asset, staged_asset


def _files(root: Path) -> set[str]:
    return {str(p.relative_to(root)) for p in root.rglob("*") if p.is_file()}


def test_stage_asset_copies_user_code_and_runtime_only(tmp_path: Path) -> None:
    # GIVEN a user directory with a module, a package, and some bytecode
    user = tmp_path / "user"
    (user / "pkg" / "__pycache__").mkdir(parents=True)
    (user / "worker.py").write_text("def handle(job, context):\n    pass\n")
    (user / "pkg" / "__init__.py").write_text("")
    (user / "pkg" / "__pycache__" / "x.cpython-311.pyc").write_bytes(b"\x00")
    # WHEN staging it
    staged = stage_asset(user, staging_dir=tmp_path / "staged")
    files = _files(staged)
    # THEN the user's sources and the runtime are there, bytecode and the CDK side are not
    assert {"worker.py", "pkg/__init__.py"} <= files
    assert {"constructs_fifo/__init__.py", "constructs_fifo/py.typed"} <= files
    expected_runtime = {
        f"constructs_fifo/runtime/{p.relative_to(package_root() / 'runtime')}"
        for p in (package_root() / "runtime").rglob("*.py")
        if "__pycache__" not in p.parts
    }
    assert "constructs_fifo/runtime/entrypoint.py" in expected_runtime
    assert {f"constructs_fifo/runtime/{mode}/processor.py" for mode in ("claim", "state")} <= files
    assert expected_runtime <= files
    assert not any("__pycache__" in f or f.endswith(".pyc") for f in files)
    assert not any(f.startswith("constructs_fifo/construct") for f in files)
    assert not any(
        f.startswith("constructs_fifo/cli") or f.startswith("constructs_fifo/local") for f in files
    )


def test_stage_asset_is_deterministic(tmp_path: Path) -> None:
    # GIVEN one user directory
    user = tmp_path / "user"
    user.mkdir()
    (user / "worker.py").write_text("x = 1\n")
    # WHEN staging it twice into fresh temporary directories
    first, second = stage_asset(user), stage_asset(user)
    # THEN both hold the same files with the same bytes, and neither is the user's directory
    assert first != second
    assert _files(first) == _files(second)
    for name in _files(first):
        assert (first / name).read_bytes() == (second / name).read_bytes()
    assert not (user / "constructs_fifo").exists()


def test_package_root_is_the_installed_package() -> None:
    # GIVEN the installed package WHEN asking for its root THEN it holds the runtime's constants
    assert (package_root() / "runtime" / "constants.py").is_file()
    assert package_root().name == "constructs_fifo"


def test_staged_asset_stages_a_directory_once_while_its_files_are_unchanged(tmp_path: Path) -> None:
    # GIVEN one user directory
    user = tmp_path / "user"
    user.mkdir()
    (user / "worker.py").write_text("x = 1\n")
    # WHEN two queues of one app ask for its asset
    first, second = staged_asset(user), staged_asset(user)
    # THEN they share one staging directory holding the user's code and the runtime
    assert first == second
    assert (first / "worker.py").read_text() == "x = 1\n"
    assert (first / "constructs_fifo" / "runtime" / "entrypoint.py").is_file()


def test_staged_asset_stages_again_when_a_file_changes(tmp_path: Path) -> None:
    # GIVEN a staged user directory
    user = tmp_path / "user"
    user.mkdir()
    (user / "worker.py").write_text("x = 1\n")
    first = staged_asset(user)
    # WHEN a file changes, and a file is added
    (user / "worker.py").write_text("x = 22\n")
    (user / "helper.py").write_text("")
    second = staged_asset(user)
    # THEN the new staging directory holds the new files, the old one is left as it was
    assert second != first
    assert (second / "worker.py").read_text() == "x = 22\n"
    assert (second / "helper.py").is_file()
    assert (first / "worker.py").read_text() == "x = 1\n"


def test_staged_asset_stages_again_when_its_directory_is_gone(tmp_path: Path) -> None:
    # GIVEN a staged user directory whose staging directory was removed
    user = tmp_path / "user"
    user.mkdir()
    (user / "worker.py").write_text("x = 1\n")
    shutil.rmtree(staged_asset(user))
    # WHEN asking for it again THEN it is staged anew
    assert (staged_asset(user) / "worker.py").read_text() == "x = 1\n"
