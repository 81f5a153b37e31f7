"""Packaging: the wheel, installed into a fresh venv with only its declared dependencies, works.

The wheel is built from this repository and installed with uv into a new virtual environment outside
it: no system site-packages, nothing borrowed from the development ``.venv`` (uv may take the
packages from its local cache, or from PyPI). There the console script must work without the
``local`` extra (``--help``, and one line naming the extra for the emulator's commands), and a
consumer app must synthesize with the installed construct, bundling its job module's dependencies (a
pure-Python and a binary wheel, from a local wheelhouse: no network) with the uv on ``PATH``, the way
a project whose venv uv made (and so has no pip) would.
"""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys
import textwrap
from dataclasses import dataclass
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
UV = Path(sys.executable).with_name("uv")  # pinned in the development venv (Makefile)

pytestmark = pytest.mark.packaging

CONSUMER_APP = textwrap.dedent(
    """
    from pathlib import Path

    from aws_cdk import App, Stack
    from aws_cdk import aws_lambda as lambda_

    import constructs_fifo
    from constructs_fifo import CodeBundling, OrderedAgentQueue

    HERE = Path(__file__).resolve().parent
    (HERE / "imported_from.txt").write_text(constructs_fifo.__file__)
    OFFLINE = CodeBundling(
        find_links=[str(HERE / "wheelhouse")], no_index=True, cache_dir=str(HERE / "cache")
    )

    app = App()
    stack = Stack(app, "Consumer")
    OrderedAgentQueue(
        stack,
        "Jobs",
        code=lambda_.Code.from_asset(str(HERE / "handlers")),
        handler="billing.worker.handle",
        bundling=OFFLINE,
    )
    app.synth()
    """
)

CONSUMER_HANDLER = textwrap.dedent(
    """
    import tinybin
    import tinypure


    def handle(job, context):
        return tinypure.KIND + tinybin.KIND
    """
)


