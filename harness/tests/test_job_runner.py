"""`run-job`: one job in, one checked envelope out; the runner owns the timing lock, the timeout and the cleanup."""
from __future__ import annotations

import json
import os
import signal
import stat
import subprocess
import sys
import time
from pathlib import Path
from typing import Any, Dict, List

import pytest

from conftest import HARNESS, MM_SPEC, NAIVE, SPECS, mm_source
from kernelevolve_harness.device_lock import lock_name, lock_path

SPIN = "  volatile int spin = 1;\n  while (spin) {}\n" + NAIVE


def _env(tmp: Path, cache: Path) -> Dict[str, str]:
    return dict(os.environ, PYTHONPATH=str(HARNESS), KERNELEVOLVE_CACHE=str(cache),
                KERNELEVOLVE_LOCK_DIR=str(tmp / "locks"), TMPDIR=str(tmp))


def start_job(job: Dict[str, Any], tmp: Path, cache: Path, **env: str) -> subprocess.Popen:
    p = subprocess.Popen([sys.executable, "-m", "kernelevolve_harness", "run-job"], stdin=subprocess.PIPE,
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env={**_env(tmp, cache), **env},
                         cwd=str(tmp))
    assert p.stdin is not None
    p.stdin.write(json.dumps(job))
    p.stdin.close()
    return p


def answer(p: subprocess.Popen, timeout: float = 120) -> Dict[str, Any]:
    assert p.stdout is not None and p.stderr is not None
    out, err = p.stdout.read(), p.stderr.read()
    p.wait(timeout=timeout)
    lines = out.strip().splitlines()
    assert len(lines) == 1, f"run-job must print exactly one envelope line, got {out!r} (stderr {err!r})"
    return json.loads(lines[0])


def run_job(job: Dict[str, Any], tmp: Path, cache: Path, timeout: float = 120) -> Dict[str, Any]:
    return answer(start_job(job, tmp, cache), timeout)


def mm_job(body: str, **extra: Any) -> Dict[str, Any]:
    return {"spec": str(MM_SPEC), "candidate_source": mm_source(body), "candidate_name": "cand.cpp", **extra}


def processes_under(folder: Path) -> List[str]:
    """Processes whose working folder or command line lies under `folder`, other than this user's warm-worker
    servers and what they forked (the server outlives jobs by design, and its shared reference process moves to a
    folder of its own under the TMPDIR it was given)."""
    from kernelevolve_harness.process_tree import _is_warm_server, descendants
    servers = [int(e) for e in os.listdir("/proc") if e.isdigit() and _is_warm_server(int(e))]
    spared = set(servers) | {pid for s in servers for pid in descendants(s, spare_warm_servers=False)}
    found = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit() or int(entry) == os.getpid() or int(entry) in spared:
            continue
        try:
            cwd = os.readlink(f"/proc/{entry}/cwd")
            with open(f"/proc/{entry}/cmdline", "rb") as f:
                cmd = f.read().replace(b"\0", b" ").decode("utf-8", "replace")
        except OSError:
            continue
        if cwd.startswith(str(folder)) or str(folder) in cmd:
            found.append(f"{entry}: {cmd}")
    return found


def test_a_job_from_stdin_answers_one_verdict_envelope_with_its_lock(tmp_path: Path, cache_dir: Path) -> None:
    e = run_job(mm_job(NAIVE, device="3"), tmp_path, cache_dir)
    assert e["envelope"] == 1 and e["outcome"] == "verdict", e
    assert e["verdict"]["status"] == "ok", e["verdict"]
    assert e["device"] == "3"
    assert e["lock"] == str(tmp_path / "locks" / "gpu-3.lock")
    holds = e["verdict"]["timing"]["lock_held"]  # one hold per timed pass of a shape
    assert len(holds) >= 3
    assert all(0 < end - start for start, end in holds)
    assert holds[-1][1] - holds[0][0] < e["elapsed_ms"] / 1000
    assert e["elapsed_ms"] > 0 and e["node"]


