"""The `histview` command tree (README, Command line): the headless commands check, fix,
explain, messages, list, and the TUI's `open` (the default), whose arguments are parsed here
before Textual loads.

Runs without Textual or Rich. Every line that carries text from a session goes through
`repair.sanitize`; colour (plain ANSI, severity words and diff markers only) is used only
when stdout is a terminal. Exit status: 0 fine, 1 error-level findings remain (or an
unknown error text for `explain`), 2 the input could not be read or the command refused.
"""

from __future__ import annotations

import argparse
import io
import os
import shlex
import stat
import sys
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, NoReturn, TextIO

from . import targets
from .codes import CODES, NONE, Severity
from .codes import get as code_named
from .errors import ExportRefused, InputError, WriteFailed
from .gcpause import gc_paused
from .jsonio import to_json
from .model import Finding, Session
from .progress import Progress, wants_progress
from .sanitize import clean_line, json_safe
from .targets import TARGETS

if TYPE_CHECKING:
    from .analysis import Analysis
    from .explain import Culprit
    from .plan import Choices, Fix
    from .workbench import ExportResult, Workbench

EXIT_OK, EXIT_FINDINGS, EXIT_INPUT = 0, 1, 2

# ---------------------------------------------------------------- output helpers

_SGR = {"error": "1;31", "warning": "33", "info": "36", "+": "32", "-": "31", "@": "36", "dim": "2"}


@dataclass
class Out:
    """Where a command writes: stdout for results, stderr for errors; colour decided once."""

    stdout: TextIO
    stderr: TextIO
    color: bool
    last_error: str = ""
    # the status line while a file is worked on (stderr at a terminal only: repair.progress)
    progress: Progress | None = None

    def working(self, text: str) -> None:
        """Say what the command is doing now, on the status line (if there is one)."""
        progress = self.progress
        if progress is not None:
            if progress.running:
                progress.show(text)
            else:
                progress.start(text)

    def quiet(self) -> None:
        """The status line erased: the command prints something else."""
        if self.progress is not None:
            self.progress.stop()

    def line(self, text: str = "") -> None:
        self.quiet()
        self.stdout.write(text + "\n")

    def error(self, text: str) -> None:
        self.quiet()
        self.last_error = clean_line(text)
        self.stderr.write("histview: " + self.last_error + "\n")

    def hint(self, text: str) -> None:
        """What to run next, to a person at a terminal only (stderr: stdout's lines stay
        the findings alone, for the tools that read them)."""
        isatty = getattr(self.stdout, "isatty", None)
        if isatty and isatty():
            self.quiet()
            self.stderr.write(text + "\n")

    def paint(self, key: str, text: str) -> str:
        """`text` in colour `key` on a terminal. Only histview's own words are painted."""
        return f"\x1b[{_SGR[key]}m{text}\x1b[0m" if self.color else text


def _wants_color(stream: TextIO) -> bool:
    if os.environ.get("NO_COLOR") or os.environ.get("TERM") == "dumb":
        return False
    isatty = getattr(stream, "isatty", None)
    return bool(isatty and isatty())


def where(finding: Finding) -> str:
    """WHERE of a `FILE:WHERE:` line: the line number for JSONL sources, else the place in
    the JSON document (`messages[3].content[1]`, from the finding's JSON pointer), else
    messages[N] in histview's numbering; '' when nothing is known."""
    said = finding.source.where()
    if said:
        return said
    if finding.message_index is not None:
        w = f"messages[{finding.message_index}]"
        if finding.block_index is not None:
            w += f".content[{finding.block_index}]"
        return w
    return ""


def finding_line(out: Out, file: str, f: Finding) -> str:
    w = where(f)
    head = f"{clean_line(file)}:{w}:" if w else f"{clean_line(file)}:"
    tail = ""
    if f.message_index is not None and (
        f.source.line is not None or f.source.message_number() not in (None, f.message_index)
    ):
        tail = f" (message {f.message_index})"
    return f"{head} {out.paint(f.severity, f.severity)} {f.code} {clean_line(f.detail)}{tail}"


def _plural(n: int, word: str) -> str:
    if n == 1 or word == "info":
        return f"{n} {word}"
    return f"{n} {word}es" if word.endswith("x") else f"{n} {word}s"


def counts_text(counts: dict[str, int]) -> str:
    return ", ".join(_plural(counts.get(s, 0), s) for s in Severity)


def _dumps(obj: Any) -> str:
    return json_safe(to_json(obj).decode())


def _load(
    path: str,
    fmt: str | None,
    target: str | None,
    written: bool = False,
    *,
    exact_numbers: bool = True,
    writes: bool = True,
) -> Session:
    from .formats import load_session

    session = load_session(
        path,
        format=fmt,
        target=target,
        written=written,
        exact_numbers=exact_numbers,
        writes=writes,
    )
    if _kept is not None:
        _kept[:] = [session]  # the last one only: several files must not pile up
    return session


# Sessions the command keeps until the process ends (`keep_until_exit`): freeing a
# 100k-message session object by object costs 0.2 s that nobody waits for.
_kept: list[Session] | None = None


def keep_until_exit() -> None:
    """The process ends with os._exit after this command (the `histview` console script):
    keep what it loads instead of freeing it. Not for a caller that goes on running."""
    global _kept
    _kept = []


