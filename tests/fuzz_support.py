"""Mutating real session files and checking what histview promises about any input.

Shared by the hypothesis test (tests/formats/test_fuzz.py, a short deterministic run for CI) and
`bench/fuzz.py` (a long run started by hand). A case is one seed file (every sample in
sample_sessions/, every corpus file in ../shared/corpus, whatever formats exist, and the
broken session files of the client tests) with one
to a few random mutations: of its structure (odd types where strings, lists or ids belong,
dropped/duplicated/moved items), of its numbers (ints above 2^64, floats that overflow,
literals a double cannot keep), of its strings (lone surrogates, invisible and control
characters, markup) and of its bytes (truncation, flipped bytes, lines dropped, duplicated,
swapped). `check_case` then runs the public functions and the CLI on it and raises
`Broken` with what did not hold:

- no exception escapes: the input is read, or refused with an InputError (exit 2, one line);
- `check` and `check --json` never say "internal error"; `--json` lines are JSON;
- `messages` and `messages --json` (the file's target and one provider's wire shape) never
  say "internal error"; `--json` writes no number the file does not hold as written;
- `fix -o` writes output and report, or refuses in one line and writes nothing;
- the written output is read back as the same format, with the exit status `fix` gave;
- fixing the output again changes nothing (same bytes, no fix applied);
- every string and number literal of the input is in the output or the report.
"""

from __future__ import annotations

import copy
import io
import json
import random
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tests.paths import CLIENT_FIXTURES, DATA, REPO, SAMPLES, SHARED

# Keys whose values the loaders look at first: mutations aim at them half of the time.
HOT_KEYS = frozenset(
    {
        "type",
        "role",
        "id",
        "tool_use_id",
        "content",
        "text",
        "name",
        "input",
        "isSidechain",
        "uuid",
        "parentUuid",
        "sessionId",
        "timestamp",
        "ts",
        "message",
        "messages",
        "parts",
        "info",
        "state",
        "status",
        "callID",
        "tool",
        "time",
        "created",
        "start",
        "end",
        "payload",
        "call_id",
        "output",
        "arguments",
        "tool_calls",
        "tool_call_id",
        "function",
        "is_error",
        "toolCallId",
        "toolName",
        "version",
        "subtype",
        "compactMetadata",
        "isApiErrorMessage",
        "model",
        "system",
        "condenseParent",
        "truncationParent",
        "isSummary",
        "error",
        "functionCall",
        "functionResponse",
        "toolUse",
        "toolResult",
        "toolUseId",
    }
)


class Lit:
    """A number literal written into a mutated file verbatim."""

    __slots__ = ("text",)

    def __init__(self, text: str) -> None:
        self.text = text


NUMBERS = (
    "123456789012345678901234567890",
    "-123456789012345678901234567890",
    "18446744073709551616",
    "9223372036854775808",
    "-9223372036854775809",
    "1e400",
    "-1e400",
    "1e-400",
    "1E2",
    "1.50",
    "-0",
    "0.0000015",
    "1e16",
    "100000000000000000000",
    "2.5e+25",
    "0.30000000000000004",
    "1" + "0" * 400,
    "1.0000000000000000000000001",
)

STRINGS = (
    "",
    " ",
    "\n\t  ",
    "\ud800",
    "a\udc00b",
    "\udbff",
    "\u200b",
    "id\u200d",
    "\ufeff",
    "\u2060",
    "\u00ad",
    "\U000e0041\U000e0042",
    "\u206a",
    "\u3164",
    "\u115f",
    "\u202etxt.exe",
    "\x1b[31mred\x1b[0m",
    "\x00",
    "\x07\x08",
    "[bold red]markup[/]",
    "toolu_01",
    "call_1",
    "x" * 5000,
    "😀",
    "user",
    "assistant",
    "tool_use",
    "tool_result",
    "text",
    "system",
)


def odd_value(rng: random.Random, pool: list[Any]) -> Any:
    """A value of the wrong type, size or content for wherever it lands."""
    pick = rng.random()
    if pick < 0.25:
        return rng.choice(
            [[], {}, ["x"], {"a": 1}, [1, 2], {"type": "text"}, 0, -1, 1.5, True, False, None]
        )
    if pick < 0.45:
        return Lit(rng.choice(NUMBERS))
    if pick < 0.75:
        return rng.choice(STRINGS)
    if pick < 0.8:
        depth = rng.choice((50, 255, 300, 600))
        v: Any = "deep"
        for _ in range(depth):
            v = [v] if rng.random() < 0.5 else {"k": v}
        return v
    if pool:
        return copy.deepcopy(rng.choice(pool))
    return None