def _make_wheelhouse(directory: Path) -> Path:
    """tests/unit/wheelhouse.py's wheels (loaded by path: tests/ is not a package)."""
    spec = importlib.util.spec_from_file_location("wheelhouse", REPO / "tests" / "unit" / "wheelhouse.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    wheelhouse: Path = module.make_wheelhouse(directory)
    return wheelhouse


def _run(
    args: list[str], cwd: Path, env: dict[str, str] | None = None, *, expect: int = 0
) -> subprocess.CompletedProcess[str]:
    result = subprocess.run(args, cwd=cwd, env=env, capture_output=True, text=True, timeout=300, check=False)
    output = f"{result.stdout[-2000:]}\n{result.stderr[-4000:]}"
    assert result.returncode == expect, f"{args} exited {result.returncode}, expected {expect}:\n{output}"
    return result


@dataclass(frozen=True)
class Installed:
    """The fresh venv that holds the wheel and its declared dependencies only."""

    root: Path
    python: Path
    cli: Path
    site: Path

    def env(self) -> dict[str, str]:
        """This process's environment without anything that would reach the repository or an endpoint."""
        env = {
            k: v for k, v in os.environ.items() if k not in {"AWS_ENDPOINT_URL", "PYTHONPATH", "VIRTUAL_ENV"}
        }
        env["JSII_SILENCE_WARNING_DEPRECATED_NODE_VERSION"] = "1"
        return env


@pytest.fixture(scope="module")
def installed(tmp_path_factory: pytest.TempPathFactory) -> Installed:
    """``pip install <wheel>`` with no extras into a new venv outside the repository (with uv: seconds)."""
    work = tmp_path_factory.mktemp("packaging")
    dist = work / "dist"
    _run(
        [
            sys.executable,
            "-m",
            "pip",
            "wheel",
            "--no-deps",
            "--no-build-isolation",
            "-q",
            "-w",
            str(dist),
            str(REPO),
        ],
        cwd=work,
    )
    (wheel,) = dist.glob("constructs_fifo-*.whl")
    venv = work / "venv"
    _run([str(UV), "venv", "--quiet", "--python", sys.executable, str(venv)], cwd=work)
    python = venv / "bin" / "python"
    _run([str(UV), "pip", "install", "--quiet", "--python", str(python), str(wheel)], cwd=work)
    site = Path(
        _run(
            [str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"], cwd=work
        ).stdout.strip()
    )
    return Installed(root=work, python=python, cli=venv / "bin" / "constructs-fifo", site=site)


def test_the_fresh_venv_holds_the_declared_dependencies_and_nothing_borrowed(installed: Installed) -> None:
    # GIVEN the fresh venv WHEN it is asked what it can import and from where
    probe = (
        "import importlib.util as u, json, sys; "
        "print(json.dumps({'path': sys.path, 'found': {n: u.find_spec(n) is not None for n in "
        "('constructs_fifo', 'aws_cdk', 'boto3', 'rich', 'moto', 'flask', 'pytest')}}))"
    )
    seen = json.loads(
        _run([str(installed.python), "-c", probe], cwd=installed.root, env=installed.env()).stdout
    )
    # THEN the base dependencies are there, the extras and the dev tools are not
    assert seen["found"] == {
        "constructs_fifo": True,
        "aws_cdk": True,
        "boto3": True,
        "rich": True,
        "moto": False,
        "flask": False,
        "pytest": False,
    }
    # AND nothing on its path is the repository or its development venv
    assert not [entry for entry in seen["path"] if entry and Path(entry).is_relative_to(REPO)]


def test_the_cli_works_on_a_plain_install(installed: Installed) -> None:
    # GIVEN the plain install WHEN the CLI and its AWS commands are asked for help THEN they answer
    help_text = _run([str(installed.cli), "--help"], cwd=installed.root, env=installed.env()).stdout
    for command in ("local", "deploy", "drain", "demo"):
        assert command in help_text
    for command in ("deploy", "drain", "worker"):
        assert (
            "--endpoint-url"
            in _run([str(installed.cli), command, "--help"], cwd=installed.root, env=installed.env()).stdout
        )


@pytest.mark.parametrize("argv", [["local", "serve"], ["demo"]])
def test_the_emulator_commands_name_the_local_extra_in_one_line(
    installed: Installed, argv: list[str]
) -> None:
    # GIVEN the plain install (no 'local' extra) WHEN a command that starts the emulator runs
    result = _run([str(installed.cli), *argv], cwd=installed.root, env=installed.env(), expect=3)
    # THEN exit 3 and one line naming the extra to install, no traceback
    assert result.stderr.strip().splitlines() == [
        "constructs-fifo: the local emulator needs moto, flask, which this installation lacks (they come "
        "with the 'local' extra). Fix: pip install 'constructs-fifo[local]'."
    ]


def test_wheel_installs_and_builds_an_asset_with_runtime_and_handler(
    installed: Installed, tmp_path: Path
) -> None:
    # GIVEN a consumer app with its own handler package, which needs a pure-Python and a binary-wheel
    # dependency (requirements.txt), next to the fresh venv, with uv on PATH
    consumer = tmp_path / "consumer"
    (consumer / "handlers" / "billing").mkdir(parents=True)
    (consumer / "handlers" / "billing" / "__init__.py").write_text("")
    (consumer / "handlers" / "billing" / "worker.py").write_text(CONSUMER_HANDLER)
    (consumer / "handlers" / "requirements.txt").write_text("tinypure==1.0\ntinybin==1.0\n")
    (consumer / "app.py").write_text(CONSUMER_APP)
    _make_wheelhouse(consumer / "wheelhouse")
    out = consumer / "cdk.out"
    env = {**installed.env(), "CDK_OUTDIR": str(out)}
    env["PATH"] = f"{UV.parent}{os.pathsep}{env.get('PATH', '')}"

    # WHEN the consumer app synthesizes from its own directory with the venv's Python
    _run([str(installed.python), "app.py"], cwd=consumer, env=env)

    # THEN constructs_fifo came from the fresh venv, not the repository
    imported_from = Path((consumer / "imported_from.txt").read_text())
    assert imported_from.is_relative_to(installed.site), imported_from
    # AND the function's asset holds the runtime, the consumer's handler and no CDK code
    template = json.loads((out / "Consumer.template.json").read_text())
    (function,) = [r for r in template["Resources"].values() if r["Type"] == "AWS::Lambda::Function"]
    asset_hash = function["Properties"]["Code"]["S3Key"].removesuffix(".zip")
    asset = out / f"asset.{asset_hash}"
    assert (asset / "constructs_fifo" / "runtime" / "entrypoint.py").is_file()
    for mode in ("claim", "state"):  # both modes' packages: the entry point imports the configured one
        assert (asset / "constructs_fifo" / "runtime" / mode / "processor.py").is_file()
    assert (asset / "constructs_fifo" / "__init__.py").is_file()
    assert (asset / "billing" / "worker.py").is_file()
    assert (asset / "tinypure" / "__init__.py").is_file()
    assert (asset / "tinybin" / "__init__.py").is_file()
    assert not (asset / "constructs_fifo" / "construct").exists()
    assert not (asset / "constructs_fifo" / "local").exists()
    assert not (asset / "constructs_fifo" / "cli").exists()
    assert not list(asset.rglob("__pycache__"))
    assert function["Properties"]["Handler"] == "constructs_fifo.runtime.entrypoint.handler"
    # AND the runtime and the job module, with its dependencies, import from the asset alone without
    # loading aws_cdk (or rich)
    probe = (
        "import sys; sys.path.insert(0, sys.argv[1]); "
        "import constructs_fifo.runtime.entrypoint as e, billing.worker as w; "
        "import constructs_fifo.runtime.claim.processor as c, constructs_fifo.runtime.state.processor as s; "
        "assert all(m.__file__.startswith(sys.argv[1]) for m in (e, c, s)), e.__file__; "
        "assert 'aws_cdk' not in sys.modules and 'rich' not in sys.modules; print(w.handle(None, None))"
    )
    ran = _run([str(installed.python), "-c", probe, str(asset)], cwd=tmp_path)
    assert ran.stdout.strip() == "purebinary"