def _guard(out: Out, file: str, fn: Callable[[], int]) -> int:
    """Run one file's work, the status line saying what it does meanwhile (at a terminal);
    bad input and unexpected failures end as one line, exit 2.

    The cyclic GC is paused meanwhile: the work builds millions of objects and no cycles
    worth collecting, and each full collection would walk all of them again (a command's
    process ends soon after)."""
    out.working(f"reading {_short_name(file)}")
    try:
        with gc_paused():
            return fn()
    except InputError as exc:
        out.error(str(exc))
    except WriteFailed as exc:
        out.error(f"{file}: {exc}; nothing written")
    except ExportRefused as exc:
        out.error(f"{file}: refused: {exc}; nothing written")
    except (KeyboardInterrupt, BrokenPipeError):
        raise
    except OSError as exc:  # the file system refused something outside a write
        where = f" {exc.filename}" if exc.filename else ""
        out.error(f"{file}: cannot access{where}: {exc.strerror or exc}")
    except Exception as exc:  # a bug must not become a traceback in a user's terminal
        out.error(f"{file}: internal error: {type(exc).__name__}: {exc}")
    finally:
        out.quiet()
    return EXIT_INPUT


# ---------------------------------------------------------------- check


def _thread_findings(session: Session) -> Iterator[tuple[Session, Analysis]]:
    """(session, analysis) for the session and each of its extra threads (sidechains)."""
    from .analysis import analyze

    yield session, analyze(session)
    for thread in session.threads:
        yield thread, analyze(thread, session.target)


def check_json(session: Session, analysis: Analysis) -> dict[str, Any]:
    return {
        "file": session.path,
        "format": session.format,
        "target": analysis.target,
        "messages": analysis.sent,
        "findings": [f.to_json() for f in analysis.findings],
        "summary": analysis.summary(),
    }


def cmd_check(args: argparse.Namespace, out: Out) -> int:
    status = EXIT_OK
    stuck: list[str] = []  # the files with an error or a warning
    for file in args.files:

        def one(file: str = file) -> int:
            # check writes nothing of the session: no scan for odd literals, no CRCs
            session = _load(file, args.format, args.target, exact_numbers=False, writes=False)
            out.working(f"checking {_short_name(file)}")
            worst = EXIT_OK
            for k, (sess, analysis) in enumerate(_thread_findings(session)):
                if analysis.errors:
                    worst = EXIT_FINDINGS
                if any(f.severity is not Severity.INFO for f in analysis.findings):
                    if file not in stuck:
                        stuck.append(file)
                if args.json:
                    obj = check_json(sess, analysis)
                    if k > 0:
                        obj["thread"] = sess.label
                    out.line(_dumps(obj))
                    continue
                for f in analysis.findings:
                    out.line(finding_line(out, sess.path, f))
                out.line(_summary_line(sess, analysis, thread=k > 0))
            return worst

        code = _guard(out, file, one)
        if code == EXIT_INPUT and args.json:
            out.line(_dumps({"file": file, "error": out.last_error}))
        status = max(status, code)
    if stuck and not args.json:
        name = clean_line(shlex.quote(stuck[0]), 200) if len(stuck) == 1 else "FILE"
        out.hint(
            f"next: histview fix {name} shows the repairs and writes nothing; "
            f"histview {name} steps through them"
        )
    return status


def _summary_line(session: Session, analysis: Analysis, *, thread: bool = False) -> str:
    name = clean_line(session.path)
    what = f" thread {clean_line(session.label)}:" if thread and session.label else ""
    n, hidden = analysis.sent, analysis.not_sent
    facts = f"{n} message{'s' if n != 1 else ''}"
    if hidden:
        facts += f" sent, {hidden} not sent"
    facts += f", format {session.format}, target {analysis.target}"
    if not analysis.findings:
        return f"{name}:{what} no problems ({facts})"
    return f"{name}:{what} {counts_text(analysis.counts())} ({facts})"


# ---------------------------------------------------------------- fix


def _parse_codes(value: str, flag: str) -> set[str]:
    codes = {c.strip() for c in value.split(",") if c.strip()}
    bad = sorted(codes - set(CODES))
    if bad:
        raise UsageError(
            f"{flag}: unknown finding code {bad[0]!r}; valid codes: {', '.join(CODES)}"
        )
    if not codes:
        raise UsageError(f"{flag}: give at least one finding code; valid codes: {', '.join(CODES)}")
    return codes


def _parse_strategy(value: str) -> dict[str, str]:
    from . import codes

    out: dict[str, str] = {}
    for item in (p.strip() for p in value.split(",")):
        if not item:
            continue
        code, sep, action = item.partition("=")
        code, action = code.strip(), action.strip()
        if not sep or not action:
            raise UsageError(f"--strategy: expected CODE=ACTION, got {item!r}")
        if code not in codes.BY_NAME:
            raise UsageError(
                f"--strategy: unknown finding code {code!r}; valid codes: {', '.join(CODES)}"
            )
        actions = codes.get(code).actions
        if action not in actions:
            raise UsageError(
                f"--strategy: {action!r} is not an action for {code}; valid: " + ", ".join(actions)
            )
        out[code] = action
    return out


class UsageError(Exception):
    """A bad flag value: one line, exit 2, before anything is read."""


