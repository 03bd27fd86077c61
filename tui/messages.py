"""The messages workers post to the session screen: each carries what the UI thread puts on
screen. They do not bubble: only the screen that started the work takes them. And those the
app hands the keys typed ahead of a modal screen on (`ScreenReady`, `KeyPassed`)."""

from __future__ import annotations

from textual import events
from textual.message import Message
from textual.screen import Screen

from repair.model import Session
from repair.plan import Fix
from repair.preview import Preview
from repair.readback import ReadBack
from repair.workbench import ExportResult, StepResult, View, Workbench

from .rows import RowTable
from .state import Derived


class SessionLoaded(Message, bubble=False):
    """Rows to show: the whole session, or (`head`) the first lines of a large file while
    the rest is read."""

    def __init__(
        self, session: Session, table: RowTable, seconds: float, head: bool = False
    ) -> None:
        super().__init__()
        self.session = session
        self.table = table
        self.seconds = seconds
        self.head = head


class AnalysisReady(Message, bubble=False):
    """The analysis to show: a first look (`workbench` None: `state.first_look`), then the
    whole state with its workbench."""

    def __init__(self, workbench: Workbench | None, derived: Derived) -> None:
        super().__init__()
        self.workbench = workbench
        self.derived = derived


class LoadFailed(Message, bubble=False):
    def __init__(self, text: str) -> None:
        super().__init__()
        self.text = text


class SearchDone(Message, bubble=False):
    def __init__(self, query: str, version: int, rows: list[int], jump: bool) -> None:
        super().__init__()
        self.query = query
        self.version = version
        self.rows = rows
        self.jump = jump


class StepDone(Message, bubble=False):
    """A repair step (apply, apply all, undo, redo) ran in the step worker: `result` is
    None when it changed nothing; `derived` the state to show; `note` the toast."""

    def __init__(
        self,
        what: str,
        result: StepResult | None,
        derived: Derived | None,
        note: str,
        fix: Fix | None = None,
        at: int = 0,
        old_fixes: list[Fix] | None = None,
        error: str | None = None,
        seconds: float = 0.0,
        cpu: float = 0.0,
    ) -> None:
        super().__init__()
        self.seconds = seconds  # the worker's time
        self.cpu = cpu  # the worker thread's CPU time (the machine may be busy elsewhere)
        self.what = what
        self.result = result
        self.derived = derived
        self.note = note
        self.fix = fix
        self.at = at
        self.old_fixes = old_fixes or []
        self.error = error


class ViewShown(Message, bubble=False):
    """Another conversation (the main one or a thread) is ready to show."""

    def __init__(self, view: View, derived: Derived) -> None:
        super().__init__()
        self.view = view
        self.derived = derived


class PreviewReady(Message, bubble=False):
    """The preview of a fix: `pending` while its records are still being computed (the
    description comes first)."""

    def __init__(self, key: tuple, fix: Fix, preview: Preview | None, pending: bool) -> None:
        super().__init__()
        self.key = key
        self.fix = fix
        self.preview = preview
        self.pending = pending


class PromiseReady(Message, bubble=False):
    """What `check` would find in an export of the state `state` (the one read-back)."""

    def __init__(self, state: Session, checked: ReadBack | None, error: str | None) -> None:
        super().__init__()
        self.state = state
        self.checked = checked
        self.error = error


class ExactRead(Message, bubble=False):
    """The file read again keeping every number literal, the steps made again on it
    (repair.reread): the workbench to use from now on and its state; or why not."""

    def __init__(
        self, workbench: Workbench | None, derived: Derived | None, error: str | None
    ) -> None:
        super().__init__()
        self.workbench = workbench
        self.derived = derived
        self.error = error


class ExportDone(Message, bubble=False):
    """An export ran; `exact`: it read the file again keeping every number literal first
    (repair.reread): the workbench to use from now on and its state to show."""

    def __init__(
        self,
        state: Session,
        result: ExportResult | None,
        error: str | None,
        exact: tuple[Workbench, Derived] | None = None,
    ) -> None:
        super().__init__()
        self.state = state
        self.result = result
        self.error = error
        self.exact = exact


class ScreenReady(Message, bubble=False):
    """To the app: `screen` takes keys now (a modal mounted with its focus set; the session
    screen back on top, the modal's answer taken): the keys typed ahead go to it."""

    def __init__(self, screen: Screen) -> None:
        super().__init__()
        self.screen = screen


class KeyPassed(Message, bubble=False):
    """Posted by the app to itself once every handler of a key has run (the widget took
    it, or the app's binding ran): a callback followed the key up from the widget it went
    to, through each parent's queue (HistviewApp._follow)."""

    def __init__(self, key: events.Key) -> None:
        super().__init__()
        self.key = key
