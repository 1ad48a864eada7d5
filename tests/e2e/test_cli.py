"""The ``fastedit-lsp`` command: version, ``python -m``, stdio, TCP, log file, doctor."""

from __future__ import annotations

import asyncio
import importlib.util
import json
import re
import socket
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from fastedit_lsp import __version__
from fastedit_lsp.tools.lsp_client import frame, read_message
from fastedit_lsp.tools.stub import StubModelServer
from tests.support.harness import hermetic_env

SECRET = "sk-test-SECRET-cli-0123456789"
#: A bench run measures for a while, and much longer on a busy machine: its guard against a hang.
BENCH_GUARD = 1200


async def _session(reader: asyncio.StreamReader, writer: Any) -> dict[str, Any]:
    """initialize, initialized, shutdown, exit; returns the initialize result."""
    writer.write(
        frame(
            {
                "jsonrpc": "2.0",
                "id": 1,
                "method": "initialize",
                "params": {"processId": None, "rootUri": None, "capabilities": {}},
            }
        )
    )
    while (message := await asyncio.wait_for(read_message(reader), 20)).get("id") != 1:
        pass
    writer.write(frame({"jsonrpc": "2.0", "method": "initialized", "params": {}}))
    writer.write(frame({"jsonrpc": "2.0", "id": 2, "method": "shutdown"}))
    while (await asyncio.wait_for(read_message(reader), 20)).get("id") != 2:
        pass
    writer.write(frame({"jsonrpc": "2.0", "method": "exit"}))
    result: dict[str, Any] = message["result"]
    return result


@pytest.mark.parametrize(
    "command",
    [["fastedit-lsp"], [sys.executable, "-m", "fastedit_lsp"]],
    ids=["console-script", "python-m"],
)
def test_version(command: list[str]) -> None:
    out = subprocess.run([*command, "--version"], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == f"fastedit-lsp {__version__}"


async def test_stdio_session_with_a_log_file_that_never_holds_the_key(tmp_path: Path) -> None:
    log = tmp_path / "server.log"
    proc = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "fastedit_lsp",
        "--log-file",
        str(log),
        stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE,
        env=hermetic_env(FASTEDIT_FAST_PROVIDER="cerebras", FASTEDIT_FAST_API_KEY=SECRET),
    )
    assert proc.stdin is not None and proc.stdout is not None
    result = await _session(proc.stdout, proc.stdin)
    assert await asyncio.wait_for(proc.wait(), 20) == 0
    assert result["serverInfo"] == {"name": "fastedit-lsp", "version": __version__}
    commands = result["capabilities"]["executeCommandProvider"]["commands"]
    assert {"fastedit.completeRest", "fastedit.editSelection", "fastedit.cancel"} <= set(commands)
    text = log.read_text()
    assert "initialize" in text
    assert SECRET not in text


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


async def _connect(port: int, proc: asyncio.subprocess.Process) -> tuple[Any, Any]:
    # The port opens once the server is up; nothing else announces it.
    for _ in range(200):
        try:
            return await asyncio.open_connection("127.0.0.1", port)
        except OSError:
            if proc.returncode is not None:
                raise
            await asyncio.sleep(0.05)
    raise TimeoutError(f"nothing listens on {port}")


async def test_tcp_binds_loopback_by_default() -> None:
    port = _free_port()
    proc = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "fastedit_lsp",
        "serve",
        "--tcp",
        str(port),
        stderr=asyncio.subprocess.PIPE,
        env=hermetic_env(),
    )
    try:
        reader, writer = await _connect(port, proc)
        # Bound to loopback only: the machine's other addresses refuse.
        listening = (await asyncio.to_thread(Path("/proc/net/tcp").read_text)).splitlines()[1:]
        local = [row.split()[1] for row in listening if row.split()[3] == "0A"]
        assert f"0100007F:{port:04X}" in local
        assert f"00000000:{port:04X}" not in local
        result = await _session(reader, writer)
        assert result["serverInfo"]["name"] == "fastedit-lsp"
        writer.close()
    finally:
        if proc.returncode is None:
            proc.kill()
        await proc.wait()
    assert proc.stderr is not None
    assert b"warning" not in await proc.stderr.read()