# ---------------------------------------------------------------------------- reading


def parse(text: str) -> Any:
    """A seed (or a mutated line) as Python values; number literals kept as `Lit`."""
    return json.loads(text, parse_int=Lit, parse_float=Lit, parse_constant=Lit)


def serialize(obj: Any, compact: bool = True, indent: int | None = None) -> bytes:
    lits: list[str] = []

    def default(o: Any) -> str:
        if isinstance(o, Lit):
            lits.append(o.text)
            return f"@@lit{len(lits) - 1}@@"
        raise TypeError(type(o))

    text = json.dumps(
        obj,
        ensure_ascii=False,
        default=default,
        indent=indent,
        separators=(",", ":") if compact and indent is None else None,
        check_circular=False,
    )
    if lits:
        text = re.sub(r'"@@lit(\d+)@@"', lambda m: lits[int(m.group(1))], text)
    return text.encode("utf-8", "backslashreplace")


def positions(obj: Any, out: list, depth: int = 0) -> None:
    """Every (container, key) in the tree, breadth limited to keep big files fast."""
    if depth > 40:
        return
    if isinstance(obj, dict):
        for k, v in obj.items():
            out.append((obj, k))
            positions(v, out, depth + 1)
    elif isinstance(obj, list):
        for i, v in enumerate(obj):
            out.append((obj, i))
            positions(v, out, depth + 1)


def strings_in(obj: Any, out: set[str]) -> None:
    stack = [obj]
    while stack:
        o = stack.pop()
        if isinstance(o, str):
            out.add(o)
        elif isinstance(o, dict):
            out.update(k for k in o)
            stack.extend(o.values())
        elif isinstance(o, list):
            stack.extend(o)


def numbers_in(obj: Any, out: set[str]) -> None:
    stack = [obj]
    while stack:
        o = stack.pop()
        if isinstance(o, Lit):
            out.add(o.text)
        elif isinstance(o, dict):
            stack.extend(o.values())
        elif isinstance(o, list):
            stack.extend(o)


# ---------------------------------------------------------------------------- seeds


@dataclass(frozen=True)
class Seed:
    name: str  # relative name, for messages
    suffix: str  # ".json" | ".jsonl"
    data: bytes = field(repr=False)


def seeds() -> list[Seed]:
    """Every sample session and every corpus file (whatever formats exist now), and the
    session files the client tests resume (broken on purpose, one fault each; the Gemini CLI
    chats, the single-object `.json` one included)."""
    found: list[Path] = []
    found += sorted(SAMPLES.glob("*.json*"))
    found += sorted(p for p in DATA.rglob("*.json*") if p.name != "requests.json")
    clients = CLIENT_FIXTURES
    found += sorted((clients / "claude" / "broken").glob("*.jsonl"))
    found += sorted((clients / "codex").glob("*.jsonl"))
    found += sorted(p for p in (clients / "opencode").glob("*.json") if ".sent." not in p.name)
    corpus = SHARED / "corpus"
    if corpus.is_dir():
        found += sorted(p for p in corpus.rglob("*.json*") if not p.name.endswith(".meta.json"))
    out = []
    for p in found:
        if p.suffix not in (".json", ".jsonl"):
            continue
        name = str(p.relative_to(REPO.parent)) if p.is_relative_to(REPO.parent) else p.name
        out.append(Seed(name, p.suffix, p.read_bytes()))
    return out


def seeds_that_load(keep: Callable[[Seed, Any], bool]) -> list[Seed]:
    """The seeds that load (under their own file name) as a session `keep(seed, session)`
    takes: the files a test of some formats runs on."""
    from repair.errors import InputError
    from repair.formats import load_bytes

    out = []
    for seed in seeds():
        try:
            session = load_bytes(seed.data, f"/tmp/{seed.name.split('/')[-1]}")
        except InputError:
            continue
        if keep(seed, session):
            out.append(seed)
    return out


# ---------------------------------------------------------------------------- mutation


def mutate(seed: Seed, rng: random.Random, count: int = 1) -> tuple[bytes, list[str]]:
    """The seed with `count` random mutations; returns the bytes and what was done."""
    data = seed.data
    done: list[str] = []
    for _ in range(count):
        kind = rng.random()
        if kind < 0.6:
            try:
                data, what = _mutate_structure(data, seed.suffix, rng)
            except RecursionError:  # nested deeper than the stdlib writes
                data, what = _mutate_bytes(data, rng)
        elif kind < 0.8:
            data, what = _mutate_text(data, rng)
        else:
            data, what = _mutate_bytes(data, rng)
        done.append(what)
    return data, done


