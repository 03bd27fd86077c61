"""Writing results safely: default names, backups that never overwrite, atomic replace."""

from __future__ import annotations

import hashlib
import os
import tempfile


def default_output(path: str) -> str:
    root, ext = os.path.splitext(path)
    return f"{root}.fixed{ext}"


def default_report(path: str) -> str:
    root, _ = os.path.splitext(path)
    if root.endswith(".fixed"):
        root = root[: -len(".fixed")]
    return f"{root}.report.json"


def backup_path(path: str) -> str:
    """FILE.bak, or FILE.bak.1, FILE.bak.2, ... — never an existing file."""
    cand = f"{path}.bak"
    n = 0
    while os.path.exists(cand):
        n += 1
        cand = f"{path}.bak.{n}"
    return cand


def digest_of(path: str) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        for chunk in iter(lambda: fh.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


def write_atomic(path: str, data: bytes) -> None:
    """Write through a temporary file in the same folder and an atomic rename."""
    folder = os.path.dirname(os.path.abspath(path))
    fd, tmp = tempfile.mkstemp(prefix=f".{os.path.basename(path)}.", suffix=".tmp", dir=folder)
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
            fh.flush()
            os.fsync(fh.fileno())
        if os.path.exists(path):
            os.chmod(tmp, os.stat(path).st_mode & 0o7777)
        else:  # mkstemp creates 0600; a new file gets the usual mode under the umask
            umask = os.umask(0)
            os.umask(umask)
            os.chmod(tmp, 0o666 & ~umask)
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise


def copy_bytes(src: str, dst: str) -> None:
    with open(src, "rb") as fh:
        data = fh.read()
    write_atomic(dst, data)