async def test_tcp_on_a_non_loopback_host_warns_that_whoever_connects_spends_the_key() -> None:
    port = _free_port()
    proc = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "fastedit_lsp",
        "serve",
        "--tcp",
        f"0.0.0.0:{port}",
        stderr=asyncio.subprocess.PIPE,
        env=hermetic_env(),
    )
    assert proc.stderr is not None
    try:
        line = await asyncio.wait_for(proc.stderr.readline(), 20)
        assert b"WARNING" in line and b"spends your API key" in line
    finally:
        proc.kill()
        await proc.wait()


def test_doctor_reports_settings_sources_and_a_working_serve_without_the_key() -> None:
    out = subprocess.run(
        ["fastedit-lsp", "doctor", "--no-probe"],
        capture_output=True,
        text=True,
        env=hermetic_env(
            FASTEDIT_MODE="fast",
            FASTEDIT_FAST_PROVIDER="groq",
            FASTEDIT_FAST_API_KEY=SECRET,
        ),
        timeout=60,
    )
    assert out.returncode == 0, out.stdout + out.stderr
    assert "fastedit.mode = fast  (env)" in out.stdout
    assert "fastedit.profiles.fast.provider = groq  (env)" in out.stdout
    assert "fast: groq https://api.groq.com/openai/v1" in out.stdout
    assert "key set" in out.stdout
    assert "standard: offline engine" in out.stdout
    assert "serve --stdio answered initialize" in out.stdout
    assert SECRET not in out.stdout + out.stderr


async def test_doctor_measures_each_profile_against_the_stub(stub: StubModelServer) -> None:
    out = await asyncio.to_thread(
        subprocess.run,
        ["fastedit-lsp", "doctor"],
        capture_output=True,
        text=True,
        env=hermetic_env(
            FASTEDIT_FAST_BASE_URL=stub.base_url,
            FASTEDIT_STANDARD_BASE_URL=stub.base_url,
            FASTEDIT_STANDARD_MODEL="stub-strong",
        ),
        timeout=60,
    )
    assert out.returncode == 0, out.stdout + out.stderr
    assert out.stdout.count("models (") == 2
    # The decode speed, and the time to the first token apart.
    for model in ("stub-fast", "stub-strong"):
        figures = (
            rf"stream: {model} over the chat API: ([\d,]+ tok/s|instant), "
            r"first token \d+ ms, \d+ tokens"
        )
        assert re.search(figures, out.stdout), out.stdout


def test_doctor_says_what_to_fix_and_fails_when_a_profile_does_not_work() -> None:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        closed = s.getsockname()[1]
    out = subprocess.run(
        ["fastedit-lsp", "doctor"],
        capture_output=True,
        text=True,
        env=hermetic_env(
            FASTEDIT_FAST_BASE_URL=f"http://127.0.0.1:{closed}/v1",
            FASTEDIT_STANDARD_PROVIDER="cerebras",
        ),
        timeout=60,
    )
    assert out.returncode == 1
    assert f"Cannot connect to http://127.0.0.1:{closed}/v1" in out.stdout
    assert "fix: profiles.standard: provider cerebras needs an API key in" in out.stdout
    assert "CEREBRAS_API_KEY" in out.stdout