def over_mutated_seeds(
    seeds: list[Seed], examples: int, **ranges: tuple[int, int]
) -> Callable[[Callable[..., None]], Callable[..., None]]:
    """The settings and draws of a property over mutated seed files: `which` seed, an
    `rng_seed`, and each of `ranges` (a name and its inclusive bounds: how many mutations,
    how many steps), deterministic, as many `examples`. (Hypothesis is imported here:
    bench/fuzz.py uses this module without it.)"""
    from hypothesis import HealthCheck, given, settings
    from hypothesis import strategies as st

    draws = {
        "which": st.integers(0, max(len(seeds) - 1, 0)),
        "rng_seed": st.integers(0, 2**32 - 1),
        **{name: st.integers(lo, hi) for name, (lo, hi) in ranges.items()},
    }
    return lambda test: settings(
        max_examples=examples,
        deadline=None,
        derandomize=True,
        database=None,
        suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
    )(given(**draws)(test))


def mutated_session(seed: Seed, rng: random.Random, count: int, path: str | None = None) -> Any:
    """The seed with `count` random mutations (none: as it is), loaded as `path` (default: a
    file named like the seed), or None when it is refused as input; the mutations are noted
    for hypothesis's report."""
    from hypothesis import note

    from repair.errors import InputError
    from repair.formats import load_bytes

    data, how = mutate(seed, rng, count) if count else (seed.data, [])
    note(f"{seed.name}: {'; '.join(how)}")
    try:
        return load_bytes(data, path or f"/tmp/input{seed.suffix}")
    except InputError:
        return None


def _split_jsonl(data: bytes) -> list[bytes]:
    return data.split(b"\n")


def _mutate_structure(data: bytes, suffix: str, rng: random.Random) -> tuple[bytes, str]:
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        return _mutate_bytes(data, rng)
    if suffix == ".jsonl" or "\n{" in text[:-1] and not text.lstrip().startswith(("[", "{\n")):
        lines = _split_jsonl(data)
        idxs = [i for i, ln in enumerate(lines) if ln.strip()]
        if not idxs:
            return _mutate_bytes(data, rng)
        i = rng.choice(idxs)
        try:
            obj = parse(lines[i].decode("utf-8"))
        except (ValueError, RecursionError):
            return _mutate_bytes(data, rng)
        pool = _pool(obj, lines, rng)
        obj, what = _mutate_tree(obj, rng, pool)
        lines[i] = serialize(obj)
        return b"\n".join(lines), f"line {i + 1}: {what}"
    try:
        obj = parse(text.lstrip("\ufeff"))
    except (ValueError, RecursionError):
        return _mutate_bytes(data, rng)
    obj, what = _mutate_tree(obj, rng, _pool(obj, [], rng))
    indent = 2 if rng.random() < 0.3 else None
    return serialize(obj, compact=rng.random() < 0.7, indent=indent), what


def _pool(obj: Any, lines: list[bytes], rng: random.Random) -> list[Any]:
    """Values from elsewhere in the file (ids, blocks, records) to move around."""
    pos: list = []
    positions(obj, pos)
    pool = [c[k] for c, k in rng.sample(pos, min(len(pos), 30))] if pos else []
    for ln in rng.sample(lines, min(len(lines), 3)):
        try:
            pool.append(parse(ln.decode("utf-8")))
        except (ValueError, UnicodeDecodeError, RecursionError):
            pass
    return pool


def _mutate_tree(obj: Any, rng: random.Random, pool: list[Any]) -> tuple[Any, str]:
    pos: list = []
    positions(obj, pos)
    if not pos:
        return odd_value(rng, pool), "replaced the whole value"
    hot = [p for p in pos if isinstance(p[1], str) and p[1] in HOT_KEYS]
    container, key = rng.choice(hot if hot and rng.random() < 0.5 else pos)
    op = rng.random()
    if op < 0.55:
        new = odd_value(rng, pool)
        container[key] = new
        return obj, f"{key!r} = {_short(new)}"
    if op < 0.65:
        del container[key]
        return obj, f"deleted {key!r}"
    if isinstance(container, list):
        if op < 0.75:
            container.insert(rng.randrange(len(container) + 1), container[key])
            return obj, f"duplicated item {key}"
        if op < 0.85 and len(container) > 1:
            j = rng.randrange(len(container))
            container[key], container[j] = container[j], container[key]
            return obj, f"swapped items {key} and {j}"
        item = copy.deepcopy(rng.choice(pool)) if pool else None
        container.insert(rng.randrange(len(container) + 1), item)
        return obj, f"inserted {_short(item)}"
    if op < 0.8:
        container[rng.choice(sorted(HOT_KEYS))] = odd_value(rng, pool)
        return obj, "added a key"
    container[key] = [container[key]]
    return obj, f"wrapped {key!r} in a list"


