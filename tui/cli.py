"""The `histview` command. Subcommands (check, fix, explain, messages, list) run the headless CLI in
`repair.cli` without importing Textual; anything else opens the TUI."""

from __future__ import annotations

import sys

HEADLESS = ("check", "fix", "explain", "messages", "list")


def main(argv: list[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv and argv[0] in HEADLESS:
        from repair.cli import main as headless

        return headless(argv)
    from tui.app import main as tui_main

    return tui_main(argv)


if __name__ == "__main__":
    sys.exit(main())
