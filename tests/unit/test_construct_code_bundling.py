"""bundle_dependencies: wheels for the function's platform, cached by the lock's hash, the fix on failure.

No network: every install reads a local wheelhouse (``--no-index --find-links``) of wheels this module
writes: ``tinypure`` (pure Python, ``py3-none-any``), ``tinybin`` (tagged ``cp314-cp314-
manylinux2014_x86_64``, as a binary wheel is) and ``tinymac`` (macOS only).
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from aws_cdk import App, BundlingOptions, DockerImage, Stack
from aws_cdk import aws_lambda as lambda_
from aws_cdk.assertions import Template

from constructs_fifo import OrderedAgentQueue
from constructs_fifo.construct.code.bundling import (
    CodeBundling,
    DependencyBundlingError,
    Installer,
    bundle_dependencies,
    read_requirements,
)
from constructs_fifo.construct.code.packaging import excluded

from .wheelhouse import make_wheelhouse

UV = Path(sys.executable).with_name("uv")  # pinned in the development venv (Makefile)
PIP = Installer("pip", (sys.executable, "-m", "pip", "install"))
UV_INSTALLER = Installer("uv", (str(UV), "pip", "install"))
INSTALLERS = [pytest.param(PIP, id="pip"), pytest.param(UV_INSTALLER, id="uv")]


@pytest.fixture(scope="module")
def wheelhouse(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return make_wheelhouse(tmp_path_factory.mktemp("wheelhouse"))


def _offline(wheelhouse: Path, cache: Path, **options: object) -> CodeBundling:
    return CodeBundling(find_links=[str(wheelhouse)], no_index=True, cache_dir=str(cache), **options)  # type: ignore[arg-type]


def _code(tmp_path: Path, requirements: str) -> Path:
    code = tmp_path / "code"
    code.mkdir()
    (code / "worker.py").write_text("import tinypure, tinybin\n")
    (code / "requirements.txt").write_text(requirements)
    return code


@pytest.mark.parametrize("installer", INSTALLERS)
def test_a_pure_and_a_manylinux_wheel_install_for_x86_64(
    tmp_path: Path, wheelhouse: Path, installer: Installer
) -> None:
    # GIVEN job code whose requirements.txt names a pure-Python and a manylinux x86_64 package
    code = _code(tmp_path, "# the job's dependencies\ntinypure==1.0\ntinybin==1.0\n")
    # WHEN bundling them for x86_64 from the local wheelhouse
    installed = bundle_dependencies(
        code, architecture="x86_64", bundling=_offline(wheelhouse, tmp_path / "cache"), installer=installer
    )
    # THEN both packages are in the cached tree, in the cache directory
    assert installed is not None
    assert installed.is_relative_to(tmp_path / "cache")
    assert (installed / "tinypure" / "__init__.py").read_text() == "KIND = 'pure'\n"
    assert (installed / "tinybin" / "__init__.py").read_text() == "KIND = 'binary'\n"
    assert not list(installed.rglob("*.pyc"))


@pytest.mark.parametrize("installer", INSTALLERS)
def test_a_package_without_a_wheel_for_the_platform_fails_naming_it_the_platform_and_the_fix(
    tmp_path: Path, wheelhouse: Path, installer: Installer
) -> None:
    # GIVEN job code needing tinybin, whose only wheel is for x86_64
    code = _code(tmp_path, "tinypure==1.0\ntinybin==1.0\n")
    # WHEN bundling for arm64
    with pytest.raises(DependencyBundlingError) as raised:
        bundle_dependencies(
            code, architecture="arm64", bundling=_offline(wheelhouse, tmp_path / "cache"), installer=installer
        )
    # THEN the error names the package, the platform and every fix, and nothing is cached
    message = str(raised.value)
    assert "no wheel of 'tinybin" in message
    assert "CPython 3.14 on Linux arm64 (manylinux2014_aarch64" in message
    for fix in ("vendor the package", "layer (layers=...)", "bundling=CodeBundling(docker=BundlingOptions"):
        assert fix in message
    assert not [p for p in (tmp_path / "cache" / "dependencies").iterdir() if not p.name.startswith(".")]


def test_a_source_only_or_foreign_platform_package_is_refused_for_x86_64_too(
    tmp_path: Path, wheelhouse: Path
) -> None:
    # GIVEN job code needing a package with a macOS wheel only WHEN bundling for x86_64 THEN it fails
    code = _code(tmp_path, "tinymac==1.0\n")
    with pytest.raises(DependencyBundlingError, match=r"no wheel of 'tinymac"):
        bundle_dependencies(
            code,
            architecture="x86_64",
            bundling=_offline(wheelhouse, tmp_path / "cache"),
            installer=UV_INSTALLER,
        )


def test_unchanged_dependencies_are_not_installed_again(tmp_path: Path) -> None:
    # GIVEN dependencies bundled once from a wheelhouse
    house = make_wheelhouse(tmp_path / "house")
    code = _code(tmp_path, "tinypure==1.0\n")
    bundling = _offline(house, tmp_path / "cache")
    first = bundle_dependencies(code, architecture="x86_64", bundling=bundling, installer=UV_INSTALLER)
    # WHEN the wheelhouse is gone (an install would now fail) and the same lock is bundled again
    for wheel in house.iterdir():
        wheel.unlink()
    second = bundle_dependencies(code, architecture="x86_64", bundling=bundling, installer=UV_INSTALLER)
    # THEN the cached tree is returned as it was
    assert second == first
    assert second is not None and (second / "tinypure" / "__init__.py").is_file()
    # AND a changed lock is installed anew (and fails here: nothing left to install from)
    (code / "requirements.txt").write_text("tinypure==1.0\ntinybin==1.0\n")
    with pytest.raises(DependencyBundlingError):
        bundle_dependencies(code, architecture="x86_64", bundling=bundling, installer=UV_INSTALLER)


def test_requirements_come_from_the_prop_then_requirements_txt_then_pyproject(tmp_path: Path) -> None:
    # GIVEN a code directory with a pyproject.toml declaring dependencies
    code = tmp_path / "code"
    code.mkdir()
    (code / "pyproject.toml").write_text('[project]\nname = "jobs"\ndependencies = ["tinypure==1.0"]\n')
    # THEN its dependencies are read
    assert read_requirements(code, CodeBundling()) == (
        ["tinypure==1.0"],
        f"{code}/pyproject.toml [project] dependencies",
    )
    # WHEN a requirements.txt appears THEN it wins
    (code / "requirements.txt").write_text("tinybin==1.0\n")
    assert read_requirements(code, CodeBundling()) == (["tinybin==1.0"], str(code / "requirements.txt"))
    # WHEN the prop names requirements THEN they win; an empty list installs nothing
    assert read_requirements(code, CodeBundling(requirements=["x==1"])) == (
        ["x==1"],
        "the bundling prop's requirements",
    )
    assert read_requirements(code, CodeBundling(requirements=[])) is None


def test_docker_bundling_installs_nothing_itself(tmp_path: Path) -> None:
    # GIVEN requirements and Docker bundling WHEN bundling THEN the construct leaves it to Docker
    code = _code(tmp_path, "tinypure==1.0\n")
    docker = BundlingOptions(image=DockerImage.from_registry("python:3.14"), command=["true"])
    assert bundle_dependencies(code, architecture="x86_64", bundling=CodeBundling(docker=docker)) is None


def test_no_declared_dependencies_installs_nothing(tmp_path: Path) -> None:
    # GIVEN a code directory without requirements WHEN bundling THEN nothing is installed
    code = tmp_path / "code"
    code.mkdir()
    assert bundle_dependencies(code, architecture="x86_64", bundling=CodeBundling()) is None


@pytest.mark.parametrize(
    ("path", "patterns", "expected"),
    [
        ("tests", ["tests"], True),
        ("pkg/tests", ["tests"], True),
        ("notes.md", ["*.md"], True),
        ("docs/notes.md", ["*.md"], True),
        ("README.md", ["*.md", "!README.md"], False),
        ("pkg/worker.py", ["pkg/*.txt"], False),
        ("pkg/data.txt", ["pkg/*.txt"], True),
        ("worker.py", [], False),
    ],
)
def test_exclude_follows_cdk_glob_patterns(path: str, patterns: list[str], expected: bool) -> None:
    # GIVEN a path in the code directory and exclude patterns WHEN checked THEN CDK's GLOB rules decide
    assert excluded(path, patterns) is expected


def test_the_construct_bundles_the_dependencies_into_the_asset_honouring_exclude(tmp_path: Path) -> None:
    # GIVEN job code importing a pure and a binary-wheel dependency, with tests and notes to leave out
    house = make_wheelhouse(tmp_path / "house")
    code = _code(tmp_path, "tinypure==1.0\ntinybin==1.0\n")
    (code / "worker.py").write_text(
        "import tinybin\nimport tinypure\n\n\ndef handle(job, context):\n"
        "    return tinypure.KIND + tinybin.KIND\n"
    )
    (code / "tests").mkdir()
    (code / "tests" / "test_worker.py").write_text("")
    (code / "NOTES.md").write_text("")
    app = App(outdir=str(tmp_path / "out"))
    stack = Stack(app, "S")
    # WHEN the construct is built with them and the app synthesizes
    OrderedAgentQueue(
        stack,
        "Jobs",
        code=lambda_.Code.from_asset(str(code)),
        handler="worker.handle",
        bundling=_offline(house, tmp_path / "cache", exclude=["tests", "*.md"]),
    )
    app.synth()
    [function] = Template.from_stack(stack).find_resources("AWS::Lambda::Function").values()
    asset = tmp_path / "out" / f"asset.{function['Properties']['Code']['S3Key'].removesuffix('.zip')}"
    # THEN the asset holds the job code, both dependencies and the runtime, and nothing excluded
    for name in (
        "worker.py",
        "tinypure/__init__.py",
        "tinybin/__init__.py",
        "constructs_fifo/runtime/entrypoint.py",
    ):
        assert (asset / name).is_file(), name
    assert not (asset / "tests").exists()
    assert not (asset / "NOTES.md").exists()
    # AND the job module runs from the asset alone, finding its dependencies at its root (as Lambda and
    # the local drain put it on sys.path)
    probe = "import sys; sys.path.insert(0, sys.argv[1]); import worker; print(worker.handle(None, None))"
    ran = subprocess.run(
        [sys.executable, "-I", "-c", probe, str(asset)], capture_output=True, text=True, check=True
    )
    assert ran.stdout.strip() == "purebinary"