def _short(v: Any) -> str:
    if isinstance(v, Lit):
        return v.text[:40]
    try:
        return json.dumps(v, ensure_ascii=True, default=str)[:60]
    except (ValueError, RecursionError):
        return type(v).__name__


_NUMBER = re.compile(rb"(?<=[:\[,])\s*-?\d+(?:\.\d+)?(?:[eE][-+]?\d+)?")
_STRING_START = re.compile(rb'(?<=[:\[,])\s*"')


def _mutate_text(data: bytes, rng: random.Random) -> tuple[bytes, str]:
    pick = rng.random()
    if pick < 0.5:
        found = list(_NUMBER.finditer(data[:2_000_000]))
        if found:
            m = rng.choice(found)
            lit = rng.choice(NUMBERS).encode()
            return data[: m.start()] + lit + data[m.end() :], f"number -> {lit.decode()[:40]}"
    found = list(_STRING_START.finditer(data[:2_000_000]))
    if not found:
        return _mutate_bytes(data, rng)
    m = rng.choice(found)
    piece = rng.choice(
        [b"\\ud800", b"\\udfff", b"\\u200b", b"\\u202e", b"\\u001b[2J", b"\\ufeff", b"\\u0000"]
    )
    return data[: m.end()] + piece + data[m.end() :], f"string gets {piece.decode()}"


def _mutate_bytes(data: bytes, rng: random.Random) -> tuple[bytes, str]:
    pick = rng.random()
    lines = data.split(b"\n")
    if pick < 0.15 and data:
        cut = rng.randrange(len(data))
        return data[:cut], f"truncated at byte {cut}"
    if pick < 0.3 and data:
        at = rng.randrange(len(data))
        b = bytes([rng.randrange(256)])
        return data[:at] + b + data[at + 1 :], f"byte {at} -> {b!r}"
    if pick < 0.45 and len(lines) > 2:
        i = rng.randrange(len(lines))
        del lines[i]
        return b"\n".join(lines), f"deleted line {i + 1}"
    if pick < 0.6 and len(lines) > 1:
        i = rng.randrange(len(lines))
        lines.insert(rng.randrange(len(lines) + 1), lines[i])
        return b"\n".join(lines), f"duplicated line {i + 1}"
    if pick < 0.75 and len(lines) > 2:
        i, j = rng.randrange(len(lines)), rng.randrange(len(lines))
        lines[i], lines[j] = lines[j], lines[i]
        return b"\n".join(lines), f"swapped lines {i + 1} and {j + 1}"
    if pick < 0.85:
        return b"\xef\xbb\xbf" + data.replace(b"\n", b"\r\n"), "BOM and CRLF"
    junk = rng.choice([b"{", b"}", b"[]", b"null", b"\x00", b"\xff\xfe", b'"x"', b"1e400", b","])
    at = rng.randrange(len(data) + 1)
    return data[:at] + junk + data[at:], f"inserted {junk!r} at byte {at}"


# ---------------------------------------------------------------------------- checking


# Each case also renders the request under one of these (chosen by the case's size).
PROVIDERS = ("anthropic", "bedrock", "openai-chat", "openai-responses", "gemini")

# A real Anthropic 400 text, so `explain` maps it onto the mutated file.
EXPLAIN_TEXT = (
    "messages.3: `tool_use` ids were found without `tool_result` blocks immediately after: toolu_01"
)


class Broken(AssertionError):
    """A promise that did not hold for one case."""


@dataclass
class Ran:
    code: int
    out: str
    err: str


def cli(*argv: str) -> Ran:
    from repair.cli import main

    out, err = io.StringIO(), io.StringIO()
    code = main(list(argv), stdout=out, stderr=err)
    return Ran(code, out.getvalue(), err.getvalue())


def _one_line_refusal(r: Ran, what: str) -> None:
    if "internal error" in r.err or "Traceback" in r.err:
        raise Broken(f"{what}: {r.err.strip()}")
    if r.code == 2 and r.err.count("\n") != 1:
        raise Broken(f"{what}: exit 2 without exactly one error line: {r.err!r}")


