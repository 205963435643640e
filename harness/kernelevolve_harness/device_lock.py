"""The timing lock: one file per device per machine, whatever transport started the evaluation (a local run, an
SSH agent, a Slurm worker), so two evaluations timing on one device never overlap their timed sections.

The folder is machine-wide (`/tmp/kernelevolve-locks`, sticky and world-writable like /tmp itself) rather than
per user or per workdir: two users or two workdirs on one GPU disturb each other's timings just the same.
KERNELEVOLVE_LOCK_DIR moves it, e.g. on clusters that give each job a private /tmp.

A background evaluation (a leader judged again for the confirmation, `--background`) lets evaluations of the search
take the lock first: each of those holds a shared lock on `<lock>.waiting` while it waits, and a background one
takes the lock only when no one holds that, for at most KERNELEVOLVE_LOCK_YIELD_S (5) seconds, then waits in line
like any. Judged early, in the slots the search's last round leaves free, confirmations queued at the lock before
the closing tables (on an H100 those waited 1.0-1.3 s each, 2026-12-05).
"""
from __future__ import annotations

import fcntl
import os
import re
import stat
import time
from contextlib import contextmanager
from typing import Iterator, List, Optional

DEFAULT_DIR = "/tmp/kernelevolve-locks"
POLL_S = 0.002  # how often a background evaluation looks again while it lets others go first


def lock_dir() -> str:
    return os.environ.get("KERNELEVOLVE_LOCK_DIR") or DEFAULT_DIR


def lock_name(device: Optional[str]) -> str:
    """`gpu-0.lock` for device 0 (`gpu-0-1.lock` for a job given two), `cpu.lock` for jobs without a device."""
    if device is None or not str(device).strip():
        return "cpu.lock"
    parts = [p for p in re.split(r"[,\s]+", str(device).strip()) if p]
    if not all(re.fullmatch(r"[A-Za-z0-9_.:-]+", p) for p in parts):
        raise ValueError(f"device {device!r} is not a device index or id (e.g. 0, or 0,1)")
    return "gpu-" + "-".join(parts) + ".lock"


def lock_path(device: Optional[str]) -> str:
    """The lock of `device` on this machine, created readable and writable by everyone so that every user's
    evaluations exclude each other. A folder someone else made and left unwritable is reported, not bypassed."""
    folder = lock_dir()
    try:
        os.mkdir(folder, 0o1777)
        os.chmod(folder, 0o1777)  # the umask trimmed mkdir's mode
    except FileExistsError:
        pass
    path = os.path.join(folder, lock_name(device))
    try:
        fd = os.open(path, os.O_RDONLY | os.O_CREAT, 0o666)
    except PermissionError:
        raise PermissionError(
            f"Cannot open the timing lock {path}: {folder} is not writable by this user. Ask its owner to run "
            f"`chmod 1777 {folder}`, or set KERNELEVOLVE_LOCK_DIR to a folder every user of this machine can write.")
    try:
        st = os.fstat(fd)
        if st.st_uid == os.getuid() and stat.S_IMODE(st.st_mode) != 0o666:
            os.fchmod(fd, 0o666)
    finally:
        os.close(fd)
    return path


def yield_s() -> float:
    """How long a background evaluation lets the search's evaluations take the lock first."""
    try:
        return max(0.0, float(os.environ.get("KERNELEVOLVE_LOCK_YIELD_S", "5")))
    except ValueError:
        return 5.0


def _open_waiting(path: str) -> Optional[int]:
    """`<lock>.waiting`, made readable by everyone like the lock; None where it cannot be had (no priority then)."""
    try:
        fd = os.open(path + ".waiting", os.O_RDONLY | os.O_CREAT, 0o666)
    except OSError:
        return None
    try:
        st = os.fstat(fd)
        if st.st_uid == os.getuid() and stat.S_IMODE(st.st_mode) != 0o666:
            os.fchmod(fd, 0o666)
    except OSError:
        pass
    return fd


def _take(fd: int, waiting: Optional[int], background: float) -> None:
    """Takes the lock: in line (announced on `waiting`), or in the background (`background` > 0: for at most that
    many seconds only when no evaluation is announced, then in line)."""
    if waiting is None:
        fcntl.flock(fd, fcntl.LOCK_EX)
        return
    if background <= 0:
        fcntl.flock(waiting, fcntl.LOCK_SH)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX)
        finally:
            fcntl.flock(waiting, fcntl.LOCK_UN)
        return
    deadline = time.monotonic() + background
    while time.monotonic() < deadline:
        try:
            fcntl.flock(waiting, fcntl.LOCK_EX | fcntl.LOCK_NB)  # no evaluation of the search is waiting
        except BlockingIOError:
            time.sleep(POLL_S)
            continue
        fcntl.flock(waiting, fcntl.LOCK_UN)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            return
        except BlockingIOError:
            time.sleep(POLL_S)
    fcntl.flock(fd, fcntl.LOCK_EX)


@contextmanager
def device_lock(path: Optional[str], held: Optional[List[List[float]]] = None,
                background: float = 0.0) -> Iterator[None]:
    """Holds `path` exclusively (flock; a read-only descriptor suffices, so a lock file of another user works).
    Appends [start, end] of the hold, in wall-clock seconds, to `held`: the verdict carries it, so evaluations
    started through different transports can be checked never to have timed at once. `background`: the seconds a
    background evaluation lets the others go first (the module's docstring)."""
    if not path:
        yield
        return
    fd = os.open(path, os.O_RDONLY | os.O_CREAT, 0o666)
    waiting = _open_waiting(path)
    try:
        _take(fd, waiting, background)
        start = time.time()
        try:
            yield
        finally:
            end = time.time()
            fcntl.flock(fd, fcntl.LOCK_UN)
            if held is not None:
                held.append([start, end])
    finally:
        os.close(fd)
        if waiting is not None:
            os.close(waiting)
