"""The Slurm worker's node-local judge folders: a worker killed outright cannot remove the one of the job it was
judging, so the next worker on the node removes those of this node whose worker is gone (and nothing else)."""
import os
import socket
import subprocess
import sys
from pathlib import Path

from kernelevolve_harness.worker_service import JUDGE_DIR_PREFIX, sweep_judge_dirs


def _dead_pid() -> int:
    p = subprocess.Popen([sys.executable, "-c", "pass"])
    p.wait()
    return p.pid


def test_a_starting_worker_removes_the_judge_folders_of_workers_that_are_gone(tmp_path: Path) -> None:
    node = socket.gethostname()
    dead = _dead_pid()
    gone = tmp_path / f"{JUDGE_DIR_PREFIX}{dead}@{node}-a1b2c3"
    (gone / "kernelevolve-x" / "build").mkdir(parents=True)
    (gone / "kernelevolve-x" / "build" / "k.so").write_bytes(b"\0" * 64)
    alive = tmp_path / f"{JUDGE_DIR_PREFIX}{os.getpid()}@{node}-d4e5f6"
    alive.mkdir()
    (alive / "log").write_text("judging")
    other = tmp_path / f"{JUDGE_DIR_PREFIX}notapid@{node}-x"  # not a worker's name: left alone
    other.mkdir()
    # another node's worker of the same number, on a TMPDIR that nodes share: not this node's to judge
    elsewhere = tmp_path / f"{JUDGE_DIR_PREFIX}{dead}@{node}-17-g7h8i9"  # node "<this node>-17"
    elsewhere.mkdir()
    unrelated = tmp_path / "kernelevolve-warm-0"
    unrelated.mkdir()

    assert sweep_judge_dirs(str(tmp_path)) == [str(gone)]
    assert not gone.exists()
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted([alive.name, other.name, elsewhere.name, unrelated.name])
    assert (alive / "log").read_text() == "judging"


def test_a_process_of_another_user_counts_as_alive(tmp_path: Path) -> None:
    # pid 1 belongs to root; a user that is not root may not signal it (PermissionError): its folder is kept. As
    # root, pid 1 is alive: kept as well.
    d = tmp_path / f"{JUDGE_DIR_PREFIX}1@{socket.gethostname()}-zzz"
    d.mkdir()
    assert sweep_judge_dirs(str(tmp_path)) == []
    assert d.exists()
