"""The `histview` console script. The command tree is `repair.cli` (parsed without Textual);
only `open`, the TUI, imports Textual, after its arguments were read."""

from __future__ import annotations

import argparse
import os
import sys

HEADLESS = ("check", "fix", "explain", "messages", "list")


def open_tui(args: argparse.Namespace) -> int:
    from tui.app import run_tui

    return run_tui(args.file, format=args.format, target=args.target, pick=args.pick)


def main(argv: list[str] | None = None) -> int:
    from repair.cli import keep_until_exit
    from repair.cli import main as run

    args = list(sys.argv[1:] if argv is None else argv)
    # run as the command (not called with arguments): a headless command ends at once
    headless = argv is None and bool(args) and args[0] in HEADLESS
    if headless:
        keep_until_exit()
    code = run(args, open_tui=open_tui)
    if headless:
        _exit_now(code)
    return code


def _exit_now(code: int) -> None:
    """End the command without tearing down what it built: freeing a 100k-message session
    object by object (and the interpreter's last collections) costs 0.2-0.6 s and changes
    nothing. Everything is written and closed by now; only the standard streams need a flush."""
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError):
            pass  # the reader went away (`histview check | head`): nothing more can be said
    os._exit(code)


if __name__ == "__main__":
    sys.exit(main())
