"""Killing an evaluation and everything it started. The judge runs compilers and workers in sessions of their
own, so killing one process group is not enough: the whole tree below the judge goes, except the host's
warm-worker server, which outlives evaluations by design and kills the workers it forked when their judge's
connection closes."""
from __future__ import annotations

import os
import signal
import time
from typing import Dict, List, Set


def _parents() -> Dict[int, int]:
    """pid -> parent pid, from Linux /proc (elsewhere empty: the process-group kill has to do)."""
    out: Dict[int, int] = {}
    try:
        entries = os.listdir("/proc")
    except OSError:
        return out
    for entry in entries:
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat", encoding="utf-8", errors="replace") as f:
                stat = f.read()
            out[int(entry)] = int(stat[stat.rindex(")") + 2:].split()[1])
        except (OSError, ValueError, IndexError):
            continue
    return out


def _is_warm_server(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as f:
            argv = f.read().split(b"\0")
    except OSError:
        return False
    return b"kernelevolve_harness" in argv and b"warm" in argv and b"--socket" in argv


def descendants(root: int, spare_warm_servers: bool = True) -> List[int]:
    """Pids below `root`. The warm-worker server (a direct child of a judge) and its subtree are spared."""
    children: Dict[int, List[int]] = {}
    for pid, ppid in _parents().items():
        children.setdefault(ppid, []).append(pid)
    out: List[int] = []
    seen: Set[int] = {root}
    stack = [root]
    while stack:
        parent = stack.pop()
        for c in children.get(parent, []):
            if c in seen:
                continue
            seen.add(c)
            # Only the judge's own child counts: a candidate cannot become one (cold workers are children of the
            # judge too, but they die with it by PR_SET_PDEATHSIG whatever they exec into).
            if spare_warm_servers and parent == root and _is_warm_server(c):
                continue
            out.append(c)
            stack.append(c)
    return out


def kill_tree(root: int, wait_s: float = 2.0) -> None:
    """SIGKILL to `root`, its process group and every process below it; then waits, up to wait_s, until each has
    died (gone, or a zombie its parent has yet to reap): on a loaded machine a killed process can take a moment to
    die, and whoever hears "stopped" next may look for it.

    The tree is frozen first: SIGSTOP to the root, then to what is found below it, again until a look finds
    nothing new. A stopped process cannot fork, so a child born between a look and a kill (a compiler driver
    starting its next stage, a judge starting a worker) is seen by the next look instead of being orphaned to init,
    where no look below the root would find it. A stop lands when its process next leaves the kernel, so a
    process in the middle of a fork finishes it first: a look counts only once every process signalled has
    stopped (up to _FREEZE_WAIT_S for each look; in CI a child forked after a look that found nothing survived)."""
    frozen: List[int] = [root]
    seen: Set[int] = {root}
    _signal(root, signal.SIGSTOP)
    for _ in range(_FREEZE_LOOKS):
        _until_stopped(frozen, time.monotonic() + _FREEZE_WAIT_S)
        new = [pid for pid in descendants(root) if pid not in seen]
        if not new:
            break
        for pid in new:
            seen.add(pid)
            frozen.append(pid)
            _signal(pid, signal.SIGSTOP)
    for pid in frozen:
        _signal(pid, signal.SIGKILL)
    try:
        os.killpg(root, signal.SIGKILL)
    except OSError:
        pass
    deadline = time.monotonic() + wait_s
    left = frozen
    while left and time.monotonic() < deadline:
        left = [pid for pid in left if _alive(pid)]
        if left:
            time.sleep(0.01)


# A tree deeper than this many generations of processes started while it is frozen is not a judge's.
_FREEZE_LOOKS = 64
# How long a look waits for the processes signalled to stop (one in uninterruptible sleep stops when it wakes).
_FREEZE_WAIT_S = 0.5


def _until_stopped(pids: List[int], deadline: float) -> None:
    """Waits until each of `pids` is stopped, dead or gone, or until the deadline."""
    waiting = list(pids)
    while waiting and time.monotonic() < deadline:
        waiting = [pid for pid in waiting if _state(pid) not in ("T", "t", "Z", "X", "")]
        if waiting:
            time.sleep(0.001)


def _state(pid: int) -> str:
    """The process's state letter from /proc (R, S, D, T, Z...); '' when it is gone."""
    try:
        with open(f"/proc/{pid}/stat", encoding="utf-8", errors="replace") as f:
            stat = f.read()
        return stat[stat.rindex(")") + 2:].split()[0]
    except (OSError, ValueError, IndexError):
        return ""


def _signal(pid: int, sig: int) -> None:
    try:
        os.kill(pid, sig)
    except OSError:
        pass


def _alive(pid: int) -> bool:
    """Running, or dying but not dead yet (not a zombie)."""
    return _state(pid) not in ("Z", "X", "")

