"""histview against what Codex 0.169 and opencode 1.18 really send when they resume a file.

Each case in tests/fixtures/clients/ is a session file (a sample, a corpus file or a broken
file made for one behaviour) and the request its client sent for it, recorded with
../shared/clients/resume and trimmed (tests/formats/client_requests.py). The tests hold that:
- the request histview says the client sends is the recorded one (roles, order, ids, texts);
- histview reports an error-level finding for the file exactly when the recorded request
  breaks the provider's rules (judged by histview's own provider rules on the request);
- with HISTVIEW_CLIENTS set, the real clients still send what was recorded.
"""

from __future__ import annotations

import json
import os

import pytest

from repair.analysis import analyze
from repair.formats import load_session
from tests.formats.client_requests import (
    SCRIPT_CLIENT,
    case_name,
    cases,
    history_of,
    input_path,
    provider_refuses,
    resume,
    sent_by_histview,
    shape,
)

CASES = [
    pytest.param(client, fixture, id=f"{client}-{case_name(fixture)}")
    for client in SCRIPT_CLIENT
    for fixture in cases(client)
]


def load_case(fixture):
    case = json.loads(fixture.read_text())
    path = input_path(case["input"])
    if not path.exists():
        pytest.skip(f"{case['input']} absent")
    return case, path


def test_every_client_has_its_cases():
    assert {client for client, *_ in (p.values for p in CASES)} == set(SCRIPT_CLIENT)
    assert all(len(cases(c)) >= 15 for c in SCRIPT_CLIENT)


@pytest.mark.parametrize(("client", "fixture"), CASES)
def test_histview_sends_what_the_client_sent(client, fixture):
    case, path = load_case(fixture)
    assert case["sent"], "record the case first: python -m tests.formats.client_requests record"
    assert sent_by_histview(client, path) == case["sent"]


@pytest.mark.parametrize(("client", "fixture"), CASES)
def test_error_exactly_when_the_clients_request_is_refused(client, fixture):
    case, path = load_case(fixture)
    session = load_session(str(path))
    assert session.target == client
    errors = [f.code for f in analyze(session).findings if f.severity == "error"]
    refused = provider_refuses(client, case["sent"])
    assert bool(errors) == bool(refused), (errors, refused)


def test_the_broken_cases_cover_both_verdicts():
    verdicts = {
        (client, bool(provider_refuses(client, json.loads(f.read_text())["sent"])))
        for client in SCRIPT_CLIENT
        for f in cases(client)
    }
    assert verdicts == {(c, v) for c in SCRIPT_CLIENT for v in (True, False)}


@pytest.mark.skipif(
    not os.environ.get("HISTVIEW_CLIENTS"), reason="set HISTVIEW_CLIENTS to run the real clients"
)
@pytest.mark.parametrize(("client", "fixture"), CASES)
def test_the_real_client_still_sends_the_recorded_request(client, fixture):
    case, path = load_case(fixture)
    assert shape(client, history_of(client, resume(client, path))) == case["sent"]
