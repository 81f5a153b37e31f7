"""Every command meets the environment's errors with one line naming what failed and the fix, exit 3.

Real botocore against what a user meets: no credentials, nothing listening, and a stand-in AWS
endpoint that throttles or denies every call (AWS's own error format, so botocore parses it as it
would AWS's). ``AWS_MAX_ATTEMPTS=1`` keeps botocore from retrying, so each test takes milliseconds.
"""

from __future__ import annotations

import os
import signal
import stat
import subprocess
import sys
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from constructs_fifo.cli import EXIT_ENVIRONMENT, main

THROTTLED = (400, "Throttling", "Rate exceeded")
DENIED = (403, "AccessDenied", "User: arn:aws:iam::123456789012:user/dev is not authorized")


@pytest.fixture(autouse=True)
def no_user_credentials(monkeypatch: pytest.MonkeyPatch) -> None:
    """No credentials anywhere, no endpoint from the environment, and no botocore retries."""
    for name in ("AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN", "AWS_PROFILE"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.delenv("AWS_ENDPOINT_URL", raising=False)
    monkeypatch.setenv("AWS_CONFIG_FILE", os.devnull)
    monkeypatch.setenv("AWS_SHARED_CREDENTIALS_FILE", os.devnull)
    monkeypatch.setenv("AWS_EC2_METADATA_DISABLED", "true")
    monkeypatch.setenv("AWS_MAX_ATTEMPTS", "1")


@pytest.fixture
def app_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A CDK app directory with a CDK CLI that must never run (the AWS calls fail first)."""
    (tmp_path / "cdk.json").write_text('{"app": "python app.py"}')
    cdk = tmp_path / "node_modules" / ".bin" / "cdk"
    cdk.parent.mkdir(parents=True)
    cdk.write_text(f"#!{sys.executable}\nraise SystemExit('the CDK CLI ran')\n")
    cdk.chmod(cdk.stat().st_mode | stat.S_IEXEC)
    monkeypatch.setenv("PATH", str(tmp_path / "no-cdk-here"))
    return tmp_path


def _refusing_endpoint(status: int, code: str, message: str) -> Iterator[str]:
    """An HTTP endpoint answering every AWS call with one error, in the query and JSON protocols."""

    class Refuse(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            self.rfile.read(int(self.headers.get("Content-Length", "0")))
            if "json" in self.headers.get("Content-Type", ""):
                body = f'{{"__type": "{code}", "message": "{message}"}}'
                content_type = "application/x-amz-json-1.0"
            else:
                body = (
                    "<ErrorResponse><Error><Type>Sender</Type>"
                    f"<Code>{code}</Code><Message>{message}</Message></Error>"
                    "<RequestId>r-1</RequestId></ErrorResponse>"
                )
                content_type = "text/xml"
            encoded = body.encode()
            self.send_response(status)
            self.send_header("Content-Type", content_type)
            self.send_header("Content-Length", str(len(encoded)))
            self.send_header("x-amzn-RequestId", "r-1")
            self.end_headers()
            self.wfile.write(encoded)

        def log_message(self, format: str, *args: object) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Refuse)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://localhost:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()


def _one_line(capsys: pytest.CaptureFixture[str]) -> str:
    """The error line: the last of stderr, and the only one from the CLI (deploy says what it starts)."""
    err = capsys.readouterr().err.strip().splitlines()
    assert "Traceback" not in "\n".join(err)
    assert [line for line in err if line.startswith("constructs-fifo:")] == err[-1:], err
    return err[-1]


def test_drain_without_credentials_says_how_to_configure_them(capsys: pytest.CaptureFixture[str]) -> None:
    # GIVEN no credentials and no endpoint (AWS itself) WHEN drain runs
    code = main(["drain", "--stack", "AgentJobs", "--region", "eu-west-1"])
    # THEN one line: what failed (no credentials, NoCredentialsError) and the fix
    line = _one_line(capsys)
    assert code == EXIT_ENVIRONMENT
    assert line.startswith("constructs-fifo: drain: no usable AWS credentials for AWS (NoCredentialsError")
    assert "Fix: configure credentials (`aws configure`, AWS_PROFILE" in line


def test_deploy_to_an_endpoint_nobody_listens_on_says_to_start_the_emulator(
    app_dir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # GIVEN nothing listening on port 1 WHEN deploy runs against it
    code = main(["deploy", "--endpoint-url", "http://localhost:1", "--app-dir", str(app_dir)])
    # THEN one line naming the endpoint and the emulator to start there
    line = _one_line(capsys)
    assert code == EXIT_ENVIRONMENT
    assert line == (
        "constructs-fifo: deploy: could not connect to http://localhost:1/ (EndpointConnectionError). "
        "Fix: start the emulator there (`constructs-fifo local serve --port 1`), or pass the "
        "--endpoint-url of a running one."
    )


def test_demo_against_an_endpoint_nobody_listens_on_is_one_line(capsys: pytest.CaptureFixture[str]) -> None:
    # GIVEN nothing listening on port 1 WHEN the demo reuses a stack there
    code = main(["demo", "--no-deploy", "--endpoint-url", "http://localhost:1"])
    # THEN one line naming the endpoint and the fix
    line = _one_line(capsys)
    assert code == EXIT_ENVIRONMENT
    assert line.startswith("constructs-fifo: demo: could not connect to http://localhost:1/")
    assert "Fix: start the emulator there" in line


#: (command line, the first call it makes)
COMMANDS = [
    (["drain", "--stack", "AgentJobs"], "ListStackResources"),
    (["deploy"], "DescribeStacks"),
    (["demo", "--no-deploy"], "ListStackResources"),
]
#: (what the endpoint answers, what the line says about the call, the start of the fix)
REFUSALS = [
    (THROTTLED, "throttled {operation} (Throttling: Rate exceeded)", "Fix: wait a minute and run it again"),
    (
        DENIED,
        "denied {operation} to these credentials (AccessDenied: User: ",
        "Fix: use credentials that are allowed",
    ),
]


@pytest.mark.parametrize("refusal", REFUSALS, ids=["throttling", "access-denied"])
@pytest.mark.parametrize("command", COMMANDS, ids=["drain", "deploy", "demo"])
def test_throttling_and_access_denied_are_one_line_with_the_call_and_the_fix(
    command: tuple[list[str], str],
    refusal: tuple[tuple[int, str, str], str, str],
    app_dir: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    argv, operation = command
    answer, said, fix = refusal
    # GIVEN an endpoint that throttles (or denies) every call
    for endpoint in _refusing_endpoint(*answer):
        # WHEN the command runs against it
        deploying = ["--app-dir", str(app_dir)] if argv[0] == "deploy" else []
        code = main([*argv, "--endpoint-url", endpoint, *deploying])
        # THEN one line names the command, the endpoint, the call, the error code and the fix
        line = _one_line(capsys)
        assert code == EXIT_ENVIRONMENT
        assert f"{argv[0]}: {endpoint} {said.format(operation=operation)}" in line
        assert fix in line


# --- inputs that once gave a traceback: one line each, exit 3 (a closed pipe: a quiet 141) ---------------


@pytest.mark.parametrize("where", ["--endpoint-url", "AWS_ENDPOINT_URL"])
def test_an_endpoint_without_its_scheme_is_one_line_with_the_url_to_pass(
    where: str, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    # GIVEN localhost:4566, without http:// (on the command line, or in the environment)
    argv = ["status", "--stack", "AgentJobs"]
    if where == "AWS_ENDPOINT_URL":
        monkeypatch.setenv("AWS_ENDPOINT_URL", "localhost:4566")
    else:
        argv += ["--endpoint-url", "localhost:4566"]
    # WHEN a command runs THEN one line naming the value, the rule and the URL to pass, exit 3
    code = main(argv)
    line = _one_line(capsys)
    assert code == EXIT_ENVIRONMENT
    assert line.startswith("constructs-fifo: the endpoint URL 'localhost:4566' (--endpoint-url, else ")
    assert (
        "Fix: pass --endpoint-url http://localhost:4566 (or export AWS_ENDPOINT_URL=http://localhost:4566)"
        in line
    )


def test_a_region_the_emulator_does_not_serve_is_one_line(capsys: pytest.CaptureFixture[str]) -> None:
    # GIVEN a running emulator and fake credentials
    from constructs_fifo.local.emulator.server import LocalEmulator

    with LocalEmulator(port=0) as emulator, pytest.MonkeyPatch.context() as env:
        env.setenv("AWS_ACCESS_KEY_ID", "testing")
        env.setenv("AWS_SECRET_ACCESS_KEY", "testing")
        # WHEN status asks it about a region that does not exist (moto answers with an HTML page)
        code = main(
            [
                "status",
                "--stack",
                "AgentJobs",
                "--endpoint-url",
                emulator.endpoint_url,
                "--region",
                "xx-nowhere-9",
            ]
        )
    # THEN one line: the unparsable answer, the region that is not one, and the fix
    line = _one_line(capsys)
    assert code == EXIT_ENVIRONMENT
    assert f"status: {emulator.endpoint_url} answered with a response botocore cannot parse (" in line
    assert "region 'xx-nowhere-9' is not an AWS region" in line
    assert line.endswith(
        "Fix: pass --region with an AWS region such as us-east-1 (or fix AWS_REGION / AWS_DEFAULT_REGION)."
    )


def test_a_closed_stdout_is_a_quiet_exit_141(tmp_path: Path) -> None:
    # GIVEN stdout a pipe whose reader has gone (`... | head -1` after head exits)
    read_end, write_end = os.pipe()
    os.close(read_end)
    env = {**os.environ, "PYTHONWARNINGS": "ignore"}
    env.pop("AWS_ENDPOINT_URL", None)
    # WHEN a command writes its output there (local serve's export lines, before it starts)
    try:
        done = subprocess.run(
            [sys.executable, "-m", "constructs_fifo.cli", "local", "serve", "--port", "0"],
            stdout=write_end,
            stderr=subprocess.PIPE,
            text=True,
            timeout=120,
            env=env,
            check=False,
        )
    finally:
        os.close(write_end)
    # THEN it stops at once: exit 141 (128 + SIGPIPE, as a shell reports for such a writer), stderr empty
    assert (done.returncode, done.stderr) == (141, "")


def test_local_serve_says_how_to_point_tools_at_it_and_exits_130_on_ctrl_c() -> None:
    # GIVEN the emulator served in the foreground
    env = {**os.environ, "AWS_REGION": "eu-west-1"}
    with subprocess.Popen(
        [sys.executable, "-m", "constructs_fifo.cli", "local", "serve", "--port", "0"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
    ) as served:
        assert served.stdout is not None and served.stderr is not None
        lines = [served.stdout.readline() for _ in range(3)]
        # WHEN Ctrl-C stops it
        served.send_signal(signal.SIGINT)
        code = served.wait(timeout=60)
        err = served.stderr.read()
    # THEN it printed the export line for its own endpoint first, then the ready line; and on Ctrl-C
    # it says it stopped and exits 130 (interrupted)
    endpoint = lines[2].rsplit(" ", 1)[-1].strip()
    assert lines[0] == "# point tools at the emulator (paste into another shell):\n"
    assert lines[1] == (
        f"export AWS_ENDPOINT_URL={endpoint} AWS_ACCESS_KEY_ID=testing AWS_SECRET_ACCESS_KEY=testing "
        "AWS_REGION=eu-west-1 AWS_DEFAULT_REGION=eu-west-1\n"
    )
    assert lines[2].startswith("constructs-fifo emulator ready at http://localhost:")
    assert code == 130
    assert (
        err.strip().splitlines()[-1] == "constructs-fifo: emulator stopped (its tables and messages are gone)"
    )