@pytest.mark.timeout(BENCH_GUARD + 60)
def test_bench_reports_every_figure_with_percentiles(tmp_path: Path) -> None:
    figures = tmp_path / "bench.json"
    png = tmp_path / "plot.png"
    out = subprocess.run(
        # --quick: every section, figure and table with smaller workloads (the goals' sizes are
        # the bench's own business, not this test's).
        [
            *("fastedit-lsp", "bench", "--quick", "--runs", "3"),
            *("--json", str(figures), "--plot", str(png)),
        ],
        capture_output=True,
        text=True,
        env=hermetic_env(),
        timeout=BENCH_GUARD,
    )
    assert out.returncode == 0, out.stdout + out.stderr
    assert "| cold start to initialize reply: fastedit-lsp |" in out.stdout
    assert "| goal | measured | met |" in out.stdout
    assert "load average" in out.stdout
    assert "--quick: smaller workloads" in out.stdout
    assert "| parse check, in process (ms: p50 / p90 / p99) |" in out.stdout
    data = json.loads(figures.read_text())
    assert data["editor"] == {"ack_ms": 1.0, "echo": True, "chunk_per_event": True}
    checks = data["parseCheck"]
    assert set(checks) == {"python", "javascript", "typescript", "tsx", "go", "rust", "java"} | {
        "c",
        "cpp",
        "c_sharp",
    }
    assert all(c["goodPasses"] and c["badFails"] for c in checks.values()), checks
    assert all(c["goodDraftMs"]["p50"] > 0 for c in checks.values())
    assert all(c["newJobMs"]["runs"] == c["refreshMs"]["runs"] > 0 for c in checks.values())
    timed = [
        "cold start to initialize reply: fastedit-lsp",
        "RSS after initialize: fastedit-lsp",
        "first job of a session: first edit",
        "warm job: first edit",
        "first edit",
        "first edit: command → request at the stub",
        "floor: stub first event (raw socket)",
        "floor: LSP round trip",
        *(
            f"{what}, {rate} tok/s"
            for rate in ("1,000", "5,000", "20,000")
            for what in ("stream overhead", "edits per second", "server CPU per 1,000 tokens")
        ),
        "bare httpx reader CPU per 1,000 tokens, 1,000 tok/s",
        "cancel → cancelled",
        "cancel → stub sees the connection closed",
        *(f"didChange handler (server), {n} lines" for n in ("1,000", "10,000", "50,000")),
        "code actions (server), 10,000 lines, warm",
        "inline completion round trip, model",
        "inline completion: the stub's own time",
        "inline completion overhead (round trip − stub's own time)",
    ]
    for key in timed:
        stats = data["figures"][key]
        assert stats["runs"] >= 3, key
        assert 0 < stats["median"] <= stats["p90"] <= stats["p99"], key
        assert stats["load"] >= 0 and len(stats["samples"]) == stats["runs"]
    # jedi-language-server is a test dependency: the peer is measured in the same run.
    assert data["figures"]["cold start to initialize reply: jedi-language-server"]["runs"] >= 3
    if importlib.util.find_spec("matplotlib") is None:
        assert "matplotlib is not installed" in out.stdout
    else:
        assert png.read_bytes().startswith(b"\x89PNG")


@pytest.mark.timeout(BENCH_GUARD + 60)
def test_bench_compare_measures_another_checkout_and_paired_prints_the_ratio_per_round(
    tmp_path: Path,
) -> None:
    # The checkout itself as the reference: both sides run, the ratios are printed. The sections
    # whose figures are asserted: every figure of one side is test_bench_reports_every_figure's.
    # --paired: each round one first-job session per side, adjacent (cold starts one by one),
    # and per figure the median of the per-round ratios and the rounds this side was lower.
    # One bench run for both: with --paired the alternating rounds' ratios are printed too.
    root = Path(__file__).resolve().parents[2]
    figures = tmp_path / "bench.json"
    out = subprocess.run(
        [
            *("fastedit-lsp", "bench", "--runs", "2", "--rounds", "2", "--paired"),
            *("--only", "cold-start,first-job,first-edit"),
            *("--compare", str(root), "--json", str(figures)),
        ],
        capture_output=True,
        text=True,
        env=hermetic_env(),
        timeout=BENCH_GUARD,
    )
    assert out.returncode == 0, out.stdout + out.stderr
    assert f"### Ratios, this checkout ÷ ref {root}" in out.stdout
    assert "| first edit | " in out.stdout.split("### Ratios")[1]
    paired = out.stdout.split(f"### Paired rounds, this checkout ÷ ref {root}")[1]
    assert "| first job of a session: first edit | " in paired
    data = json.loads(figures.read_text())["compare"]
    assert data["figures"]["first edit"]["runs"] >= 3
    assert data["figures"]["cold start to initialize reply: fastedit-lsp"]["runs"] >= 3
    first_job = data["paired"]["first job of a session: first edit"]
    # One session per side and round: two rounds, two pairs, each of both sides' figure.
    assert first_job["rounds"] == 2 and len(first_job["pairs"]) == 2
    assert data["figures"]["first job of a session: first edit"]["runs"] == 2
    assert 0 <= first_job["lower"] <= 2
    this, ref = first_job["pairs"][0]
    assert first_job["median"] > 0 and this > 0 and ref > 0
    # Cold starts pair run by run (5 runs at least, as without --paired).
    assert data["paired"]["cold start to initialize reply: fastedit-lsp"]["rounds"] >= 5


def test_bench_paired_without_compare_says_what_is_missing() -> None:
    out = subprocess.run(
        ["fastedit-lsp", "bench", "--paired", "--only", "first-job"],
        capture_output=True,
        text=True,
        env=hermetic_env(),
        timeout=60,
    )
    assert out.returncode != 0
    assert "--paired: name the other side, --compare REF" in out.stderr


