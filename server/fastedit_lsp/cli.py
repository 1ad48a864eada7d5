"""The ``fastedit-lsp`` command: serve (stdio by default, or TCP on loopback), ``--version``, and
the user commands (demo, bench, doctor, editors, stub)."""

from __future__ import annotations

import argparse
import gc
import logging
import sys

from . import __version__


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="fastedit-lsp",
        description="Fast and safe inline AI edits for any LSP editor.",
    )
    parser.add_argument("--version", action="version", version=f"fastedit-lsp {__version__}")
    parser.add_argument("--log-file", metavar="PATH", help="write the server's log to PATH")
    parser.add_argument(
        "--log-level", default="INFO", choices=["DEBUG", "INFO", "WARNING", "ERROR"]
    )
    sub = parser.add_subparsers(dest="command")
    serve = sub.add_parser("serve", help="run the language server (default: over stdio)")
    group = serve.add_mutually_exclusive_group()
    group.add_argument("--stdio", action="store_true", help="talk LSP over stdin/stdout")
    group.add_argument(
        "--tcp",
        metavar="[HOST:]PORT",
        help="listen on TCP (127.0.0.1 unless a host is given)",
    )
    demo = sub.add_parser(
        "demo", help="run every action live on copies of sample files (or FOLDER's Python files)"
    )
    demo.add_argument("folder", nargs="?", help="a folder whose Python files are copied and used")
    bench = sub.add_parser(
        "bench",
        help="measure what the server adds: cold start, first edit, streams, cancel, sync, "
        "code actions, completions",
    )
    bench.add_argument("--runs", type=int, default=50, help="measured runs per figure")
    bench.add_argument("--json", metavar="PATH", help="also write the figures as JSON")
    bench.add_argument(
        "--rewrite",
        action="store_true",
        help="only the rewrite figures: delete-and-retype vs minimal diff vs prediction",
    )
    bench.add_argument(
        "--next-edit", action="store_true", help="only the server time per next-edit suggestion"
    )
    bench.add_argument(
        "--plot",
        metavar="PATH",
        nargs="?",
        const="docs/benchmarks.png",
        help="also plot the distributions as a PNG (default docs/benchmarks.png; needs matplotlib)",
    )
    bench.add_argument(
        "--compare",
        metavar="REF",
        help="also measure another revision (main~3) or checkout path, alternating; print ratios",
    )
    bench.add_argument(
        "--rounds",
        type=int,
        help="alternating rounds per side with --compare (default 3; 10 with --paired)",
    )
    bench.add_argument(
        "--paired",
        action="store_true",
        help="with --compare: each round one session per side, adjacent, and the ratio per "
        "round (its median and the rounds this side was lower: steady under load)",
    )
    bench.add_argument(
        "--ack-ms",
        type=float,
        default=1.0,
        help="the bench editor's time to apply an edit before it replies (default 1 ms)",
    )
    bench.add_argument(
        "--no-echo", action="store_true", help="the bench editor sends no didChange for edits"
    )
    bench.add_argument(
        "--chunk",
        choices=("event", "batch"),
        default="event",
        help="the stub's HTTP chunks: one per SSE event (as providers) or one per write",
    )
    bench.add_argument(
        "--quick",
        action="store_true",
        help="smaller workloads (fewer runs, shorter streams and answers, a 50-line --rewrite): "
        "checks that every section and figure is produced; not figures to compare",
    )
    bench.add_argument(
        "--only",
        metavar="SECTIONS",
        help="only these comma-separated sections: cold-start, first-job, first-edit, "
        "first-line (the answer's first line and the last edit), streams, cancel, sync, "
        "code-actions, completions, parse (the parse check, in process), names (the names "
        "check, in process)",
    )
    editors = sub.add_parser(
        "editors", help="where the bundled Neovim and Emacs plugins are, and how to load them"
    )
    which = editors.add_mutually_exclusive_group()
    which.add_argument("--nvim", action="store_true", help="print only the Neovim plugin's folder")
    which.add_argument("--emacs", action="store_true", help="print only the Emacs plugin's folder")
    stub = sub.add_parser(
        "stub", help="a loopback model to watch streaming without a key (prints its settings)"
    )
    stub.add_argument("--port", type=int, default=0, help="its port on 127.0.0.1 (0: a free one)")
    stub.add_argument(
        "--tps", type=float, default=30.0, help="tokens per second (default 30, to watch)"
    )
    stub.add_argument("--text", help="the answer's text (default: a small Python function)")
    doctor = sub.add_parser(
        "doctor", help="print resolved settings and their sources, probe backends, check serve"
    )
    doctor.add_argument(
        "--no-probe", action="store_true", help="do not contact the configured backends"
    )
    doctor.add_argument(
        "--settings",
        metavar="FILE",
        help="a JSON file with your editor's fastedit settings (they are not visible otherwise)",
    )
    return parser


