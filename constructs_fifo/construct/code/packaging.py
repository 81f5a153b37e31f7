"""Build the function's asset: the user's job code, its bundled dependencies and the constructs-fifo runtime.

The runtime is copied from the *installed* ``constructs_fifo`` package (paths come from this module's
``__file__``, never the current directory), so a pip-installed construct needs no extra step. Only the
Lambda side is copied: ``constructs_fifo/__init__.py``, ``constructs_fifo/py.typed`` and
``constructs_fifo/runtime/**``; the CDK side (``constructs_fifo/construct``) stays out of the asset.

The staged directory holds, at its root, the installed dependencies
(:mod:`constructs_fifo.construct.code.bundling`), then the user's files (less ``exclude``; they win over a
dependency of the same name), then ``constructs_fifo/`` (it wins over both). Lambda puts the root on
``sys.path``, and so does the local drain, which runs the extracted asset.

A process stages a directory once: :func:`staged_asset` keeps the staging directory of each user
directory, keyed on the path, size and modification time of every file staged from it and from the
runtime (the key CDK's own fingerprint cache uses), and stages again when any of them changes. Every
queue of an app built from the same job code then shares one directory, and CDK, which fingerprints
an asset by its source path, hashes it once.
"""

from __future__ import annotations

import atexit
import fnmatch
import os
import shutil
import tempfile
from collections.abc import Callable, Sequence
from pathlib import Path

from aws_cdk import BundlingOptions
from aws_cdk import aws_lambda as lambda_

__all__ = [
    "RUNTIME_FILES",
    "build_function_code",
    "excluded",
    "package_root",
    "stage_asset",
    "staged_asset",
]

#: Files and directories of the installed package copied into every function asset.
RUNTIME_FILES = ("__init__.py", "py.typed", "runtime")

_IGNORED_NAMES = ("__pycache__", "*.pyc", "*.pyo", ".DS_Store")
_IGNORE = shutil.ignore_patterns(*_IGNORED_NAMES)
_STAGING_PREFIX = "constructs-fifo-asset-"


def package_root() -> Path:
    """The directory of the installed ``constructs_fifo`` package."""
    return Path(__file__).resolve().parents[2]


def _remove_later(path: Path) -> None:
    atexit.register(shutil.rmtree, path, ignore_errors=True)


def excluded(relative: str, patterns: Sequence[str]) -> bool:
    """Whether ``relative`` (a POSIX path inside the code directory) is left out by ``patterns``.

    CDK's ``IgnoreMode.GLOB``, as used by ``Code.from_asset(exclude=...)``: patterns apply in order
    and the last that matches decides; ``!pattern`` takes a path back in; a pattern without ``/``
    matches the path's last name (so a directory at any depth).
    """
    name = relative.rsplit("/", 1)[-1]
    verdict = False
    for pattern in patterns:
        negated = pattern.startswith("!")
        glob = pattern[1:] if negated else pattern
        glob = glob.strip("/")
        target = relative if "/" in glob else name
        if fnmatch.fnmatchcase(target, glob):
            verdict = not negated
    return verdict


def _ignore_for(user_dir: Path, exclude: Sequence[str]) -> Callable[[str, list[str]], set[str]]:
    def ignore(directory: str, names: list[str]) -> set[str]:
        ignored = set(_IGNORE(directory, names))
        if exclude:
            base = Path(directory).relative_to(user_dir).as_posix()
            prefix = "" if base == "." else f"{base}/"
            ignored |= {n for n in names if excluded(prefix + n, exclude)}
        return ignored

    return ignore