def cmd_fix(args: argparse.Namespace, out: Out) -> int:
    from .plan import Choices

    try:
        only = _parse_codes(args.only, "--only") if args.only else None
        strategy = _parse_strategy(args.strategy) if args.strategy else {}
        if args.report == "":
            raise UsageError(
                "--report: the path is empty; leave --report out for <name>.report.json "
                "beside the output, or name a file"
            )
        if args.output == "":
            raise UsageError("-o: the path is empty; name the file to write")
        if args.force and not args.in_place:
            raise UsageError("--force only applies with --in-place")
    except UsageError as exc:
        out.error(str(exc))
        return EXIT_INPUT
    choices = Choices(by_code=strategy, only=only)
    return _guard(out, args.file, lambda: _fix(args, out, choices))


def fixed(
    path: str,
    fmt: str | None,
    target: str | None,
    choices: Choices,
    *,
    exact_numbers: bool = False,
    status: Callable[[str], None] | None = None,
) -> Workbench:
    """The file loaded and every fix applied (every round, its threads too), as `fix` does.

    Read without the whole-file scan for number literals orjson would change
    (`exact_numbers=False`): whatever writes it (the export, the read-back's bytes) first
    shows that what it wrote reads exactly (`Adapter.reads_numbers_exactly`: a 100 MB
    document written back in 0.1 s, or the records the writer read, scanned), else raises
    InexactNumbers before anything is written; the caller then does it all again with
    `exact_numbers=True` (the rare file with such a literal). `status`: told what it does
    now (the command's status line)."""
    from .workbench import Workbench

    session = _load(path, fmt, target, exact_numbers=exact_numbers)
    if status is not None:
        status(f"repairing {_short_name(path)}")
    wb = Workbench(session, choices)
    wb.apply_all(threads=True)
    return wb


def _fix(args: argparse.Namespace, out: Out, choices: Choices) -> int:
    from .jsonio import InexactNumbers

    try:
        return _fix_once(args, out, choices, exact_numbers=False)
    except InexactNumbers:  # a literal orjson changes: read it again keeping every literal
        return _fix_once(args, out, choices, exact_numbers=True)


def _fix_once(args: argparse.Namespace, out: Out, choices: Choices, *, exact_numbers: bool) -> int:
    from .report import edit_entries, remaining, unfixed

    wb = fixed(
        args.file,
        args.format,
        args.target,
        choices,
        exact_numbers=exact_numbers,
        status=out.working,
    )
    session = wb.original
    thread_fixes = wb.thread_applied
    writing = (args.output or args.in_place) and not args.dry_run
    result = None
    out.working("writing and reading back" if writing else "reading back what a write would give")
    if writing and (wb.changed or not args.in_place):
        result = wb.export(args.output, args.report, in_place=args.in_place, force=args.force)
        checked = result.checked.pairs()
    else:
        # the promise is the read-back of the bytes a write would make: what `check` finds
        checked = wb.read_back().pairs()
    after = checked[0][1]
    errors = any(a.errors for _, a in checked)
    status = EXIT_FINDINGS if errors else EXIT_OK
    if result and (result.late_copy or result.late_error):
        kept = (
            f"what it held then is kept in {result.late_copy}"
            if result.late_copy
            else f"what it held then could not be kept ({result.late_error})"
        )
        out.error(
            f"{session.path}: the file was written to while histview replaced it; {kept}; the "
            "repaired file does not have those last writes. Stop the agent, then repair again"
        )
        status = EXIT_INPUT
    for late in result.thread_late if result else ():
        out.error(
            f"{late}; it was written to while histview replaced it, and the repaired file "
            "does not have those last writes. Stop the agent, then repair again"
        )
        status = EXIT_INPUT

    if args.json:
        obj = {
            "file": session.path,
            "output": result.output if result else None,
            "format": session.format,
            "target": after.target,
            "edits": [e for fix in wb.applied for e in edit_entries(fix)],
            "remaining": remaining(after, checked[0][0], choices),
        }
        if len(checked) > 1 or session.threads:
            obj["threads"] = _threads_json(wb, checked, result)
        out.line(_dumps(obj))
        return status

    name = clean_line(session.path)
    for fix in wb.applied:
        out.line(_fix_line(name, fix))
    for k, fixes in sorted(thread_fixes.items()):
        thread = wb.session.threads[k]
        for fix in fixes:
            out.line(_fix_line(clean_line(thread.path), fix, thread.label))
    for k, (sess, analysis) in enumerate(checked):
        tail = f" (thread {clean_line(sess.label)})" if k else ""
        why = unfixed(sess, analysis, choices)
        for f in analysis.findings:
            if f.severity != "info":
                left = _left_why(why.get(id(f))) or _left_how(f, analysis.target, choices)
                out.line(finding_line(out, sess.path, f) + f" [left as is{left}]" + tail)
    if wb.changed and not result:
        if wb.applied:
            for line in wb.preview_applied().lines():
                out.line(_paint_diff(out, line))
        for k in sorted(thread_fixes):
            out.line(out.paint("dim", f"# thread {clean_line(wb.session.threads[k].label)}"))
            for line in wb.preview_applied(k).lines():
                out.line(_paint_diff(out, line))
    n = len(wb.applied) + sum(len(f) for f in thread_fixes.values())
    left = counts_text(_total_counts(a for _, a in checked))
    if len(checked) > 1:
        k = len(checked) - 1
        left += f" in the conversation and its {'thread' if k == 1 else f'{k} threads'}"
    if result:
        for label, path, backup in result.threads:
            more = f", backup {clean_line(backup)}" if backup else ""
            out.line(f"{name}: wrote {clean_line(path)} (thread {clean_line(label)}{more})")
        extra = "".join(
            f", {label} {clean_line(path)}"
            for label, path in (("report", result.report), ("backup", result.backup))
            if path
        )
        if args.in_place and not result.backup:  # only subagent files needed a change
            out.line(
                f"{name}: unchanged itself; {_plural(n, 'fix')} in its subagent files{extra}; "
                f"now {left}"
            )
        else:
            out.line(
                f"{name}: wrote {clean_line(result.output)} ({_plural(n, 'fix')}{extra}); "
                f"now {left}"
            )

    elif writing:
        out.line(f"{name}: nothing to fix; the file is unchanged ({left})")
    elif not n:
        out.line(f"{name}: nothing to fix ({left})")
    else:
        out.line(
            f"{name}: dry run, nothing written: {_plural(n, 'fix')}; after them {left}. "
            "Write with -o OUT or --in-place."
        )
    return status