def test_the_judge_keeps_its_compiled_bytecode_in_the_harness_cache(tmp_path: Path) -> None:
    # An image that sets PYTHONDONTWRITEBYTECODE (the H200's) had every judge, a new Python per job, compile numpy
    # and the harness from their sources: the judge reads and writes its bytecode in the harness's cache instead
    cache = tmp_path / "cache"
    e = answer(start_job(mm_job(NAIVE), tmp_path, cache, PYTHONDONTWRITEBYTECODE="1"))
    assert e["verdict"]["status"] == "ok", e
    compiled = {p.name.split(".")[0] for p in (cache / "pycache").rglob("*.pyc")}
    assert {"judge", "ratios", "compare"} <= compiled, sorted(compiled)[:20]
    import numpy
    assert any((cache / "pycache" / Path(numpy.__file__).parent.relative_to("/")).rglob("*.pyc"))


def test_the_envelope_names_the_machine_as_check_host_does(tmp_path: Path, cache_dir: Path) -> None:
    e = run_job(mm_job(NAIVE), tmp_path, cache_dir)
    r = subprocess.run([sys.executable, "-m", "kernelevolve_harness", "check-host"], capture_output=True, text=True,
                       env=_env(tmp_path, cache_dir), timeout=120)
    facts = json.loads(r.stdout)
    assert e["machine"]["cpu"] == facts["cpu"]
    assert facts["cpu"].endswith(f" ({os.cpu_count()} cores)") and not facts["cpu"].startswith(" (")
    # a GPU's name where check-host found one (several kinds: one of them), none where it found none
    assert e["machine"].get("gpu", "none") in [facts["gpu"], *facts["gpu"].split(", ")]


def test_machine_names_the_job_device_among_several_kinds_of_gpu(monkeypatch: pytest.MonkeyPatch) -> None:
    from kernelevolve_harness import host_check
    monkeypatch.setattr(host_check, "gpu_names", lambda: ["NVIDIA H200", "NVIDIA A100-SXM4-80GB"])
    assert host_check.machine("1")["gpu"] == "NVIDIA A100-SXM4-80GB"
    assert host_check.machine(None)["gpu"] == "NVIDIA A100-SXM4-80GB, NVIDIA H200"
    monkeypatch.setattr(host_check, "gpu_names", lambda: ["NVIDIA H200"] * 8)
    assert host_check.machine("5")["gpu"] == "NVIDIA H200"
    monkeypatch.setattr(host_check, "gpu_names", lambda: [])
    assert "gpu" not in host_check.machine("0")


def test_a_job_file_and_a_candidate_path_work_too(tmp_path: Path, cache_dir: Path) -> None:
    cand = tmp_path / "given.cpp"
    cand.write_text(mm_source(NAIVE.replace("s += ", "s -= ")))
    job = tmp_path / "job.json"
    # Relative paths are the caller's, resolved where run-job starts (not in the job's scratch folder).
    job.write_text(json.dumps({"spec": os.path.relpath(MM_SPEC, tmp_path), "candidate": "given.cpp"}))
    r = subprocess.run([sys.executable, "-m", "kernelevolve_harness", "run-job", "--job", str(job)],
                       capture_output=True, text=True, env=_env(tmp_path, cache_dir), timeout=120, cwd=str(tmp_path))
    e = json.loads(r.stdout)
    assert r.returncode == 0 and e["outcome"] == "verdict"
    assert e["verdict"]["status"] == "incorrect"
    assert e["lock"].endswith("cpu.lock")


def candidate_loaded_under(folder: Path) -> bool:
    """Whether some process (a worker the warm server forked included) has loaded a library built under `folder`:
    the candidate's worker, which runs in the judge's folder inside the job's. Counting processes is not a sign of
    it: a compiler is one for a moment, and a cached build has none."""
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/maps", encoding="utf-8", errors="replace") as f:
                if any(line.rstrip().endswith(".so") and str(folder) in line for line in f):
                    return True
        except OSError:
            continue
    return False


