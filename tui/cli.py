"""The `histview` console script. The command tree is `repair.cli` (parsed without Textual);
only `open`, the TUI, imports Textual, after its arguments were read."""

from __future__ import annotations

import argparse
import sys


def open_tui(args: argparse.Namespace) -> int:
    from tui.app import run_tui

    return run_tui(args.file, format=args.format, target=args.target, pick=args.pick)


def main(argv: list[str] | None = None) -> int:
    from repair.cli import main as run

    return run(argv, open_tui=open_tui)


if __name__ == "__main__":
    sys.exit(main())