def _left_why(why: str | None) -> str:
    return f": {clean_line(why)}" if why else ""


def _left_how(f: Finding, target: str, choices: Choices) -> str:
    """Why a finding `fix` leaves stands, or the option that would fix it: `--only` left
    its code out, or its action is `none` and another one exists (malformed=drop)."""
    if choices.only is not None and f.code not in choices.only:
        return ": not in --only"
    acts = code_named(f.code).actions_for(target)
    other = [a for a in acts if a != NONE]
    if choices.action(f, acts) == NONE and other:
        return f"; to fix it: --strategy {f.code}={other[0]}"
    return ""


def _fix_line(name: str, fix: Fix, thread: str | None = None) -> str:
    w = where(fix.finding)
    head = f"{name}:{w}:" if w else f"{name}:"
    tail = f" (thread {clean_line(thread)})" if thread else ""
    return f"{head} {fix.code} -> {fix.action}: {clean_line(fix.detail)}{tail}"


def _total_counts(analyses: Iterable[Analysis]) -> dict[str, int]:
    total: dict[str, int] = {}
    for a in analyses:
        for sev, n in a.counts().items():
            total[sev] = total.get(sev, 0) + n
    return total


def _threads_json(
    wb: Workbench, checked: list[tuple[Session, Analysis]], result: ExportResult | None
) -> list[dict[str, Any]]:
    """`fix --json` per thread: its fixes' edits and what remains (read back when written)."""
    from .report import edit_entries, remaining
    from .threads import thread_key

    session = checked[0][0]
    edits_by_key = {
        thread_key(wb.session, k): [e for fix in fixes for e in edit_entries(fix)]
        for k, fixes in wb.thread_applied.items()
    }
    written = {os.path.basename(p): p for _, p, _ in (result.threads if result else [])}
    out = []
    for k, (thread, analysis) in enumerate(checked[1:]):
        key = thread_key(session, k)
        out.append(
            {
                "thread": thread.label,
                "file": thread.path,
                "output": (
                    result.output
                    if result and key[0] == "inline"
                    else written.get(key[1])
                    if key[0] == "file"
                    else None
                ),
                "edits": edits_by_key.get(key, []),
                "remaining": remaining(analysis, thread, wb.choices),
            }
        )
    return out


def _paint_diff(out: Out, line: str) -> str:
    if line.startswith("# "):
        return out.paint("dim", line)
    if line[:1] in ("+", "-", "@"):
        return out.paint(line[:1], line)
    return line


# ---------------------------------------------------------------- explain


def cmd_explain(args: argparse.Namespace, out: Out) -> int:
    from . import explain

    matches = explain.match(args.text)
    if not matches:
        out.line(
            "histview does not know this error text. It knows the tool-pairing, duplicate-id, "
            "empty-content and role-order errors of Anthropic, Bedrock Converse and OpenAI "
            "(Chat Completions, Responses); run `histview explain --help` for examples, or "
            "`histview check FILE` to find every problem in the session."
        )
        return EXIT_FINDINGS
    for k, m in enumerate(matches):
        if k:
            out.line()
        for line in explain.describe(m):
            out.line(line)
    if args.file is None:
        out.line()
        out.line("Give the session file as well to see the message and block it points at:")
        out.line('  histview explain "<error text>" FILE')
        return EXIT_OK

    def locate() -> int:
        session = _load(args.file, args.format, args.target)
        for m in matches:
            out.line()
            target = args.target or m.rule.target
            if args.target is None and targets.get(session.target).rules == target:
                target = session.target  # a client that sends to this provider: its request
            culprit = explain.locate(session, m, target)
            lines = explain.describe_culprit(session, m, culprit)
            lines += _explain_commands(session, culprit)
            lines += explain.describe_others(culprit)
            for line in lines:
                if isinstance(line, Finding):
                    out.line("  " + finding_line(out, session.path, line))
                else:
                    out.line(line)
        return EXIT_OK

    return _guard(out, args.file, locate)