def stage_asset(
    user_dir: Path,
    *,
    staging_dir: Path | None = None,
    exclude: Sequence[str] = (),
    dependencies_dir: Path | None = None,
) -> Path:
    """Copy the dependencies, ``user_dir`` (less ``exclude``) and the runtime into a staging directory.

    Parameters
    ----------
    user_dir
        The user's asset directory (already checked by
        :func:`constructs_fifo.construct.checks.function_props.check_code`).
    staging_dir
        Where to build; a new temporary directory (removed when the process exits) by default.
    exclude
        Glob patterns of the user's files to leave out (:func:`excluded`).
    dependencies_dir
        Installed third-party packages to put at the asset's root, if any.

    Returns
    -------
    Path
        The staging directory: the user's files at its root and ``constructs_fifo/`` next to them.
        Its content, and so the asset hash, depends only on the sources.
    """
    if staging_dir is None:
        staging_dir = Path(tempfile.mkdtemp(prefix=_STAGING_PREFIX))
        _remove_later(staging_dir)
    if dependencies_dir is not None:
        shutil.copytree(dependencies_dir, staging_dir, ignore=_IGNORE, dirs_exist_ok=True)
    shutil.copytree(user_dir, staging_dir, ignore=_ignore_for(user_dir, exclude), dirs_exist_ok=True)
    source = package_root()
    target = staging_dir / source.name
    shutil.rmtree(target, ignore_errors=True)  # a dependency's own constructs_fifo never shadows ours
    target.mkdir()
    for name in RUNTIME_FILES:
        item = source / name
        if item.is_dir():
            shutil.copytree(item, target / name, ignore=_IGNORE)
        elif item.exists():
            shutil.copy2(item, target / name)
    return staging_dir


def _ignored(name: str) -> bool:
    return any(fnmatch.fnmatch(name, pattern) for pattern in _IGNORED_NAMES)


def _sources(user_dir: Path) -> tuple[tuple[str, int, int], ...]:
    """Path, size and modification time (ns) of every file :func:`stage_asset` copies."""
    roots = [user_dir]
    source = package_root()
    roots += [source / name for name in RUNTIME_FILES]
    found: list[tuple[str, int, int]] = []
    for root in roots:
        if root.is_file():
            stat = root.stat()
            found.append((str(root), stat.st_size, stat.st_mtime_ns))
            continue
        for directory, subdirectories, files in os.walk(root, followlinks=True):  # as copytree copies
            subdirectories[:] = sorted(d for d in subdirectories if not _ignored(d))
            for name in sorted(files):
                if not _ignored(name):
                    path = os.path.join(directory, name)
                    stat = os.stat(path)
                    found.append((path, stat.st_size, stat.st_mtime_ns))
    return tuple(found)


#: Per user directory, exclude patterns and dependencies directory: what it was staged from, and where.
_STAGED: dict[tuple[Path, tuple[str, ...], Path | None], tuple[tuple[tuple[str, int, int], ...], Path]] = {}


def staged_asset(
    user_dir: Path, *, exclude: Sequence[str] = (), dependencies_dir: Path | None = None
) -> Path:
    """:func:`stage_asset` into a temporary directory, once per process while no source file changes
    (see the module docstring; a dependencies directory is a cache entry, which never changes)."""
    user_dir = user_dir.resolve()
    key = (user_dir, tuple(exclude), dependencies_dir)
    sources = _sources(user_dir)
    known = _STAGED.get(key)
    if known is not None and known[0] == sources and known[1].is_dir():
        return known[1]
    staged = stage_asset(user_dir, exclude=exclude, dependencies_dir=dependencies_dir)
    _STAGED[key] = (sources, staged)
    return staged


def build_function_code(
    user_dir: Path,
    *,
    exclude: Sequence[str] = (),
    dependencies_dir: Path | None = None,
    docker: BundlingOptions | None = None,
) -> lambda_.Code:
    """The function's code: ``user_dir`` plus its dependencies and the runtime, as a directory asset.

    Parameters
    ----------
    user_dir
        The directory of the user's asset (``lambda_.Code.from_asset(directory)``).
    exclude
        Glob patterns of the user's files to leave out.
    dependencies_dir
        Installed dependencies to add at the root
        (:func:`~constructs_fifo.construct.code.bundling.bundle_dependencies`).
    docker
        The user's Docker bundling, run by CDK over the staged directory.

    Returns
    -------
    lambda_.Code
        An asset of the staging directory of :func:`staged_asset`.
    """
    staged = staged_asset(user_dir, exclude=exclude, dependencies_dir=dependencies_dir)
    return lambda_.Code.from_asset(str(staged), bundling=docker)
