"""Writing report files safely: a missing directory is refused, never created; a file is
written to a temporary name beside it and renamed into place, so an interrupted or failing
write never leaves a truncated report (and an existing one survives untouched)."""

from __future__ import annotations

import contextlib
import os
import stat
import tempfile
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from ..core.errors import InputError


def check_output_path(path: str | os.PathLike, flag: str = "the output") -> Path:
    """``path`` when a report can be written there: its directory exists and a file can be
    made in it, and ``path`` is not itself a directory or a device; else :class:`InputError`
    naming ``flag``."""
    p = Path(path)
    shown = f"{flag} {str(p)!r}"
    if str(p).strip() == "":
        raise InputError(f"{flag} needs a file name.")
    try:
        st = p.stat()
    except FileNotFoundError:
        st = None
    except OSError as err:
        raise InputError(f"cannot write {shown}: {err.strerror or err}.") from None
    if st is not None and stat.S_ISDIR(st.st_mode):
        raise InputError(f"{shown} is a directory; give a file name such as "
                         f"{str(p / 'report.html')!r}.")
    if st is not None and not stat.S_ISREG(st.st_mode):
        raise InputError(f"{shown} is not a regular file; give a file name.")
    parent = p.parent
    if not parent.is_dir():
        raise InputError(f"cannot write {shown}: the directory {str(parent)!r} does not exist "
                         "(privet does not create directories; make it first).")
    try:  # make (and remove) a file there: permissions, a read-only file system, /proc
        fd, probe = tempfile.mkstemp(prefix=".privet-probe-", dir=str(parent))
        os.close(fd)
        os.unlink(probe)
    except OSError as err:
        raise InputError(f"cannot write {shown}: no file can be made in the directory "
                         f"{str(parent)!r} ({err.strerror or err}).") from None
    return p


@contextlib.contextmanager
def atomic_path(path: str | os.PathLike, flag: str = "the output") -> Iterator[str]:
    """Yield a temporary file name beside ``path`` (same suffix, so writers that pick the
    format from it still do); on success it is renamed to ``path``, on any failure or
    Ctrl-C it is removed. Write errors become one sentence (:class:`InputError`)."""
    p = check_output_path(path, flag)
    try:  # root passes the access check of /proc or /sys, where no file can be made
        fd, tmp = tempfile.mkstemp(prefix=f".{p.name}.", suffix=f".part{p.suffix}",
                                   dir=str(p.parent))
    except OSError as err:
        raise InputError(f"cannot write {flag} {str(p)!r}: {err.strerror or err}.") from None
    os.close(fd)
    try:
        yield tmp
        os.chmod(tmp, 0o666 & ~_umask())
        os.replace(tmp, p)
    except OSError as err:
        raise InputError(f"cannot write {flag} {str(p)!r}: {err.strerror or err}.") from None
    finally:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)


def write_atomic(path: str | os.PathLike, data: str | bytes | Callable[[str], object],
                 flag: str = "the output") -> Path:
    """Write ``data`` (text, bytes, or a function that writes to the file name it is given)
    to ``path`` through :func:`atomic_path`."""
    with atomic_path(path, flag) as tmp:
        if callable(data):
            data(tmp)
        else:
            mode = "wb" if isinstance(data, bytes) else "w"
            with open(tmp, mode, **({} if isinstance(data, bytes) else
                                    {"encoding": "utf-8"})) as fh:
                fh.write(data)
                fh.flush()
                os.fsync(fh.fileno())
    return Path(path)


def save_figure(fig: Any, path: str | os.PathLike, flag: str = "--plot") -> Path:
    """Save a matplotlib figure through :func:`atomic_path`, in the format its suffix names
    (PNG when it has none); a format matplotlib cannot write is one sentence."""
    fmt = Path(path).suffix.lstrip(".").lower() or "png"
    if fmt not in fig.canvas.get_supported_filetypes():
        raise InputError(f"{flag} {str(path)!r}: matplotlib cannot write .{fmt} files; use "
                         ".png, .pdf or .svg.")
    return write_atomic(path, lambda tmp: fig.savefig(tmp, dpi=120, format=fmt), flag)


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


__all__ = ["atomic_path", "check_output_path", "save_figure", "write_atomic"]