def _explain_commands(session: Session, c: Culprit) -> list[str | Finding]:
    """What to run next about the culprit: the command that shows what a client adds, the
    full list when it was cut, the fix limited to the codes behind the error."""
    name = clean_line(session.path)
    out: list[str | Finding] = []
    if c.client_added:
        out.append(f"  `histview messages {name}` shows what {c.target} sends.")
    if c.findings:
        if len(c.findings) > 50:
            out.append(f"  All of them: histview check {name}")
        codes = ",".join(dict.fromkeys(f.code for f in c.findings))
        target = f" --target {c.target}" if c.target != session.target else ""
        out.append(
            f"  Repair: histview fix {name}{target} --only {codes}   "
            "(a dry run; add --in-place to write)"
        )
    return out


# ---------------------------------------------------------------- messages


def cmd_messages(args: argparse.Namespace, out: Out) -> int:
    from .analysis import analyze
    from .wire import request_body

    def one() -> int:
        session = _load(args.file, args.format, args.target)
        if args.json:
            out.line(_dumps(request_body(session)))
            return EXIT_OK
        from .listing import message_listing

        for line in message_listing(session, analyze(session)):
            out.line(line)
        return EXIT_OK

    return _guard(out, args.file, one)


# ---------------------------------------------------------------- list


def cmd_list(args: argparse.Namespace, out: Out) -> int:
    from . import discover

    roots = discover.Roots.from_env(home=args.home, vscode_storage=args.vscode_storage)
    found = discover.find_sessions(roots)
    rows = discover.check_all(found, workers=args.workers)
    if args.json:
        out.line(_dumps([r.to_json() for r in rows]))
        return EXIT_OK
    if not rows:
        out.line("No sessions found. Looked in:")
        for place in roots.describe():
            out.line(f"  {clean_line(place)}")
        return EXIT_OK
    out.line(
        f"{'MODIFIED':16}  {'TOOL':11}  {'FORMAT':12} {'MSGS':>6} {'ERR':>4} {'WARN':>4}  FILE"
    )
    home = roots.home.rstrip(os.sep) + os.sep
    for r in rows:
        shown = "~/" + r.path[len(home) :] if r.path.startswith(home) else r.path
        if r.error is not None:
            out.line(
                f"{r.modified_text():16}  {r.tool:11}  {'?':12} {'':>6} {'':>4} {'':>4}  "
                f"{clean_line(shown)}  {out.paint('error', 'unreadable')}: {clean_line(r.error, 160)}"
            )
            continue
        err = out.paint("error", f"{r.errors:>4}") if r.errors else f"{r.errors:>4}"
        warn = out.paint("warning", f"{r.warnings:>4}") if r.warnings else f"{r.warnings:>4}"
        out.line(
            f"{r.modified_text():16}  {r.tool:11}  {r.format:12} {r.messages:>6} {err} {warn}  "
            f"{clean_line(shown)}"
        )
    return EXIT_OK


# ---------------------------------------------------------------- argparse

_CHECK_EPILOG = """\
examples:
  histview check tasks/7f3a/api_conversation_history.json
      tasks/7f3a/api_conversation_history.json:messages[5].content[0]: error orphan-tool-result tool_result toolu_01X answers no tool_use in the session.
      tasks/7f3a/api_conversation_history.json: 1 error, 0 warnings, 0 info (12 messages, format roo, target anthropic)
  histview check ~/.claude/projects/-home-me-app/*.jsonl      several files; JSONL places are line numbers
  histview check session.json --target bedrock                 Bedrock's stricter rules
  histview check ~/.claude/projects/-home-me-app/3f2c1d.jsonl --target anthropic
                                         the raw history, not what Claude Code sends of it
  histview check rollout.jsonl --target openai-responses       the raw history, not what Codex sends
  histview check session.json --json | jq '.summary'           one JSON object per file, one per line

exit status: 0 no error-level finding, 1 some, 2 a file could not be read (the others are still checked)
"""

_FIX_EPILOG = """\
examples:
  histview fix session.json                      dry run: the plan, one line per fix, and a diff; nothing written
  histview fix session.json -o fixed.json        write the repaired copy and fixed.report.json beside it
  histview fix session.json --in-place           replace the file (keeps session.json.bak, atomic rename)
  histview fix ro.json --in-place --force        replace a read-only file too (its mode is kept)
  histview fix session.json --only orphan-tool-use,duplicate-tool-result
  histview fix session.json --strategy orphan-tool-use=drop-tool-use,orphan-tool-result=to-text
  histview fix session.json --strategy malformed=drop -o fixed.json   drop unreadable records explicitly
  histview fix session.json --json               {file, output, format, target, edits, remaining}

actions per finding code (the first is the default):
{actions}

writing (docs/writing.md): every path is checked before anything is written; the report, the
output and (--in-place) the backup are written whole to temporary files beside their targets, then
renamed into place: backup, report, output. Any failure (a path taken, a full disk, a folder you
cannot write, a report that cannot be encoded) removes what was written and replaces nothing.
  - no existing file is overwritten: -o OUT and --report R must not exist; R may not be the input,
    the output or a backup; the default report is numbered like backups (NAME.report.1.json, ...)
  - --in-place backs up the bytes that were read (FILE.bak, FILE.bak.1, ...; never overwritten)
    and refuses if FILE changed since (inode, size, mtime and content are checked again right
    before the rename). A write that lands in the microseconds between that check and the
    rename is caught afterwards: FILE's content then is saved as the next FILE.bak.N and fix
    exits 2. An agent that keeps FILE open and writes after the rename writes into the old,
    unlinked file: stop the agent before repairing its session in place
  - --in-place on a symlink repairs the file it points to (the link stays; the backup and the
    report go beside that file); a read-only FILE is refused unless --force

to resume the repaired session, the agent must find it under its own name: stop the agent, fix
it --in-place, then resume as usual (claude --resume SESSION_ID, codex resume SESSION_ID,
gemini --resume latest); a repaired opencode export is read back with opencode import OUT

exit status: 0 the output has no error-level finding, 1 it still has some, 2 bad input or a refusal
(malformed records remain, a path is taken, the file changed since it was read, the file system
refused a write): nothing is written
"""