def _tcp_address(value: str) -> tuple[str, int]:
    host, _, port = value.rpartition(":")
    host = host.strip("[]") or "127.0.0.1"
    try:
        number = int(port)
    except ValueError:
        raise SystemExit(f"fastedit-lsp: --tcp expects [HOST:]PORT, got {value!r}") from None
    if not 0 <= number <= 65535:
        raise SystemExit(f"fastedit-lsp: port {number} is out of range")
    return host, number


def _is_loopback(host: str) -> bool:
    import ipaddress

    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


class _ExpectedErrors(logging.Filter):
    """Drop pygls' tracebacks for errors a command answers on purpose (-32602, -32800, -32803).

    They are answers, not faults; pygls logs each with a full traceback.
    """

    def filter(self, record: logging.LogRecord) -> bool:
        exc = record.exc_info[1] if record.exc_info else None
        return getattr(exc, "code", None) not in (-32602, -32800, -32803)


def _setup_logging(path: str | None, level: str) -> None:
    # stdout is the protocol: logs go to a file or stderr, never stdout.
    handler: logging.Handler = (
        logging.FileHandler(path, encoding="utf-8") if path else logging.StreamHandler(sys.stderr)
    )
    handler.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(name)s: %(message)s"))
    handler.addFilter(_ExpectedErrors())
    root = logging.getLogger()
    root.addHandler(handler)
    root.setLevel(level)
    if not path:
        # pygls logs every message and httpx every request at INFO: keep stderr quiet.
        for noisy in ("pygls", "httpx"):
            logging.getLogger(noisy).setLevel(max(logging.WARNING, logging.getLevelName(level)))


def main(argv: list[str] | None = None) -> int:
    """Entry point of the ``fastedit-lsp`` console script."""
    args = _parser().parse_args(argv)
    _setup_logging(args.log_file, args.log_level)
    command = args.command or "serve"
    if command == "demo":
        from .tools.demo import main as demo_main

        return demo_main(args.folder, sys.stdout)
    if command == "bench" and args.rewrite:
        from .tools.bench_rewrite import main as rewrite_main

        return rewrite_main(sys.stdout, runs=max(1, min(args.runs, 20)), quick=args.quick)
    if command == "bench" and args.next_edit:
        from .tools.bench_next_edit import main as bench_next_edit

        return bench_next_edit(sys.stdout, runs=max(1, args.runs))
    if command == "bench":
        if args.paired and not args.compare:
            raise SystemExit("fastedit-lsp bench --paired: name the other side, --compare REF")
        from .tools.bench import main as bench_main
        from .tools.bench import sections
        from .tools.bench_core import EditorModel

        model = EditorModel(
            ack_ms=max(0.0, args.ack_ms),
            echo=not args.no_echo,
            chunk_per_event=args.chunk == "event",
        )
        return bench_main(
            sys.stdout,
            runs=max(1, args.runs),
            json_path=args.json,
            plot_path=args.plot,
            compare=args.compare,
            rounds=args.rounds or (10 if args.paired else 3),
            model=model,
            only=sections(args.only),
            paired=args.paired,
            quick=args.quick,
        )
    if command == "editors":
        from .tools.editors import main as editors_main

        only = "nvim" if args.nvim else "emacs" if args.emacs else None
        return editors_main(sys.stdout, only)
    if command == "stub":
        from .tools.stub_command import main as stub_main

        return stub_main(sys.stdout, port=args.port, tps=args.tps, text=args.text)
    if command == "doctor":
        import os

        from .tools.doctor import report

        return report(
            sys.stdout, os.environ, probe=not args.no_probe, editor_settings=args.settings
        )
    if command == "serve":
        # Start-up builds ~600 attrs classes (lsprotocol) and frees little, so the cyclic GC only
        # slows it (by ~10% of the cold start, bench): off until the server is built, then its
        # objects are frozen uncollected; the warm-up frees their garbage once the session is
        # quiet (lsp/warmup.py).
        gc.disable()
        from .lsp.server import FasteditServer, register_all

        server = FasteditServer()
        register_all(server)
        gc.freeze()
        gc.enable()
        tcp = getattr(args, "tcp", None)
        if tcp:
            host, port = _tcp_address(tcp)
            if not _is_loopback(host):
                warning = (
                    f"listening on non-loopback {host}: anyone who can connect spends your API key"
                )
                logging.getLogger(__name__).warning(warning)
                if args.log_file:  # the log went to the file: say it on the terminal too
                    sys.stderr.write(f"fastedit-lsp: warning: {warning}\n")
            server.start_tcp(host, port)
        else:
            server.start_io()
    return 0