def _values(data: bytes) -> list[Any]:
    """The JSON values of a file (one, or one per JSONL line), numbers kept as literals; a
    line that is not UTF-8 JSON counts as its text (histview keeps such a line as text)."""
    if data.startswith(b"\xef\xbb\xbf"):
        data = data[3:]
    try:
        return [parse(data.decode("utf-8"))]
    except (ValueError, RecursionError):
        pass
    out: list[Any] = []
    for raw in data.split(b"\n"):
        raw = raw.rstrip(b"\r")
        if not raw.strip():
            continue
        try:
            out.append(parse(raw.decode("utf-8")))
        except (ValueError, RecursionError):
            out.append(raw.decode("utf-8", "replace"))
    return out


def show(session, analysis) -> None:
    """What the TUI renders for a session (rows, gutter, summaries, detail, raw JSON): the
    pure functions, without an app."""
    from tui.detail import message_detail, raw_json
    from tui.lanes import layout
    from tui.rows import build_rows, summary

    table = build_rows(session, analysis)
    layout(analysis.pairing, table)
    by_message = analysis.by_message()
    for row in table.rows[:400]:
        summary(session, row, 120)
        message_detail(session, row, by_message.get(row.mi, []))
    for msg in session.messages[:200]:
        raw_json(msg)


