"""The timing lock: one file per device per machine, whatever transport started the evaluation (a local run, an
SSH agent, a Slurm worker), so two evaluations timing on one device never overlap their timed sections.

The folder is machine-wide (`/tmp/kernelevolve-locks`, sticky and world-writable like /tmp itself) rather than
per user or per workdir: two users or two workdirs on one GPU disturb each other's timings just the same.
KERNELEVOLVE_LOCK_DIR moves it, e.g. on clusters that give each job a private /tmp.
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


@contextmanager
def device_lock(path: Optional[str], held: Optional[List[List[float]]] = None) -> Iterator[None]:
    """Holds `path` exclusively (flock; a read-only descriptor suffices, so a lock file of another user works).
    Appends [start, end] of the hold, in wall-clock seconds, to `held`: the verdict carries it, so evaluations
    started through different transports can be checked never to have timed at once."""
    if not path:
        yield
        return
    fd = os.open(path, os.O_RDONLY | os.O_CREAT, 0o666)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
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