def wait_for_candidate(folder: Path, timeout_s: float = 60) -> None:
    end = time.monotonic() + timeout_s
    while not candidate_loaded_under(folder) and time.monotonic() < end:
        time.sleep(0.1)
    assert candidate_loaded_under(folder), f"no process loaded a candidate built under {folder} in {timeout_s:g} s"


def left_in(tmp: Path) -> List[str]:
    """What a stopped job left in the machine's temporary folder: its scratch and the judge's working folder (the
    compiled candidate, the workers' logs) go with it, though the judge was killed before it could remove its own."""
    return sorted(p.name for p in tmp.iterdir() if p.name.startswith("kernelevolve-"))


def test_the_runner_stops_a_job_at_its_limit_and_leaves_nothing_running(tmp_path: Path, cache_dir: Path) -> None:
    started = time.monotonic()
    e = run_job(mm_job(SPIN, timeout_s=4), tmp_path, cache_dir)
    assert time.monotonic() - started < 30
    assert e["outcome"] == "verdict"
    assert e["verdict"]["status"] == "timeout"
    assert "did not finish within 4 s" in e["verdict"]["reason"]
    assert processes_under(tmp_path) == []
    assert left_in(tmp_path) == []


def test_sigterm_cancels_the_job_with_its_whole_tree(tmp_path: Path, cache_dir: Path) -> None:
    p = start_job(mm_job(SPIN), tmp_path, cache_dir)
    # The judge runs in the job's scratch folder (under TMPDIR); wait until its worker is inside the candidate.
    wait_for_candidate(tmp_path)
    assert processes_under(tmp_path)
    time.sleep(2)
    p.send_signal(signal.SIGTERM)
    e = answer(p)
    assert e["outcome"] == "cancelled"
    assert processes_under(tmp_path) == []
    assert left_in(tmp_path) == []


def test_a_wrong_spec_is_a_spec_error_that_says_what_to_fix(tmp_path: Path, cache_dir: Path) -> None:
    spec = tmp_path / "hip_spec.py"
    (tmp_path / "k.hip").write_text("int x;\n")
    spec.write_text('BACKEND = "hip"\nSOURCE = "k.hip"\nKERNEL = "k"\nSHAPES = [{"n": 1}]\n'
                    "def inputs(shape, seed):\n    return ()\ndef launch(k, *args):\n    return None\n")
    e = run_job({"spec": str(spec), "candidate_source": "int x;\n", "candidate_name": "c.hip"}, tmp_path, cache_dir)
    assert e["outcome"] == "spec_error"
    assert 'BACKEND is "hip"' in e["message"] and "cpp" in e["message"]


@pytest.mark.parametrize("job, said", [
    ({"candidate_source": "x", "candidate_name": "c.cpp"}, 'no "spec"'),
    ({"spec": "s.py"}, "names its candidate once"),
    ({"spec": "s.py", "candidate_source": "x"}, '"candidate_name"'),
    ({"spec": "s.py", "candidate": "c.cpp", "timeout_s": -1}, "positive number"),
    ({"spec": "s.py", "candidate_source": "x", "candidate_name": "../evil.cpp"}, "plain file name"),
    ({"spec": "s.py", "candidate": "c.cpp", "gpu": 1}, "fields this harness does not know: gpu"),
    ({"spec": "s.py", "candidate": "c.cpp", "inputs": "narrow"}, '"inputs" must be "wide" or "problem"'),
    ({"spec": "s.py", "candidate": "c.cpp", "memory_share": 1.5}, '"memory_share" must be a fraction'),
    ({"spec": "s.py", "candidate": "c.cpp", "background": "yes"}, '"background" must be true or false'),
])
def test_a_malformed_job_is_refused_with_a_sentence(tmp_path: Path, cache_dir: Path, job: Dict[str, Any],
                                                     said: str) -> None:
    p = start_job(job, tmp_path, cache_dir)
    e = answer(p)
    assert p.returncode == 2
    assert e["outcome"] == "harness_error" and said in e["message"], e