def check_case(data: bytes, suffix: str, work: Path) -> str:
    """Run one case; returns how it ended ("refused", "clean", "fixed", ...) or raises
    Broken. Any other exception is a crash and propagates."""
    from repair.analysis import analyze
    from repair.errors import InputError
    from repair.formats import load_bytes, load_session
    from repair.listing import message_listing
    from repair.plan import Choices
    from repair.workbench import Workbench

    path = work / f"case{suffix}"
    path.write_bytes(data)
    for p in work.glob("out*"):
        p.unlink()

    # the library
    try:
        session = load_session(str(path))
    except InputError:
        session = None
    try:
        load_bytes(data, path=str(path))
    except InputError:
        if session is not None:
            raise Broken("load_bytes refuses what load_session reads") from None
    if session is not None:
        for s in (session, *session.threads):
            show(s, analyze(s, session.target))
        other = PROVIDERS[len(data) % len(PROVIDERS)]
        message_listing(session, analyze(session, other))
        wb = Workbench(session)
        for fix in wb.plan.fixes[:20]:  # the TUI's preview of each fix
            wb.preview(fix)
        wb.apply_all()
        wb.report(None)

    # the commands
    r = cli("check", str(path))
    _one_line_refusal(r, "check")
    if (r.code == 2) != (session is None):
        raise Broken(
            f"check exit {r.code} but load_session {'failed' if session is None else 'worked'}"
        )
    rj = cli("check", "--json", str(path))
    _one_line_refusal(rj, "check --json")
    for line in rj.out.splitlines():
        try:
            json.loads(line)
        except ValueError as exc:
            raise Broken(f"check --json printed a line that is not JSON: {exc}") from None
    rd = cli("fix", str(path))
    _one_line_refusal(rd, "fix (dry run)")
    # what the provider receives, under the file's target and under one provider's wire shape
    # (a number it writes is in the file as written, maybe inside a string: Codex arguments)
    other = PROVIDERS[len(data) % len(PROVIDERS)]
    for target in ((), ("--target", other)):
        rm = cli("messages", *target, str(path))
        _one_line_refusal(rm, f"messages {' '.join(target)}")
        rmj = cli("messages", "--json", *target, str(path))
        _one_line_refusal(rmj, f"messages --json {' '.join(target)}")
        if rmj.code == 0:
            try:
                sent = parse(rmj.out.splitlines()[0])
            except (ValueError, IndexError) as exc:
                raise Broken(f"messages --json printed a line that is not JSON: {exc}") from None
            wrote: set[str] = set()
            numbers_in(sent, wrote)
            changed = sorted(n for n in wrote if n.encode() not in data)
            if changed:
                raise Broken(
                    f"messages --json {' '.join(target)} wrote a number the file does not hold: "
                    f"{changed[0][:40]}"
                )
    re_ = cli("explain", EXPLAIN_TEXT, str(path))
    _one_line_refusal(re_, "explain")
    out = work / f"out{suffix}"
    report = work / "out.report.json"
    rf = cli("fix", str(path), "-o", str(out))
    _one_line_refusal(rf, "fix -o")
    dropped = False
    if rf.code == 2:
        if out.exists() or report.exists():
            raise Broken("fix refused but wrote files")
        if "malformed record" not in rf.err:
            return "refused"
        # the user's way on: drop the unreadable records explicitly (they go to the report)
        rf = cli("fix", str(path), "-o", str(out), "--strategy", "malformed=drop")
        _one_line_refusal(rf, "fix -o --strategy malformed=drop")
        if rf.code == 2:
            if out.exists() or report.exists():
                raise Broken("fix refused but wrote files")
            return "refused"
        dropped = True
        wb = Workbench(session, Choices(by_code={"malformed": "drop"}))
        wb.apply_all()
    if session is None:
        raise Broken("fix wrote an output for an input load_session refuses")
    if not out.exists() or not report.exists():
        raise Broken("fix exited {rf.code} without writing output and report")
    written = out.read_bytes()
    try:
        report_doc = json.loads(report.read_bytes().decode("utf-8"))
    except (UnicodeDecodeError, ValueError) as exc:
        raise Broken(f"the report is not UTF-8 JSON: {exc}") from None

    # read back as the format written, with the verdict fix gave
    try:
        again = load_session(str(out), format=session.format, written=True)
    except InputError as exc:
        raise Broken(f"{session.format}: the fixed output does not load: {exc}") from None
    rc = cli("check", str(out), "--format", session.format)
    _one_line_refusal(rc, "check of the output")
    verdict = rc.code
    if rc.code == 2 and "does not look like" in rc.err:
        # too bare for detection even by name (e.g. one Claude Code record without
        # parentUuid left): fix read it back as written; judge what it read
        threads = (again, *again.threads)
        verdict = int(any(analyze(t, again.target).errors for t in threads))
    if verdict != rf.code:
        codes = sorted(
            {
                f"{'thread ' if k else ''}{f.code}"
                for k, t in enumerate((again, *again.threads))
                for f in analyze(t, again.target).errors
            }
        )
        raise Broken(
            f"{session.format}: fix exited {rf.code} but check of its output exits {verdict} "
            f"({', '.join(codes)})"
        )
    # As the user runs it next, format detected: a plain list stays ambiguous (an openai-chat
    # or Roo file a fix left without tool calls or Roo keys reads as anthropic); a file the
    # fix left too bare to recognise is named with --format.
    again_args: tuple[str, ...] = ()
    try:
        again = load_session(str(out))
    except InputError:
        again_args = ("--format", session.format)

    # a second fix changes nothing
    wb2 = Workbench(again)
    if wb2.apply_all():
        fixes = ", ".join(f"{f.code}->{f.action}" for f in wb2.applied)
        raise Broken(f"a second fix applies {len(wb2.applied)} more: {fixes[:300]}")
    out2 = work / f"out2{suffix}"
    r2 = cli("fix", str(out), "-o", str(out2), *again_args)
    _one_line_refusal(r2, "second fix -o")
    bare = not any(m.live for m in again.messages) and "does not look like" in r2.err
    if bare:
        pass  # no message left and nothing to recognise the format by: refused, in one line
    elif r2.code == 2 or out2.read_bytes() != written:
        raise Broken(f"a second fix changes the bytes (exit {r2.code})")

    # nothing lost: every string and number literal of the input is in the output or report
    before_s: set[str] = set()
    before_n: set[str] = set()
    for v in _values(data):
        strings_in(v, before_s)
        numbers_in(v, before_n)
    after_s: set[str] = set()
    for v in [*_values(written), report_doc]:
        strings_in(v, after_s)
    blob = "\x00".join(after_s)
    lost = [s for s in before_s if s not in after_s and s not in blob]
    if session.format == "opencode":
        # closing a pending/running part replaces its status word by design (the insert-result
        # edit in the report names the call)
        lost = [s for s in lost if s not in ("pending", "running")]
    if lost:
        actions = sorted({f"{f.code}->{f.action}" for f in wb.applied})
        raise Broken(
            f"{session.format}: strings lost by {', '.join(actions)}: {len(lost)}, "
            f"e.g. {lost[0][:80]!r}"
        )
    text = written + report.read_bytes()
    lost_n = [n for n in before_n if n.encode() not in text]
    if lost_n:
        raise Broken(f"{session.format}: {len(lost_n)} numbers lost, e.g. {lost_n[0][:80]}")
    if dropped:
        return "fixed after dropping malformed records"
    return "fixed" if wb.applied else "clean"
