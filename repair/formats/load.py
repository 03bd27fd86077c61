"""A session from a path or from bytes: probe, pick the adapter, load, set the target."""

from __future__ import annotations

from contextlib import nullcontext

from .. import jsonio
from ..errors import InputError
from ..files import Source
from ..gcpause import gc_paused
from ..model import Session
from ..targets import TARGETS
from ..targets import get as get_target
from .base import Adapter
from .probe import describe_shape, detect, probe_bytes, probe_path
from .registry import adapter_names, get_adapter


def load_session(
    given: str,
    format: str | None = None,
    target: str | None = None,
    *,
    written: bool = False,
    exact_numbers: bool = True,
    writes: bool = True,
    crcs_later: bool = False,
) -> Session:
    """Read, detect and load a session; raises InputError for anything unreadable.
    `written`: a file histview wrote in `format` (read back as that format even where
    detection would not pick it, e.g. a fix left one metadata record or a plain list).
    `exact_numbers=False`: numbers as orjson reads them, without the scan that keeps odd
    literals exactly (`jsonio.numbers_as_parsed`), for a caller that writes none back.
    `writes=False`: nothing is written from the session (`check`): a large file is read
    without the CRCs a write and later reads are checked against (`files.FileText`);
    `crcs_later`: a write may follow, not at once (the TUI): a large file left alone before
    it was opened is read without them too, and `FileText.seal` makes them after."""
    with gc_paused(), nullcontext() if exact_numbers else jsonio.numbers_as_parsed():
        return _load_session(given, format, target, written, writes, crcs_later)


def _load_session(
    given: str,
    format: str | None,
    target: str | None,
    written: bool,
    writes: bool = True,
    crcs_later: bool = False,
) -> Session:
    if target is not None and target not in TARGETS:
        raise InputError(given, f"unknown target {target!r}; known: {', '.join(TARGETS)}")
    probe = probe_path(given, checked=writes, later=crcs_later)
    if format:
        try:
            adapter = get_adapter(format)
        except KeyError:
            raise InputError(
                given, f"unknown format {format!r}; known: {', '.join(adapter_names())}"
            ) from None
        if not written and adapter.detect(probe) <= 0:
            raise InputError(given, f"does not look like {format}: {describe_shape(probe)}")
    else:
        adapter = detect(probe)
    _check_client_target(given, adapter, target)
    session = adapter.load(probe)
    session.target = target or adapter.default_target
    session.source = Source.of(probe.path, probe.held(), probe.stat)
    session.numbers_exact = jsonio.exact_numbers()
    for thread in session.threads:  # a session's threads are judged by the same rules
        thread.target = session.target
        thread.numbers_exact = session.numbers_exact
    return session


def _check_client_target(given: str, adapter: Adapter, target: str | None) -> None:
    """A client target judges the files of its own format only (it is named like it)."""
    if target is not None and get_target(target).is_client and target != adapter.name:
        raise InputError(
            given,
            f"target {target} judges {target} files; this is {adapter.name} "
            f"(its default target is {adapter.default_target})",
        )


def load_bytes(
    data: bytes, path: str = "<memory>", format: str | None = None, target: str | None = None
) -> Session:
    with gc_paused():
        return _load_bytes(data, path, format, target)


def _load_bytes(data: bytes, path: str, format: str | None, target: str | None) -> Session:
    probe = probe_bytes(data, path=path)
    adapter = get_adapter(format) if format else detect(probe)
    _check_client_target(path, adapter, target)
    session = adapter.load(probe)
    session.target = target or adapter.default_target
    return session