_EXPLAIN_EPILOG = """\
examples:
  histview explain "messages.12: \\`tool_use\\` ids were found without \\`tool_result\\` blocks immediately after: toolu_01A"
  histview explain "messages.4.content.0: unexpected \\`tool_use_id\\` found in \\`tool_result\\` blocks: toolu_01B" \\
      tasks/7f3a/api_conversation_history.json
  histview explain "Expected toolResult blocks at messages.6.content for the following Ids: tooluse_x" session.json
  histview explain "$(pbpaste)" session.json      the whole pasted 400 body works too

messages.N counts the messages that were sent: hidden (condensed, abandoned) and malformed records
are skipped when FILE is mapped. exit status: 0 the text was recognised, 1 unknown text, 2 FILE unreadable
"""

_MESSAGES_EPILOG = """\
examples:
  histview messages sample_sessions/claude_code_parallel_interrupted.jsonl
      messages.1 assistant  (lines 3, 5, 6)
          [0] text "I'll run the three checks in parallel."
          [1] tool_use toolu_01dl7dXTPyLsxPFkThf4VucS Bash {"command":"npm run lint",...}
          [2] tool_use toolu_01mEHgaKwVJ7faC9qEwjky40 Bash {"command":"npx tsc --noEmit",...}
          - tool_use toolu_01rLGlkoMXGjtEkDnNfribxU Bash {"command":"npm test",...}  (left out
            by Claude Code 2.1.197: dropped on resume: a call with no result anywhere)
      messages.2 user  (lines 7, 8, 10)
          [0] tool_result toolu_01mEHgaKwVJ7faC9qEwjky40 (error) "Exit code 2..."
  histview messages session.jsonl --json | jq '.messages | length'
  histview messages session.json --target bedrock     numbered as Bedrock numbers them

messages.N is the number the provider's 400 errors use, counted in its own list: Anthropic and
Bedrock messages, Chat Completions messages (each tool result a `tool` message of its own),
Responses items (each call, output and reasoning item), Gemini turns. A client's file (Claude
Code, Codex, opencode, Gemini CLI) is shown as the client sends it: records merged the way the
client merges them, what it adds on its own marked "+ ... (added by CLIENT)", what it leaves
out "- ... (left out by CLIENT)", what it changes "~ ...". Records that are not sent (an
abandoned branch, history before a compaction, unreadable lines) are shown as a count where
they are. --json prints the list the provider receives under its request key: {"messages":
[...]}, {"input": [...]} (Responses) or {"contents": [...]} (Gemini). exit status: 0, 2
unreadable
"""

_LIST_EPILOG = """\
examples:
  histview list
      MODIFIED          TOOL         FORMAT         MSGS  ERR WARN  FILE
      2026-07-02 09:14  claude-code  claude-code     412    2    0  ~/.claude/projects/-home-me-app/3f2c1d.jsonl
      2026-07-01 17:40  roo          roo              88    0    1  ~/.config/Code/User/globalStorage/rooveterinaryinc.roo-cline/tasks/7f3a/api_conversation_history.json
  histview list --json | jq '.[] | select(.errors > 0) | .file'

looks in: ~/.claude/projects/*/*.jsonl (Claude Code), ~/.codex/sessions/**/rollout-*.jsonl (Codex),
~/.gemini/tmp/*/chats/session-*.jsonl and session-*.json (Gemini CLI),
VS Code globalStorage/{rooveterinaryinc.roo-cline,kilocode.kilo-code,saoudrizwan.claude-dev}/tasks/*/
api_conversation_history.json (Roo Code, Kilo Code, Cline). $HISTVIEW_HOME replaces ~ and
$HISTVIEW_VSCODE_STORAGE the globalStorage folder (or use --home / --vscode-storage)

exit status: 0 (a file that cannot be read is listed with the reason)
"""


def _client_targets() -> str:
    return ", ".join(f"{t.name}: {t.provider}" for t in map(targets.get, TARGETS) if t.is_client)


def _actions_table() -> str:
    from . import codes

    return "\n".join(f"  {c.name:27} {', '.join(c.actions)}" for c in codes.BY_NAME.values())


_ROOT_EPILOG = """\
examples:
  histview                                  the TUI on a demo session shipped with histview
  histview ~/.claude/projects/-home-me-app/3f2c1d.jsonl     the TUI on a session
  histview ~/.claude/projects               the TUI's list of the sessions under a folder
  histview check session.json               every problem, one line each
  histview fix session.json -o fixed.json   repair a copy (without -o: a dry run)

`open` is the default command: `histview FILE` is `histview open FILE`. The TUI is the only
command that loads Textual. `histview COMMAND --help` shows each command with examples.
"""