def test_two_jobs_on_one_device_never_time_at_once(tmp_path: Path, cache_dir: Path) -> None:
    # one of them in the background (a leader judged again): it gives way at the lock, and still never overlaps
    jobs = [start_job(mm_job(NAIVE + f"\n  // {i}\n", device="0", **({"background": True} if i == 1 else {})), tmp_path,
                      cache_dir) for i in range(3)]
    answers = [answer(p) for p in jobs]
    assert [e["verdict"]["status"] for e in answers] == ["ok"] * 3, answers
    held = sorted(tuple(h) for e in answers for h in e["verdict"]["timing"]["lock_held"])
    for (_, end), (start, _) in zip(held, held[1:]):
        assert end <= start, held


def test_lock_names_are_one_per_device_per_machine(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    assert lock_name("0") == "gpu-0.lock"
    assert lock_name("0,1") == "gpu-0-1.lock"
    assert lock_name(None) == lock_name("") == "cpu.lock"
    with pytest.raises(ValueError):
        lock_name("../../etc/passwd")
    monkeypatch.setenv("KERNELEVOLVE_LOCK_DIR", str(tmp_path / "locks"))
    path = lock_path("2")
    assert path == str(tmp_path / "locks" / "gpu-2.lock")
    # Every user of the machine can open it and the folder, as /tmp.
    assert stat.S_IMODE(os.stat(path).st_mode) == 0o666
    assert stat.S_IMODE(os.stat(tmp_path / "locks").st_mode) == 0o1777
    monkeypatch.delenv("KERNELEVOLVE_LOCK_DIR")
    assert lock_path("0") == "/tmp/kernelevolve-locks/gpu-0.lock"


def test_describe_spec_answers_the_header_as_the_harness_reads_it(tmp_path: Path) -> None:
    r = subprocess.run([sys.executable, "-m", "kernelevolve_harness", "describe-spec", "--spec", str(MM_SPEC)],
                       capture_output=True, text=True, env=dict(os.environ, PYTHONPATH=str(HARNESS)), timeout=60)
    facts = json.loads(r.stdout)
    assert r.returncode == 0 and facts["ok"] is True
    assert facts["backend"] == "cpp" and facts["kernel"] == "mm"
    assert facts["source"] == str(SPECS / "mm" / "mm.cpp")
    assert facts["shapes"] and all(isinstance(s, dict) for s in facts["shapes"])
    assert {"cpp", "triton", "cuda"} <= set(facts["backends"]) and "hip" not in facts["backends"]


def describe(tmp: Path, text: str) -> Dict[str, Any]:
    (tmp / "k.cpp").write_text("int x;\n")
    spec = tmp / "spec.py"
    spec.write_text(text)
    r = subprocess.run([sys.executable, "-m", "kernelevolve_harness", "describe-spec", "--spec", str(spec)],
                       capture_output=True, text=True, env=dict(os.environ, PYTHONPATH=str(HARNESS)), timeout=60)
    facts = json.loads(r.stdout)
    assert r.returncode == (0 if facts["ok"] else 2)
    return facts


FUNCS = "def inputs(shape, seed):\n    return ()\ndef launch(k, *args):\n    return None\n"


@pytest.mark.parametrize("text, said", [
    ('BACKEND = "hip"\nSOURCE = "k.cpp"\nKERNEL = "k"\nSHAPES = [{}]\n' + FUNCS, 'BACKEND is "hip"'),
    ('BACKEND = "cpp"\nSOURCE = "k.cpp"\nKERNEL = "k"\n' + FUNCS, "does not define SHAPES"),
    ('BACKEND = "cpp"\nSOURCE = "gone.cpp"\nKERNEL = "k"\nSHAPES = [{}]\n' + FUNCS, "does not exist"),
    ('BACKEND = "cpp"\nSOURCE = "k.cpp"\nSHAPES = [{}]\n' + FUNCS, "does not define KERNEL"),
    ('BACKEND = "cpp"\nSOURCE = "k.cpp"\nKERNEL = "k"\nSHAPES = [1]\n' + FUNCS, "SHAPES[0] is int"),
    ('BACKEND = "cpp"\nSOURCE = "k.cpp"\nKERNEL = "k"\nSHAPES = [{}]\nOUTPUTS = ["y"]\n' + FUNCS, "OUTPUTS must be"),
    ('BACKEND = "cpp"\nSOURCE = "k.cpp"\nKERNEL = "k"\nSHAPES = [{}]\n', "does not define inputs"),
])
def test_describe_spec_says_what_is_wrong(tmp_path: Path, text: str, said: str) -> None:
    facts = describe(tmp_path, text)
    assert facts["ok"] is False and said in facts["error"], facts


def test_describe_spec_leaves_computed_names_to_the_import_on_the_host(tmp_path: Path) -> None:
    facts = describe(tmp_path, 'import torch\nBACKEND = "cpp"\nSOURCE = "k.cpp"\nKERNEL = "k"\n'
                               'SHAPES = [{"n": n} for n in (1, 2)]\nTOLERANCE = {"rtol": 1e-3}\n' + FUNCS)
    assert facts["ok"] is True
    assert facts["shapes"] is None and facts["computed"] == ["SHAPES"]
    assert facts["tolerance"] == {"rtol": 1e-3}


def test_the_jobs_inputs_reach_the_judge(tmp_path: Path, cache_dir: Path) -> None:
    # A HardSigmoid without its clamp: right on the problem's inputs (all in [0, 1)) alone.
    candidate = tmp_path / "no_clamp.py"
    candidate.write_text('import numpy as np\n\nCPP_SOURCE = r"""\n#include <cstdint>\nextern "C" void hs(float* o, '
                         'const float* x, int64_t n) { for (int64_t i = 0; i < n; ++i) o[i] = (x[i] + 3.0f) / 6.0f; }\n'
                         '"""\n\n\nclass ModelNew:\n    def __init__(self):\n        pass\n\n    def forward(self, x):\n'
                         '        out = np.empty_like(x)\n        cpp.hs(out, x, x.size)\n        return out\n')
    job = {"spec": str(SPECS / "narrow" / "hardsigmoid.py"), "candidate": str(candidate)}
    assert run_job(job, tmp_path, cache_dir)["verdict"]["status"] == "narrow_inputs"
    assert run_job(dict(job, inputs="problem"), tmp_path, cache_dir)["verdict"]["status"] == "ok"


def test_the_jobs_memory_share_reaches_the_judge(tmp_path: Path, cache_dir: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # the same problem fits the machine's stated memory, and is refused within a tenth of it, with the share named
    job = {"spec": str(SPECS / "narrow" / "hardsigmoid.py"), "candidate": str(SPECS / "narrow" / "hardsigmoid.py")}
    monkeypatch.setenv("KERNELEVOLVE_DEVICE_MEMORY_BYTES", "2000000")
    assert run_job(job, tmp_path, cache_dir)["verdict"]["status"] == "ok"
    e = run_job(dict(job, memory_share=0.1), tmp_path, cache_dir)
    assert e["outcome"] == "spec_error", e
    assert "share of 0.10 of the device's 2.00 MB" in e["message"]


def test_a_job_within_a_share_has_a_reference_of_its_own(tmp_path: Path, cache_dir: Path) -> None:
    # a shared reference would outlive the job, holding its arrays outside every share of the device
    job = {"spec": str(SPECS / "narrow" / "hardsigmoid.py"), "candidate": str(SPECS / "narrow" / "hardsigmoid.py")}
    alone = run_job(job, tmp_path, cache_dir)["verdict"]
    assert alone["workers"]["reference"].startswith("shared"), alone["workers"]
    beside = run_job(dict(job, memory_share=0.5), tmp_path, cache_dir)["verdict"]
    assert beside["status"] == "ok", beside
    assert not beside["workers"]["reference"].startswith("shared"), beside["workers"]
