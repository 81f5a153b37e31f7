"""Build the function's asset: the user's job code plus the constructs-fifo runtime.

The runtime is copied from the *installed* ``constructs_fifo`` package (paths come from this module's
``__file__``, never the current directory), so a pip-installed construct needs no extra step. Only the
Lambda side is copied: ``constructs_fifo/__init__.py``, ``constructs_fifo/py.typed`` and
``constructs_fifo/runtime/**``; the CDK side (``constructs_fifo/construct``) stays out of the asset.
"""

from __future__ import annotations

import atexit
import shutil
import tempfile
from pathlib import Path

from aws_cdk import aws_lambda as lambda_

__all__ = ["RUNTIME_FILES", "build_function_code", "package_root", "stage_asset"]

#: Files and directories of the installed package copied into every function asset.
RUNTIME_FILES = ("__init__.py", "py.typed", "runtime")

_IGNORE = shutil.ignore_patterns("__pycache__", "*.pyc", "*.pyo", ".DS_Store")
_STAGING_PREFIX = "constructs-fifo-asset-"


def package_root() -> Path:
    """The directory of the installed ``constructs_fifo`` package."""
    return Path(__file__).resolve().parent.parent


def _remove_later(path: Path) -> None:
    atexit.register(shutil.rmtree, path, ignore_errors=True)


def stage_asset(user_dir: Path, *, staging_dir: Path | None = None) -> Path:
    """Copy ``user_dir`` and the runtime package into a fresh staging directory.

    Parameters
    ----------
    user_dir
        The user's asset directory (already checked by
        :func:`constructs_fifo.construct.validation.check_code`).
    staging_dir
        Where to build; a new temporary directory (removed when the process exits) by default.

    Returns
    -------
    Path
        The staging directory: the user's files at its root and ``constructs_fifo/`` next to them.
        Its content, and so the asset hash, depends only on the two sources.
    """
    if staging_dir is None:
        staging_dir = Path(tempfile.mkdtemp(prefix=_STAGING_PREFIX))
        _remove_later(staging_dir)
    shutil.copytree(user_dir, staging_dir, ignore=_IGNORE, dirs_exist_ok=True)
    source = package_root()
    target = staging_dir / source.name
    target.mkdir()
    for name in RUNTIME_FILES:
        item = source / name
        if item.is_dir():
            shutil.copytree(item, target / name, ignore=_IGNORE)
        elif item.exists():
            shutil.copy2(item, target / name)
    return staging_dir


def build_function_code(code: lambda_.AssetCode) -> lambda_.Code:
    """The function's code: ``code``'s directory plus the runtime, as a new directory asset.

    Parameters
    ----------
    code
        A directory asset (``lambda_.Code.from_asset(directory)``).

    Returns
    -------
    lambda_.Code
        An asset of the staging directory built by :func:`stage_asset`.
    """
    return lambda_.Code.from_asset(str(stage_asset(Path(code.path))))
