"""What a worker process gets before it runs a candidate: resource caps and death with its judge. Used by the
judge (cold workers) and by the warm-worker server (forked workers), so it imports neither."""
from __future__ import annotations

import os
import resource
import sys


def worker_limits(limit_memory: bool, parent: int) -> None:
    """In the worker before exec: no core dumps (a crash is a verdict, not a 10 GB file), a cap on what it
    may write (its log), for CPU kernels a cap on memory so a runaway allocation cannot take the machine, and
    death with the judge: a judge killed from outside (a cancelled remote job) must not leave a candidate
    spinning in an endless loop."""
    die_with_parent(parent)
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
    resource.setrlimit(resource.RLIMIT_FSIZE, (32 << 20, 32 << 20))
    if limit_memory:
        try:
            half = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") // 2
            resource.setrlimit(resource.RLIMIT_AS, (half, half))
        except (ValueError, OSError):
            pass


def die_with_parent(parent: int) -> None:
    """Linux: SIGKILL when the judge dies (PR_SET_PDEATHSIG survives exec); elsewhere a no-op."""
    if not sys.platform.startswith("linux"):
        return
    try:
        import ctypes
        import signal
        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(1, int(signal.SIGKILL), 0, 0, 0)  # PR_SET_PDEATHSIG
    except (OSError, AttributeError):
        return
    if os.getppid() != parent:  # the judge died before prctl took effect
        os._exit(1)