_OPEN_EPILOG = """\
examples:
  histview tasks/7f3a                       a Roo Code, Kilo Code or Cline task folder
  histview session.jsonl --target anthropic judge the raw history, not what Claude Code sends
  histview ~/.codex/sessions                the sessions under a folder, newest first
  histview --pick                           your recent sessions (where `histview list` looks)

press ? in the TUI for every key, ctrl+p for the command palette.
exit status: 0, 2 the file could not be read
"""


class _Version(argparse.Action):
    """--version: the version the package declares (repair.__version__, which pyproject.toml
    reads), printed without looking up the installed metadata (importlib.metadata costs more
    than the rest of the start-up)."""

    def __init__(
        self,
        option_strings: Sequence[str],
        dest: str = argparse.SUPPRESS,
        default: Any = argparse.SUPPRESS,
        help: str | None = None,
    ) -> None:
        super().__init__(option_strings, dest=dest, default=default, nargs=0, help=help)

    def __call__(
        self,
        parser: argparse.ArgumentParser,
        namespace: argparse.Namespace,
        values: Any,
        option_string: str | None = None,
    ) -> NoReturn:
        from . import __version__

        sys.stdout.write(f"histview {__version__}\n")
        parser.exit()


def build_parser() -> argparse.ArgumentParser:
    """The whole `histview` command tree, the TUI's `open` included (its arguments only: the
    TUI itself is started by the caller of `main`, see `open_tui`)."""
    raw = argparse.RawDescriptionHelpFormatter
    parser = argparse.ArgumentParser(
        prog="histview",
        description="Open, explain and repair broken LLM-agent session histories (Claude Code,\n"
        "Codex, opencode, Gemini CLI, Roo Code / Cline / Kilo, Anthropic, Bedrock and OpenAI\n"
        "message lists).",
        epilog=_ROOT_EPILOG,
        formatter_class=raw,
    )
    parser.add_argument("--version", action=_Version, help="print the version and exit")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", title="commands")
    sub.required = True

    def session_opts(p: argparse.ArgumentParser) -> None:
        p.add_argument("--format", help="read as this format instead of detecting it")
        p.add_argument(
            "--target",
            choices=TARGETS,
            help="who reads the history next: a provider judges the raw history by its rules; "
            f"an agent client ({_client_targets()}) judges what it sends when it resumes a "
            "file of its own format, its own repairs as warnings. Default: the client for its "
            "own files, else the format's provider",
        )

    p = sub.add_parser(
        "open",
        help="the TUI: the timeline, the findings, the repairs with a preview (the default)",
        description="Open a session in the interactive viewer: every message and tool call on\n"
        "a linked timeline, what the provider rejects, and the repairs one by one with a\n"
        "preview of each, then export.",
        epilog=_OPEN_EPILOG,
        formatter_class=raw,
    )
    p.add_argument(
        "file",
        nargs="?",
        metavar="FILE|FOLDER",
        help="session file or task folder; any other folder lists the sessions under it "
        "(default: a demo session)",
    )
    p.add_argument(
        "--pick",
        action="store_true",
        help="choose among your recent sessions (the places `histview list` searches)",
    )
    session_opts(p)
    p.set_defaults(run=cmd_open)

    p = sub.add_parser(
        "check",
        help="list every problem in session files",
        description="Report each problem as FILE:WHERE: severity code detail, then a summary "
        "line per file. WHERE is the line for JSONL files, messages[N] for JSON documents.",
        epilog=_CHECK_EPILOG,
        formatter_class=raw,
    )
    p.add_argument("files", nargs="+", metavar="FILE", help="session files or task folders")
    p.add_argument("--json", action="store_true", help="one JSON object per file, one per line")
    session_opts(p)
    p.set_defaults(run=cmd_check)

    p = sub.add_parser(
        "fix",
        help="repair a session (dry run unless -o or --in-place)",
        description="Plan the repairs for every finding and show them with a diff. Nothing is "
        "written unless -o or --in-place is given.",
        epilog=_FIX_EPILOG.replace("{actions}", _actions_table()),
        formatter_class=raw,
    )
    p.add_argument("file", metavar="FILE", help="the session file or task folder to repair")
    dest = p.add_mutually_exclusive_group()
    dest.add_argument("-o", "--output", metavar="OUT", help="write the repaired session to OUT")
    dest.add_argument(
        "--in-place", action="store_true", help="replace FILE, keeping FILE.bak (FILE.bak.1, ...)"
    )
    p.add_argument(
        "--force",
        action="store_true",
        help="with --in-place: replace FILE even when it is read-only (its mode is kept)",
    )
    p.add_argument("--dry-run", action="store_true", help="only show the plan, even with -o")
    p.add_argument("--only", metavar="CODE,...", help="fix only findings with these codes")
    p.add_argument("--strategy", metavar="CODE=ACTION,...", help="choose another action for a code")
    p.add_argument(
        "--report",
        metavar="R.json",
        help="where to write the report; must not exist (default: <name>.report.json beside "
        "the output, numbered .report.1.json, ... when taken)",
    )
    p.add_argument("--json", action="store_true", help="print the result as one JSON object")
    session_opts(p)
    p.set_defaults(run=cmd_fix)

    p = sub.add_parser(
        "explain",
        help="map a provider's 400 error text to its rule (and, with FILE, to the culprit)",
        description="Recognise an API error text (Anthropic, Bedrock, OpenAI), name the rule "
        "it enforces and the finding codes that cause it; with FILE, point at the message and "
        "block it names and the findings there.",
        epilog=_EXPLAIN_EPILOG,
        formatter_class=raw,
    )
    p.add_argument("text", metavar="ERROR_TEXT", help="the error text, quoted")
    p.add_argument("file", nargs="?", metavar="FILE", help="the session that was sent")
    session_opts(p)
    p.set_defaults(run=cmd_explain)

    p = sub.add_parser(
        "messages",
        help="the messages the provider receives, numbered as its errors number them",
        description="Print the conversation as it is sent: one entry per message, numbered "
        "messages.N like the provider's errors, with its blocks, where it is in the file and "
        "the findings on it. --json prints the provider's request list itself.",
        epilog=_MESSAGES_EPILOG,
        formatter_class=raw,
    )
    p.add_argument("file", metavar="FILE", help="the session file or task folder")
    p.add_argument(
        "--json", action="store_true", help="print the request list the provider receives"
    )
    session_opts(p)
    p.set_defaults(run=cmd_messages)

    p = sub.add_parser(
        "list",
        help="recent sessions where the agents keep them, with their health",
        description="Find Claude Code, Codex, Gemini CLI, Roo Code, Kilo Code and Cline "
        "sessions, newest first, and check each (in parallel).",
        epilog=_LIST_EPILOG,
        formatter_class=raw,
    )
    p.add_argument("--json", action="store_true", help="print a JSON list")
    p.add_argument("--home", help="home folder to search (default $HISTVIEW_HOME or ~)")
    p.add_argument(
        "--vscode-storage",
        metavar="DIR",
        help="VS Code globalStorage folder (default $HISTVIEW_VSCODE_STORAGE or the usual places)",
    )
    p.add_argument("--workers", type=int, default=None, help=argparse.SUPPRESS)
    p.set_defaults(run=cmd_list)
    return parser


