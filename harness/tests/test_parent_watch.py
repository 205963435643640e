"""A judge whose parent is killed (an editor killed mid-run) ends, and its cleanup runs, within seconds."""
import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

HARNESS = str(Path(__file__).resolve().parents[1])


def test_judge_ends_and_cleans_up_when_its_parent_is_killed(tmp_path: Path) -> None:
    marker = tmp_path / "cleaned"
    pidfile = tmp_path / "judge.pid"
    judge = textwrap.dedent(f"""
        import os, time
        from kernelevolve_harness.parent_watch import exit_with_parent
        exit_with_parent(poll_s=0.1, grace_s=2.0)
        open({str(pidfile)!r}, "w").write(str(os.getpid()))
        try:
            time.sleep(120)
        finally:
            open({str(marker)!r}, "w").write("workers killed")
    """)
    # The parent starts the judge and waits, as the editor's extension host does.
    parent = subprocess.Popen([sys.executable, "-c", f"import subprocess, sys; subprocess.run([sys.executable, '-c', {judge!r}])"],
                              env={**os.environ, "PYTHONPATH": HARNESS})
    deadline = time.monotonic() + 30
    while not pidfile.exists() or not pidfile.read_text():
        assert time.monotonic() < deadline, "the judge did not start"
        time.sleep(0.05)
    judge_pid = int(pidfile.read_text())
    parent.send_signal(signal.SIGKILL)
    parent.wait()
    killed_at = time.monotonic()
    while time.monotonic() - killed_at < 10:
        try:
            os.kill(judge_pid, 0)
        except ProcessLookupError:
            break
        time.sleep(0.05)
    else:
        os.kill(judge_pid, signal.SIGKILL)
        raise AssertionError("the judge outlived its parent by 10 s")
    assert marker.read_text() == "workers killed"
    assert time.monotonic() - killed_at < 3
