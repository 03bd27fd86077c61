"""Builders shared by the format tests: a document as its client writes it, and the result
block the engine inserts for a call whose result was lost."""

from __future__ import annotations

import json

import orjson
from hypothesis import strategies as st

from repair.formats import load_bytes
from repair.model import SYNTHETIC_RESULT_TEXT, Block, Session, block_from_anthropic


def compact(obj) -> bytes:
    """JSON as Roo (JSON.stringify) and most clients write it: no spaces, no trailing newline."""
    return json.dumps(obj, ensure_ascii=False, separators=(",", ":")).encode()


def synthetic(tool_id: str) -> Block:
    """The error result the default fix inserts for `tool_id`."""
    return block_from_anthropic(
        {
            "type": "tool_result",
            "tool_use_id": tool_id,
            "content": SYNTHETIC_RESULT_TEXT,
            "is_error": True,
        }
    )


def load(data: bytes, path: str = "session.json", **kw) -> Session:
    """A session read from `data` as if from the file `path` (a JSON document by default)."""
    return load_bytes(data, path=path, **kw)


# A JSONL file's lines, odd ones among records: blank, spaces only, not JSON, a literal
# orjson reads inexactly (a big integer, a float written with a trailing zero).
JSONL_LINE = st.one_of(
    st.just(b""),
    st.just(b"   "),
    st.just(b"not json"),
    st.just(b"null"),
    st.builds(lambda n: orjson.dumps({"n": n, "t": "x" * (n % 90)}), st.integers(0, 10**6)),
    st.just(b'{"big": 123456789012345678901234567890}'),
    st.just(b'{"f": 1.50}'),
)
