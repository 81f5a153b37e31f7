"""A local wheelhouse for bundling tests: wheels written by hand, no network, no build backend.

``tinypure`` (pure Python, ``py3-none-any``), ``tinybin`` (tagged ``cp314-cp314-manylinux2014_x86_64``,
as a binary wheel is; its content is Python so the host can import it too) and ``tinymac`` (macOS only).
"""

from __future__ import annotations

import base64
import hashlib
import zipfile
from pathlib import Path

__all__ = ["make_wheelhouse", "write_wheel"]


def write_wheel(directory: Path, name: str, tag: str, source: str) -> Path:
    """A minimal valid wheel of module ``name`` (``name/__init__.py`` = ``source``) tagged ``tag``."""
    dist_info = f"{name}-1.0.dist-info"
    purelib = "true" if "none-any" in tag else "false"
    files = {
        f"{name}/__init__.py": source.encode(),
        f"{dist_info}/METADATA": f"Metadata-Version: 2.1\nName: {name}\nVersion: 1.0\n".encode(),
        f"{dist_info}/WHEEL": (
            f"Wheel-Version: 1.0\nGenerator: tests\nRoot-Is-Purelib: {purelib}\nTag: {tag}\n"
        ).encode(),
    }
    record = [
        f"{path},sha256={base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b'=').decode()},{len(data)}"
        for path, data in files.items()
    ]
    files[f"{dist_info}/RECORD"] = ("\n".join([*record, f"{dist_info}/RECORD,,"]) + "\n").encode()
    wheel = directory / f"{name}-1.0-{tag}.whl"
    with zipfile.ZipFile(wheel, "w") as archive:
        for path, data in files.items():
            archive.writestr(path, data)
    return wheel


def make_wheelhouse(directory: Path) -> Path:
    """The three wheels of this module's docstring, in ``directory``."""
    directory.mkdir(parents=True, exist_ok=True)
    write_wheel(directory, "tinypure", "py3-none-any", "KIND = 'pure'\n")
    write_wheel(directory, "tinybin", "cp314-cp314-manylinux2014_x86_64", "KIND = 'binary'\n")
    write_wheel(directory, "tinymac", "cp314-cp314-macosx_11_0_arm64", "KIND = 'mac'\n")
    return directory
