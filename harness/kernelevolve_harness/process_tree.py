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
    """SIGKILL to `root`'s process group and to every process below it (found before the first kill, so no
    child is orphaned to init before it is seen); then waits, up to wait_s, until each has died (gone, or a zombie
    its parent has yet to reap): on a loaded machine a killed process can take a moment to die, and whoever hears
    "stopped" next may look for it."""
    below = descendants(root)
    for pid in [root] + below:
        try:
            os.kill(pid, signal.SIGKILL)
        except OSError:
            pass
    try:
        os.killpg(root, signal.SIGKILL)
    except OSError:
        pass
    deadline = time.monotonic() + wait_s
    left = [root] + below
    while left and time.monotonic() < deadline:
        left = [pid for pid in left if _alive(pid)]
        if left:
            time.sleep(0.01)


def _alive(pid: int) -> bool:
    """Running, or dying but not dead yet (not a zombie)."""
    try:
        with open(f"/proc/{pid}/stat", encoding="utf-8", errors="replace") as f:
            stat = f.read()
        return stat[stat.rindex(")") + 2:].split()[0] not in ("Z", "X")
    except (OSError, ValueError, IndexError):
        return False