COMMANDS = ("open", "check", "fix", "explain", "messages", "list")
_ROOT_OPTIONS = ("-h", "--help", "--version")


def _short_name(path: str) -> str:
    """A file as the status line names it: its name (the user gave the path), made safe."""
    return clean_line(os.path.basename(path.rstrip("/")) or path, 40)


def _progress(stdout: TextIO, stderr: TextIO) -> Progress | None:
    """The status line: on a terminal's stderr, unless TERM is dumb (no line redrawn) or
    stdout is a pipe (`| less`: a pager draws on the same terminal)."""
    if os.environ.get("TERM") == "dumb" or not wants_progress(stderr) or _is_pipe(stdout):
        return None
    return Progress(stderr)


def _is_pipe(stream: TextIO) -> bool:
    try:
        return stat.S_ISFIFO(os.fstat(stream.fileno()).st_mode)
    except (OSError, ValueError, AttributeError, io.UnsupportedOperation):
        return False  # (no file behind it: a test's buffer)


def with_default_command(argv: list[str]) -> list[str]:
    """`open` is the default command: `histview`, `histview FILE` and `histview --pick` open
    the TUI (a first argument that names no command and is not -h/--help/--version)."""
    if argv and (argv[0] in COMMANDS or argv[0] in _ROOT_OPTIONS):
        return argv
    return ["open", *argv]


def cmd_open(args: argparse.Namespace, out: Out) -> int:
    """The TUI's path is checked here, before Textual loads: a typo is told on the command
    line, not on a full screen. Then the caller's `open_tui` runs it."""
    path = args.file
    if path and not os.path.exists(path):
        out.error(f"{path}: no such file or folder")
        return EXIT_INPUT
    if path and os.path.isfile(path) and not os.access(path, os.R_OK):
        out.error(f"{path}: cannot read: permission denied")
        return EXIT_INPUT
    if args.open_tui is None:
        out.error("open: the TUI is started by the histview command (tui.cli)")
        return EXIT_INPUT
    status: int = args.open_tui(args)
    return status


def main(
    argv: list[str] | None = None,
    stdout: TextIO | None = None,
    stderr: TextIO | None = None,
    *,
    open_tui: Callable[[argparse.Namespace], int] | None = None,
) -> int:
    """Run one `histview` command line. `open_tui(args)` runs the TUI for `open` (the engine
    does not know Textual: `tui.cli` passes it)."""
    stdout = stdout or sys.stdout
    stderr = stderr or sys.stderr
    for stream in (stdout, stderr):
        reconf = getattr(stream, "reconfigure", None)
        if reconf is not None:
            try:
                reconf(errors="backslashreplace")
            except (ValueError, OSError):
                pass
    parser = build_parser()
    args = parser.parse_args(with_default_command(list(sys.argv[1:] if argv is None else argv)))
    args.open_tui = open_tui
    out = Out(stdout, stderr, _wants_color(stdout), progress=_progress(stdout, stderr))
    try:
        status: int = args.run(args, out)  # the command's cmd_* function
        return status
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:
        # The reader (head, less) went away: stop quietly, and point stdout at /dev/null so
        # the interpreter's final flush does not complain either.
        try:
            devnull = os.open(os.devnull, os.O_WRONLY)
            os.dup2(devnull, stdout.fileno())
        except (OSError, ValueError, AttributeError, io.UnsupportedOperation):
            pass
        return EXIT_OK
