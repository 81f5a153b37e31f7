"""Bundle the job code's third-party dependencies into its asset, without Docker.

Rules:

- **What is installed**: the ``requirements`` of :class:`CodeBundling` when given, else the job code
  directory's ``requirements.txt``, else the ``[project] dependencies`` of its ``pyproject.toml``;
  none of them: nothing is installed (the asset is what it was).
- **For which machine**: wheels only (``--only-binary=:all:``), CPython of the function's runtime
  (``--python-version 3.14 --implementation cp``) and Linux of its architecture
  (:data:`~constructs_fifo.construct.settings.defaults.WHEEL_PLATFORMS`: ``manylinux2014_x86_64`` and the
  newer manylinux tags Amazon Linux 2023 runs, or their ``aarch64`` twins for arm64). Nothing is
  built on this machine, so nothing built for it can reach the function.
- **With what**: ``uv pip install`` when ``uv`` is on ``PATH`` (or beside this Python), else
  ``python -m pip install``; both ``--target`` a fresh directory. The index options are the user's
  (:class:`CodeBundling`), and pip's and uv's own configuration (``PIP_INDEX_URL``,
  ``UV_INDEX_URL``, config files) applies as usual.
- **Cached by the lock's hash**: the installed tree lives in
  ``<cache>/dependencies/<sha256 of requirements, runtime, platforms and index options>``, written
  once (installed into a temporary sibling, then renamed); a synth whose dependencies did not change
  installs nothing, and the asset, whose hash depends only on its content, is staged by CDK once.
  Pin versions (a lock) for reproducible assets: a requirement without a version is resolved once
  per cache entry. ``<cache>`` is :attr:`CodeBundling.cache_dir`, else ``$CONSTRUCTS_FIFO_CACHE_DIR``,
  else ``$XDG_CACHE_HOME/constructs-fifo``, else ``~/.cache/constructs-fifo``.
- **No wheel for the platform** fails synth with :class:`DependencyBundlingError` naming the package,
  the platform and the fixes: vendor it, a layer, or Docker bundling (:attr:`CodeBundling.docker`,
  which the construct passes to CDK as the asset's ``bundling``; it then installs nothing itself).
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import tomllib
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from aws_cdk import BundlingOptions

from constructs_fifo.construct.errors import DependencyBundlingError
from constructs_fifo.construct.settings import defaults

__all__ = [
    "CACHE_DIR_ENV",
    "DEPENDENCY_FILES",
    "CodeBundling",
    "DependencyBundlingError",
    "Installer",
    "bundle_dependencies",
    "find_installer",
    "read_requirements",
]

#: Files of the job code directory that declare its dependencies, in the order they are looked for.
DEPENDENCY_FILES = ("requirements.txt", "pyproject.toml")
#: Environment variable naming the cache directory.
CACHE_DIR_ENV = "CONSTRUCTS_FIFO_CACHE_DIR"
#: How long one install may take before synth gives up, in seconds.
INSTALL_TIMEOUT_SECONDS = 600
#: uv's ``--python-platform`` per architecture: every manylinux tag up to glibc 2.34 (Amazon Linux 2023).
_UV_PLATFORMS = {"x86_64": "x86_64-manylinux_2_34", "arm64": "aarch64-manylinux_2_34"}


@dataclass(frozen=True)
class CodeBundling:
    """How the construct builds the job code's asset (the ``bundling`` prop).

    Parameters
    ----------
    exclude
        Glob patterns of job code files to leave out of the asset, as ``Code.from_asset(exclude=...)``
        (CDK's ``IgnoreMode.GLOB``): a pattern without ``/`` matches a name at any depth, a matched
        directory is left out whole, ``!pattern`` takes a path back in. (jsii keeps the options of a
        ``Code.from_asset`` private, so the construct cannot read them there: pass them here.)
    requirements
        Requirement lines (``["httpx==0.28.1"]``); default: the code directory's ``requirements.txt``
        or ``pyproject.toml``. ``[]`` installs nothing even when such a file exists.
    index_url, extra_index_urls, find_links, no_index
        Passed to the installer (``--index-url`` ...); default its own configuration (PyPI).
    cache_dir
        Where installed dependencies are kept between synths (see the module docstring).
    docker
        CDK ``BundlingOptions`` for Docker bundling, run over the staged directory (your files and
        ``constructs_fifo/``); the construct then installs nothing itself.
    """

    exclude: Sequence[str] = ()
    requirements: Sequence[str] | None = None
    index_url: str | None = None
    extra_index_urls: Sequence[str] = ()
    find_links: Sequence[str] = ()
    no_index: bool = False
    cache_dir: str | None = None
    docker: BundlingOptions | None = field(default=None, compare=False)


@dataclass(frozen=True)
class Installer:
    """The command that installs wheels: ``uv pip install`` or ``python -m pip install``."""

    name: str
    command: tuple[str, ...]


def find_installer() -> Installer:
    """uv when it is on ``PATH`` or beside this Python, else this Python's pip.

    Raises
    ------
    DependencyBundlingError
        Neither is available.
    """
    beside = Path(sys.executable).with_name("uv")
    uv = shutil.which("uv") or (str(beside) if beside.is_file() else None)
    if uv is not None:
        return Installer("uv", (uv, "pip", "install"))
    probe = subprocess.run(
        [sys.executable, "-m", "pip", "--version"], capture_output=True, text=True, check=False
    )
    if probe.returncode == 0:
        return Installer("pip", (sys.executable, "-m", "pip", "install"))
    raise DependencyBundlingError(
        "the job code declares dependencies but neither uv nor pip is available to install them: "
        f"{sys.executable} has no pip and no uv is on PATH; install one (pip install uv), or vendor "
        "the packages into the code directory and remove the requirements."
    )


def read_requirements(code_dir: Path, bundling: CodeBundling) -> tuple[list[str], str] | None:
    """The requirement lines to install and where they come from, or None when there are none."""
    if bundling.requirements is not None:
        lines = [line.strip() for line in bundling.requirements if line.strip()]
        return (lines, "the bundling prop's requirements") if lines else None
    requirements = code_dir / DEPENDENCY_FILES[0]
    if requirements.is_file():
        lines = [
            line.strip()
            for line in requirements.read_text().splitlines()
            if line.strip() and not line.strip().startswith("#")
        ]
        return (lines, str(requirements)) if lines else None
    pyproject = code_dir / DEPENDENCY_FILES[1]
    if pyproject.is_file():
        declared = tomllib.loads(pyproject.read_text()).get("project", {}).get("dependencies", [])
        lines = [str(line).strip() for line in declared if str(line).strip()]
        return (lines, f"{pyproject} [project] dependencies") if lines else None
    return None


def _python_version() -> str:
    """``3.14`` for ``python3.14``: the function runtime's Python version."""
    return defaults.FUNCTION_RUNTIME.name.removeprefix("python")


def _index_options(bundling: CodeBundling) -> list[str]:
    options: list[str] = []
    if bundling.index_url is not None:
        options += ["--index-url", bundling.index_url]
    for url in bundling.extra_index_urls:
        options += ["--extra-index-url", url]
    for link in bundling.find_links:
        options += ["--find-links", link]
    if bundling.no_index:
        options.append("--no-index")
    return options


def _install_command(installer: Installer, architecture: str, target: Path, requirements: Path) -> list[str]:
    version = _python_version()
    if installer.name == "uv":
        platform = ["--python-platform", _UV_PLATFORMS[architecture], "--python", sys.executable]
        binary = ["--only-binary", ":all:"]
    else:
        platform = [arg for tag in defaults.WHEEL_PLATFORMS[architecture] for arg in ("--platform", tag)]
        platform += ["--implementation", "cp", "--no-compile", "--disable-pip-version-check"]
        binary = ["--only-binary=:all:"]
    return [
        *installer.command,
        "--target",
        str(target),
        "--python-version",
        version,
        *platform,
        *binary,
        "-r",
        str(requirements),
    ]


def _cache_root(bundling: CodeBundling) -> Path:
    if bundling.cache_dir is not None:
        return Path(bundling.cache_dir)
    if os.environ.get(CACHE_DIR_ENV):
        return Path(os.environ[CACHE_DIR_ENV])
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "constructs-fifo"


def _lock_hash(lines: Sequence[str], architecture: str, bundling: CodeBundling, installer: Installer) -> str:
    lock = {
        "requirements": list(lines),
        "python": _python_version(),
        "platforms": list(defaults.WHEEL_PLATFORMS[architecture]),
        "index": _index_options(bundling),
        "installer": installer.name,
    }
    return hashlib.sha256(json.dumps(lock, sort_keys=True).encode()).hexdigest()


#: "No matching distribution found for X" (pip); "Because X was not found ..." / "Because X==1 has no
#: wheels with a matching platform tag" / "Because only X<=1 is available" (uv).
_MISSING = (
    re.compile(r"No matching distribution found for (\S+)"),
    re.compile(r"Because (?:only |all versions of |there is no version of )?([A-Za-z0-9][\w.\-\[\]=<>!~,]*)"),
)


def _missing_package(output: str) -> str | None:
    for pattern in _MISSING:
        found = pattern.search(output)
        if found:
            return found.group(1).rstrip(".,")
    return None


def _failure(output: str, source: str, architecture: str, installer: Installer) -> DependencyBundlingError:
    package = _missing_package(output)
    platform = (
        f"CPython {_python_version()} on Linux {architecture} "
        f"({', '.join(defaults.WHEEL_PLATFORMS[architecture])}; wheels only)"
    )
    what = f"no wheel of {package!r} for" if package else "the dependencies could not be installed for"
    tail = "\n".join(output.strip().splitlines()[-6:])
    return DependencyBundlingError(
        f"dependencies of the job code ({source}) could not be bundled: {what} {platform}. Fix: pin "
        "a version that publishes such a wheel; or vendor the package into the code directory (built "
        "for that platform) and remove it from the requirements; or put it in a layer (layers=...); "
        "or bundle with Docker: bundling=CodeBundling(docker=BundlingOptions(...)). "
        f"{installer.name} said:\n{tail}"
    )


def bundle_dependencies(
    code_dir: Path, *, architecture: str, bundling: CodeBundling, installer: Installer | None = None
) -> Path | None:
    """Install the job code's dependencies for the function's platform, once per lock hash.

    Parameters
    ----------
    code_dir
        The job code directory (its ``requirements.txt`` or ``pyproject.toml`` is read).
    architecture
        ``lambda_.Architecture.name``: ``x86_64`` or ``arm64``.
    bundling
        The user's options.
    installer
        Default :func:`find_installer` (tests pass pip or uv explicitly).

    Returns
    -------
    Path or None
        The cached directory holding the installed packages (to copy at the asset's root), or None
        when nothing is declared or Docker bundling was asked for.

    Raises
    ------
    DependencyBundlingError
        A dependency has no wheel for the platform, or the installer failed or is missing.
    """
    if bundling.docker is not None:
        return None
    declared = read_requirements(code_dir, bundling)
    if declared is None:
        return None
    lines, source = declared
    installer = installer or find_installer()
    cached = _cache_root(bundling) / "dependencies" / _lock_hash(lines, architecture, bundling, installer)
    if cached.is_dir():
        return cached
    cached.parent.mkdir(parents=True, exist_ok=True)
    work = Path(tempfile.mkdtemp(prefix=f".{cached.name[:12]}-", dir=cached.parent))
    try:
        requirements = work / "requirements.txt"
        requirements.write_text("\n".join(lines) + "\n")
        target = work / "site"
        command = [
            *_install_command(installer, architecture, target, requirements),
            *_index_options(bundling),
        ]
        try:
            result = subprocess.run(
                command, capture_output=True, text=True, timeout=INSTALL_TIMEOUT_SECONDS, check=False
            )
        except subprocess.TimeoutExpired as error:
            raise DependencyBundlingError(
                f"dependencies of the job code ({source}) were still installing after "
                f"{INSTALL_TIMEOUT_SECONDS} s ({installer.name}); check that the index is reachable "
                "(index_url, find_links), or vendor the packages into the code directory."
            ) from error
        if result.returncode != 0:
            raise _failure(result.stdout + result.stderr, source, architecture, installer)
        target.mkdir(exist_ok=True)
        try:
            target.rename(cached)
        except OSError:  # another synth cached the same lock first: keep its tree
            if not cached.is_dir():
                raise
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return cached
