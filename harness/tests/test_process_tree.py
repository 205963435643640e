"""Killing a tree that is still growing: nothing it started may survive, whatever it was doing at the kill."""
from __future__ import annotations

import os
import subprocess
import sys
import time
import uuid
from typing import List

from kernelevolve_harness.process_tree import kill_tree

# A root that starts a child in a session of its own every millisecond (as a judge starts compilers and workers),
# each child starting one of its own: whatever instant the kill lands on, a fork is under way somewhere.
_GROWING = """
import os, sys, time
for _ in range(400):
    if os.fork() == 0:
        os.setsid()
        if os.fork() == 0:
            time.sleep(60)
            os._exit(0)
        time.sleep(60)
        os._exit(0)
    time.sleep(0.001)
time.sleep(60)
"""


def _alive_with(marker: str) -> List[int]:
    out = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/cmdline", "rb") as f:
                if marker.encode() not in f.read():
                    continue
            with open(f"/proc/{entry}/stat", encoding="utf-8") as f:
                stat = f.read()
        except OSError:
            continue
        if stat[stat.rindex(")") + 2:].split()[0] not in ("Z", "X"):
            out.append(int(entry))
    return out


def test_a_tree_that_forks_while_it_is_killed_leaves_nothing_running() -> None:
    for _ in range(5):
        marker = f"tree-{uuid.uuid4().hex}"
        root = subprocess.Popen([sys.executable, "-c", _GROWING, marker], start_new_session=True)
        try:
            deadline = time.monotonic() + 20
            while len(_alive_with(marker)) < 40 and time.monotonic() < deadline:
                time.sleep(0.01)
            assert len(_alive_with(marker)) >= 40
            kill_tree(root.pid)
            root.wait(timeout=10)
            # Children of killed parents are reaped by init (or the nearest subreaper): give it a moment.
            deadline = time.monotonic() + 5
            while _alive_with(marker) and time.monotonic() < deadline:
                time.sleep(0.05)
            assert _alive_with(marker) == []
        finally:
            for pid in _alive_with(marker):
                os.kill(pid, 9)
            if root.poll() is None:
                root.kill()
