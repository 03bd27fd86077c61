"""Errors that end a command with exit status 2: the input could not be read."""

from __future__ import annotations


class InputError(Exception):
    """Unreadable input. `where` names the place: 'line 3', 'messages[4]', 'byte 120'."""

    def __init__(self, path: str, message: str, where: str | None = None) -> None:
        super().__init__(message)
        self.path = path
        self.message = message
        self.where = where

    def __str__(self) -> str:
        place = f":{self.where}" if self.where else ""
        return f"{self.path}{place}: {self.message}"


class ExportRefused(Exception):
    """The session cannot be written (e.g. malformed records remain)."""


class WriteFailed(ExportRefused):
    """The file system refused a write (permission, full disk, missing folder) or the
    report could not be encoded. The text names the path, the cause and what to do; every
    file staged so far has been removed and nothing was replaced."""


class FileChanged(InputError, ExportRefused):
    """A large input read again when asked for (repair.files.FileText) no longer holds the
    bytes that were read: what was shown, checked or would be written is not that file."""

    def __init__(self, path: str) -> None:
        super().__init__(path, "changed on disk since it was read; load it again")
