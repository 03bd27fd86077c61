"""`histview ARGV` run in the test's process, as the layers' tests run it."""

from __future__ import annotations

import io
from contextlib import redirect_stderr, redirect_stdout

from repair.cli import main


def run(*argv: object) -> tuple[int, str, str]:
    """The exit status and what the command printed on stdout and stderr (argparse's usage
    errors included). Arguments are passed as str(arg): paths may be given as Paths."""
    out, err = io.StringIO(), io.StringIO()
    with redirect_stdout(out), redirect_stderr(err):
        code = main([str(a) for a in argv], stdout=out, stderr=err)
    return code, out.getvalue(), err.getvalue()
