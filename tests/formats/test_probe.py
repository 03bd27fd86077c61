"""What detectors derive from the input is computed once per probe and never outlives it
(it lived in a module global that loaders had to clear)."""

from __future__ import annotations

import orjson

from repair.formats import anthropic_list, load_bytes, probe_bytes


def test_the_list_shape_is_read_once_per_probe_and_not_shared(monkeypatch):
    calls = []
    real = anthropic_list._classify

    def counting(doc):
        calls.append(doc)
        return real(doc)

    monkeypatch.setattr(anthropic_list, "_classify", counting)
    roo = [{"role": "user", "content": "<task>go</task>", "ts": 1}]
    plain = [{"role": "user", "content": "go"}]
    # every adapter's detector, then the loader, share one pass over the document
    assert load_bytes(orjson.dumps(roo), "a.json").format == "roo"
    assert len(calls) == 1
    # the same document as new bytes is a new probe: judged on its own, not from a cache
    assert load_bytes(orjson.dumps(plain), "b.json").format == "anthropic"
    assert len(calls) == 2
    probe = probe_bytes(orjson.dumps(plain), path="c.json")
    assert anthropic_list.classify(probe) is anthropic_list.classify(probe)
    assert len(calls) == 3
