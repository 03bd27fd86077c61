"""Bad input for the gemini-cli and bedrock adapters: a real chat or Converse list with one
value anywhere replaced by a value of another type (or bytes cut or damaged) either loads
(what cannot be read becomes a malformed row) or is refused with a one-line InputError; a
loaded one is checked, fixed and written without any other exception."""

from __future__ import annotations

import json

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from repair.analysis import analyze
from repair.errors import ExportRefused, InputError
from repair.formats import load_bytes
from repair.plan import Choices, apply_all
from tests.paths import DATA, SAMPLES

GEMINI = DATA / "gemini_cli" / "orphan_call.jsonl"
GEMINI_SET = SAMPLES / "gemini_cli_doubled_after_resume.jsonl"
BEDROCK = SAMPLES / "bedrock_parallel_results_split.json"

VALUES = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-(10**30), 10**30),
    st.floats(allow_nan=False),
    st.text(max_size=8),
    st.sampled_from(["", "\ud800", "[bold]x[/]", "read_file__", "$rewindTo"]),
    st.lists(st.integers(), max_size=2),
    st.dictionaries(st.sampled_from(["id", "text", "type", "toolUse"]), st.text(max_size=3)),
)


def paths(node, prefix=()):
    yield prefix
    if isinstance(node, dict):
        for k, v in node.items():
            yield from paths(v, (*prefix, k))
    elif isinstance(node, list):
        for i, v in enumerate(node):
            yield from paths(v, (*prefix, i))


def replaced(node, path, value):
    if not path:
        return value
    head, rest = path[0], path[1:]
    if isinstance(node, dict):
        return {**node, head: replaced(node[head], rest, value)}
    out = list(node)
    out[head] = replaced(node[head], rest, value)
    return out


def dumps(obj) -> bytes:
    return json.dumps(obj, ensure_ascii=False, separators=(",", ":")).encode(
        "utf-8", "surrogatepass"
    )


def exercise(data: bytes, path: str) -> None:
    try:
        session = load_bytes(data, path=path)
    except InputError as exc:
        assert "\n" not in str(exc)
        return
    analyze(session)
    fixed, _ = apply_all(session, Choices(by_code={"malformed": "drop"}))
    analyze(fixed)
    try:
        fixed.export_bytes()
    except ExportRefused:
        pass


FUZZ = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@FUZZ
@given(data=st.data(), which=st.sampled_from([GEMINI, GEMINI_SET]))
def test_gemini_chat_with_one_value_of_another_type(data, which):
    records = [json.loads(line) for line in which.read_bytes().splitlines()]
    i = data.draw(st.integers(0, len(records) - 1))
    places = list(paths(records[i]))
    where = data.draw(st.sampled_from(places))
    records[i] = replaced(records[i], where, data.draw(VALUES))
    exercise(b"\n".join(dumps(r) for r in records) + b"\n", "chat.jsonl")


@FUZZ
@given(data=st.data())
def test_converse_list_with_one_value_of_another_type(data):
    doc = json.loads(BEDROCK.read_bytes())
    where = data.draw(st.sampled_from(list(paths(doc))))
    exercise(dumps(replaced(doc, where, data.draw(VALUES))), "conv.json")


@FUZZ
@given(
    which=st.sampled_from([GEMINI, GEMINI_SET, BEDROCK]),
    cut=st.floats(0, 1),
    junk=st.binary(max_size=6),
)
def test_cut_or_damaged_bytes(which, cut, junk):
    raw = which.read_bytes()
    at = int(len(raw) * cut)
    exercise(raw[:at], which.name)
    exercise(raw[:at] + junk + raw[at + len(junk) :], which.name)
