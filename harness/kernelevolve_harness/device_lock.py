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
from typing import Dict, Iterator, List, Optional, Tuple

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
    for p in (path, turnstile_path(path)):
        _own(p, folder)
    return path


def _own(path: str, folder: str) -> None:
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


QUIET_WAIT_S = 0.25  # how long a timer waits for device work already under way to end (quiet_wait_s)


def quiet_timing() -> bool:
    """Whether timers have the device to themselves (KERNELEVOLVE_QUIET_TIMING=0: they share it, as before)."""
    return os.environ.get("KERNELEVOLVE_QUIET_TIMING", "1") != "0"


def turnstile_path(path: str) -> str:
    """The timers' own file beside the lock: `gpu-0.turn` for `gpu-0.lock`."""
    return (path[:-len(".lock")] if path.endswith(".lock") else path) + ".turn"


def _open(path: str) -> int:
    return os.open(path, os.O_RDONLY | os.O_CREAT, 0o666)


@contextmanager
def device_lock(path: Optional[str], held: Optional[List[List[float]]] = None,
                quiet: Optional[Dict[str, float]] = None) -> Iterator[None]:
    """Holds the device for one timed section. Timers exclude each other on the turnstile (flock, exclusive; a
    read-only descriptor suffices, so a lock file of another user works), which also holds off new device work
    (DeviceWork, which passes through it); then the timer takes the lock itself exclusively, which waits for
    device work already under way (a candidate's checked call, a reference's comparison) to end: with `quiet`, at
    most QUIET_WAIT_S, and a call that runs longer is timed beside, as every call was before (counted in
    quiet["unquiet_holds"]; the seconds waited add to quiet["quiet_wait_s"]).
    Appends [start, end] of the hold, in wall-clock seconds, to `held`: the verdict carries it, so evaluations
    started through different transports can be checked never to have timed at once."""
    if not path:
        yield
        return
    turn, fd = _open(turnstile_path(path)), _open(path)
    try:
        fcntl.flock(turn, fcntl.LOCK_EX)
        start = time.time()
        got = False
        try:
            if quiet is None:  # no bound: device work held off by another version's lock ends first
                fcntl.flock(fd, fcntl.LOCK_EX)
                got = True
            else:
                t = time.monotonic()
                while True:
                    try:
                        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                        got = True
                        break
                    except BlockingIOError:
                        if time.monotonic() - t > QUIET_WAIT_S:
                            break
                        time.sleep(0.0002)
                quiet["quiet_wait_s"] = quiet.get("quiet_wait_s", 0.0) + time.monotonic() - t
                if not got:
                    quiet["unquiet_holds"] = quiet.get("unquiet_holds", 0) + 1
            yield
        finally:
            end = time.time()
            if got:
                fcntl.flock(fd, fcntl.LOCK_UN)
            fcntl.flock(turn, fcntl.LOCK_UN)
            if held is not None:
                held.append([start, end])
    finally:
        os.close(fd)
        os.close(turn)


class DeviceWork:
    """Device work outside the timed sections (a candidate's checked calls, the reference's answers), held off
    while a timer has the device: each piece passes through the timers' turnstile, then holds the lock shared, so
    a timer that wants quiet waits for the pieces under way and none starts meanwhile. A piece in one process never
    waits on a timer of the same evaluation (the judge takes the lock only while its worker times). `path` None
    (no lock, or quiet timing off: the judge decides, since a warm worker's environment is its server's): nothing
    held."""

    def __init__(self, path: Optional[str]) -> None:
        self.path = path or None
        self.fds: Optional[Tuple[int, int]] = None
        self.waited = 0.0

    @contextmanager
    def piece(self) -> Iterator[None]:
        if not self.path:
            yield
            return
        if self.fds is None:
            self.fds = (_open(turnstile_path(self.path)), _open(self.path))
        turn, fd = self.fds
        t = time.monotonic()
        fcntl.flock(turn, fcntl.LOCK_SH)  # blocks while a timer holds it
        fcntl.flock(turn, fcntl.LOCK_UN)
        fcntl.flock(fd, fcntl.LOCK_SH)
        self.waited += time.monotonic() - t
        try:
            yield
        finally:
            fcntl.flock(fd, fcntl.LOCK_UN)
