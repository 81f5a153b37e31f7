"""Packaging: the wheel, installed into a fresh venv outside the repository, builds a working asset.

The fresh venv gets the wheel with ``--no-deps``; its dependencies (aws-cdk-lib, boto3 ...) come from
this repository's ``.venv`` through a ``.pth`` line, so nothing is downloaded. A ``.pth`` *line* adds
a directory without processing the ``.pth`` files inside it, so the repository's editable install is
not visible: ``constructs_fifo`` can only come from the wheel.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import sysconfig
import textwrap
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]

pytestmark = pytest.mark.packaging

CONSUMER_APP = textwrap.dedent(
    """
    from pathlib import Path

    from aws_cdk import App, Stack
    from aws_cdk import aws_lambda as lambda_

    import constructs_fifo
    from constructs_fifo import OrderedAgentQueue

    HERE = Path(__file__).resolve().parent
    (HERE / "imported_from.txt").write_text(constructs_fifo.__file__)

    app = App()
    stack = Stack(app, "Consumer")
    OrderedAgentQueue(
        stack,
        "Jobs",
        code=lambda_.Code.from_asset(str(HERE / "handlers")),
        handler="billing.worker.handle",
    )
    app.synth()
    """
)

CONSUMER_HANDLER = textwrap.dedent(
    """
    def handle(job, context):
        return None
    """
)


def _run(args: list[str], cwd: Path, env: dict[str, str] | None = None) -> str:
    result = subprocess.run(args, cwd=cwd, env=env, capture_output=True, text=True, timeout=180, check=False)
    assert result.returncode == 0, f"{args} failed:\n{result.stdout[-2000:]}\n{result.stderr[-4000:]}"
    return result.stdout


def test_wheel_installs_and_builds_an_asset_with_runtime_and_handler(tmp_path: Path) -> None:
    # GIVEN the wheel of this repository ...
    dist = tmp_path / "dist"
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
        cwd=tmp_path,
    )
    (wheel,) = dist.glob("constructs_fifo-*.whl")
    # ... installed into a fresh venv outside the repository, dependencies borrowed from .venv
    venv = tmp_path / "venv"
    _run([sys.executable, "-m", "venv", "--without-pip", str(venv)], cwd=tmp_path)
    python = venv / "bin" / "python"
    _run(
        [sys.executable, "-m", "pip", "--python", str(python), "install", "-q", "--no-deps", str(wheel)],
        cwd=tmp_path,
    )
    fresh_site = Path(
        _run(
            [str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"], cwd=tmp_path
        ).strip()
    )
    (fresh_site / "borrowed_dependencies.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")
    # ... and a consumer app with its own handler package
    consumer = tmp_path / "consumer"
    (consumer / "handlers" / "billing").mkdir(parents=True)
    (consumer / "handlers" / "billing" / "__init__.py").write_text("")
    (consumer / "handlers" / "billing" / "worker.py").write_text(CONSUMER_HANDLER)
    (consumer / "app.py").write_text(CONSUMER_APP)
    out = consumer / "cdk.out"
    env = {
        **os.environ,
        "CDK_OUTDIR": str(out),
        "JSII_SILENCE_WARNING_DEPRECATED_NODE_VERSION": "1",
        "PYTHONPATH": "",
    }

    # WHEN the consumer app synthesizes from its own directory
    _run([str(python), "app.py"], cwd=consumer, env=env)

    # THEN constructs_fifo came from the fresh venv, not the repository
    imported_from = Path((consumer / "imported_from.txt").read_text())
    assert imported_from.is_relative_to(fresh_site), imported_from
    # AND the function's asset holds the runtime, the consumer's handler and no CDK code
    template = json.loads((out / "Consumer.template.json").read_text())
    (function,) = [r for r in template["Resources"].values() if r["Type"] == "AWS::Lambda::Function"]
    asset_hash = function["Properties"]["Code"]["S3Key"].removesuffix(".zip")
    asset = out / f"asset.{asset_hash}"
    assert (asset / "constructs_fifo" / "runtime" / "entrypoint.py").is_file()
    assert (asset / "constructs_fifo" / "__init__.py").is_file()
    assert (asset / "billing" / "worker.py").is_file()
    assert not (asset / "constructs_fifo" / "construct").exists()
    assert not list(asset.rglob("__pycache__"))
    assert function["Properties"]["Handler"] == "constructs_fifo.runtime.entrypoint.handler"
    # AND the runtime imports from the asset alone without loading aws_cdk
    probe = (
        "import sys; sys.path.insert(0, sys.argv[1]); "
        "import constructs_fifo.runtime.entrypoint as e, billing.worker as w; "
        "assert e.__file__.startswith(sys.argv[1]), e.__file__; "
        "assert 'aws_cdk' not in sys.modules; print('ok')"
    )
    assert _run([str(python), "-c", probe, str(asset)], cwd=tmp_path).strip() == "ok"