async def test_a_request_whose_params_do_not_fit_gets_an_error_instead_of_silence() -> None:
    proc = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "fastedit_lsp",
        stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.DEVNULL,
        env=hermetic_env(),
    )
    assert proc.stdin is not None and proc.stdout is not None
    proc.stdin.write(frame({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {}}))
    answer = await asyncio.wait_for(read_message(proc.stdout), 20)
    assert answer["id"] == 1 and answer["error"]["code"] == -32602
    # The server is healthy: a proper session follows.
    result = await _session(proc.stdout, proc.stdin)
    assert result["serverInfo"]["name"] == "fastedit-lsp"
    assert await asyncio.wait_for(proc.wait(), 20) == 0


def test_stdin_that_is_a_file_is_read_too(tmp_path: Path) -> None:
    # stdin is read on the event loop when it is a pipe (stdio.py); a file falls back to pygls'
    # own reader.
    session = tmp_path / "session.jsonrpc"
    initialize = {"processId": None, "rootUri": None, "capabilities": {}}
    session.write_bytes(
        frame({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": initialize})
        + frame({"jsonrpc": "2.0", "method": "initialized", "params": {}})
        + frame({"jsonrpc": "2.0", "id": 2, "method": "shutdown"})
        + frame({"jsonrpc": "2.0", "method": "exit"})
    )
    with session.open("rb") as stdin:
        out = subprocess.run(
            [sys.executable, "-m", "fastedit_lsp"],
            stdin=stdin,
            capture_output=True,
            env=hermetic_env(),
            timeout=60,
        )
    assert out.returncode == 0, out.stderr
    head, _, rest = out.stdout.partition(b"\r\n\r\n")
    length = int(re.search(rb"Content-Length: (\d+)", head)[1])  # type: ignore[index]
    reply = json.loads(rest[:length])  # the length counts the body's bytes
    assert reply["id"] == 1
    assert reply["result"]["serverInfo"]["name"] == "fastedit-lsp"


@pytest.mark.parametrize("round_", range(6))
async def test_exit_right_after_opening_files_in_a_git_repository_ends_the_process(
    tmp_path: Path, round_: int
) -> None:
    # Each opened file starts a git check; exit cancels the ones still starting. On Python 3.11
    # a cancelled asyncio subprocess that was still starting never returned, and the server
    # hung in its exit (half of such sessions).
    git = await asyncio.create_subprocess_exec("git", "init", "-q", str(tmp_path))
    assert await git.wait() == 0
    proc = await asyncio.create_subprocess_exec(
        *(sys.executable, "-m", "fastedit_lsp"),
        stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE,
        env=hermetic_env(),
    )
    assert proc.stdin is not None and proc.stdout is not None
    reader, writer = proc.stdout, proc.stdin

    def send(message: dict[str, Any]) -> None:
        writer.write(frame({"jsonrpc": "2.0", **message}))

    async def answer(msg_id: int) -> None:
        while (await asyncio.wait_for(read_message(reader), 30)).get("id") != msg_id:
            pass

    params = {"processId": None, "rootUri": tmp_path.as_uri(), "capabilities": {}}
    send({"id": 1, "method": "initialize", "params": params})
    await answer(1)
    send({"method": "initialized", "params": {}})
    for n in range(10):
        item = {"uri": (tmp_path / f"m{n}.py").as_uri(), "languageId": "python", "version": 1}
        send({"method": "textDocument/didOpen", "params": {"textDocument": {**item, "text": ""}}})
    send({"id": 2, "method": "shutdown"})
    await answer(2)
    send({"method": "exit"})
    assert await asyncio.wait_for(proc.wait(), 60) == 0


def test_bench_rewrite_compares_retyping_minimal_diff_and_prediction() -> None:
    out = subprocess.run(
        ["fastedit-lsp", "bench", "--rewrite", "--runs", "1", "--quick"],
        capture_output=True,
        text=True,
        env=hermetic_env(),
        timeout=180,
    )
    assert out.returncode == 0, out.stdout + out.stderr
    rows = {line.split("  ")[0]: line.split() for line in out.stdout.splitlines()[2:]}
    assert set(rows) == {"delete and retype", "minimal diff", "prediction (3× emulated)"}
    # Minimal diff deletes only the 20 changed lines and sends far fewer characters.
    retype, minimal = rows["delete and retype"], rows["minimal diff"]
    assert int(minimal[-2]) < int(retype[-2]) / 4
