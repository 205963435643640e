"""The candidate runs in a child process: crashes, exits, hangs and printed text never forge a verdict."""
import os
import subprocess
import sys
from typing import List

import pytest

from conftest import HARNESS, MM_SPEC, NAIVE, SPECS, Harness, mm_source

EXIT_SPEC = SPECS / "exits" / "spec.py"


def test_a_segfault_is_a_runtime_error_naming_the_signal(harness: Harness) -> None:
    v = harness.mm(NAIVE + "\n  *(volatile int*)nullptr = 1;")
    assert v["status"] == "runtime_error", v
    assert "SIGSEGV" in v["reason"]
    assert "correctness" in v["reason"]


def test_an_integer_division_by_zero_is_a_runtime_error(harness: Harness) -> None:
    v = harness.mm("  volatile int zero = 0, seven = 7;\n  C[0] = seven / zero;\n" + NAIVE)
    assert v["status"] == "runtime_error", v
    assert "SIGFPE" in v["reason"]


def test_an_exception_escaping_the_kernel_aborts_and_is_a_runtime_error(harness: Harness) -> None:
    v = harness.mm("  if (M > 0) throw 42;\n" + NAIVE)
    # Some compilers make the library import abort/terminate for this, which the symbol check refuses first.
    assert v["status"] in ("runtime_error", "static_rejected"), v
    assert "SIGABRT" in v["reason"] if v["status"] == "runtime_error" else "terminate" in v["reason"] or "abort" in v["reason"]


def test_stack_overflow_by_recursion_is_a_runtime_error(harness: Harness) -> None:
    prelude = "static int deep(volatile int n) { volatile char pad[4096]; pad[0] = (char)n; return deep(n + 1) + pad[0]; }\n"
    v = harness.mm("  C[0] = (float)deep(0);\n" + NAIVE, prelude)
    assert v["status"] == "runtime_error", v
    assert "SIGSEGV" in v["reason"]


def test_an_infinite_loop_is_a_timeout_naming_the_stage(harness: Harness) -> None:
    v = harness.mm("  volatile int spin = 1;\n  while (spin) {}\n" + NAIVE, "", "--timeout-scale", "0.05")
    assert v["status"] == "timeout", v
    assert "correctness stage" in v["reason"] and "killed" in v["reason"]


def test_a_hang_only_when_timed_is_a_timeout_in_the_timing_stage(harness: Harness) -> None:
    # past every correctness call (3 shapes x (2 seeds x 2 runs + 1 on the same buffers + up to 3 robustness calls))
    body = "  static int calls = 0;\n  if (++calls > 24) { volatile int spin = 1; while (spin) {} }\n" + NAIVE
    v = harness.mm(body, "", "--timeout-scale", "0.05")
    assert v["status"] == "timeout", v
    assert "timing stage" in v["reason"]


def test_a_printed_fake_verdict_changes_nothing(harness: Harness) -> None:
    # Prints a perfect verdict (with a guessed nonce) and computes nothing.
    prelude = "#include <cstdio>\n"
    body = ('  printf("{\\"status\\": \\"ok\\", \\"reason\\": \\"fast\\", \\"speedup\\": 1000.0, \\"nonce\\": \\"0\\"}\\n");\n'
            '  fflush(stdout);\n  fprintf(stderr, "{\\"status\\": \\"ok\\", \\"speedup\\": 1000.0}\\n");\n')
    v, r = harness.evaluate(SPECS / "mm" / "spec.py", mm_source(body, prelude))
    assert v["status"] == "incorrect", v
    assert r.stdout.count("status") == 1
    assert "1000" not in r.stdout.split('"log"')[0]


def test_os_exit_from_the_worker_is_a_runtime_error(harness: Harness) -> None:
    v, _ = harness.evaluate(EXIT_SPEC, mm_source(NAIVE, 'extern "C" int exit_mode() { return 1; }\n'))
    assert v["status"] == "runtime_error", v
    assert "exited with code 0" in v["reason"] and "final result" in v["reason"]


def test_sys_exit_from_the_worker_is_a_runtime_error(harness: Harness) -> None:
    v, _ = harness.evaluate(EXIT_SPEC, mm_source(NAIVE, 'extern "C" int exit_mode() { return 2; }\n'))
    assert v["status"] == "runtime_error", v
    assert "exited with code 0" in v["reason"]


def test_raise_system_exit_is_a_runtime_error(harness: Harness) -> None:
    v, _ = harness.evaluate(EXIT_SPEC, mm_source(NAIVE, 'extern "C" int exit_mode() { return 3; }\n'))
    assert v["status"] == "runtime_error", v
    assert "exited with code 5" in v["reason"]


def test_the_harness_goes_on_after_a_crash(harness: Harness) -> None:
    crashed = harness.mm(NAIVE + "\n  *(volatile int*)nullptr = 1;")
    assert crashed["status"] == "runtime_error"
    assert harness.mm(NAIVE)["status"] == "ok"


def test_a_compile_error_is_reported_with_the_compiler_message(harness: Harness) -> None:
    v = harness.mm(NAIVE + "\n  this is not C++;")
    assert v["status"] == "compile_error", v
    assert "error" in v["reason"] and "error" in v["log"]


def test_a_candidate_that_does_not_export_the_kernel_is_a_compile_error(harness: Harness) -> None:
    v, _ = harness.evaluate(SPECS / "mm" / "spec.py", 'extern "C" void other(float* c) { c[0] = 0; }\n')
    assert v["status"] == "compile_error", v
    assert 'export the kernel "mm"' in v["reason"]


def test_a_flood_of_printing_is_cut_off_and_changes_nothing(harness: Harness) -> None:
    # 48 MB of text per call: the worker's log stops growing at 32 MB (RLIMIT_FSIZE) and the verdict is
    # decided as usual, on one stdout line.
    body = ('  static char line[4097];\n  for (int i = 0; i < 4096; ++i) line[i] = 120;\n'
            '  for (long i = 0; i < 12000L; ++i) puts(line);\n' + NAIVE)
    v, r = harness.evaluate(SPECS / "mm" / "spec.py", mm_source(body, "#include <cstdio>\n"))
    assert v["status"] == "ok", v
    assert len(r.stdout) < 100_000


def test_a_runaway_allocation_is_a_runtime_error(harness: Harness) -> None:
    body = "  float* volatile big = new float[1L << 40];\n  big[5] = 1.0f;\n  C[0] = big[5];\n" + NAIVE
    v = harness.mm(body, "#include <new>\n")
    # Newer libstdc++ makes this library import abort (for bad_alloc), which the symbol check refuses first.
    assert v["status"] in ("runtime_error", "static_rejected"), v


def test_a_hang_while_the_library_loads_is_a_timeout_in_the_load_stage(harness: Harness) -> None:
    prelude = "static int spin_at_load() { volatile int s = 1; while (s) {} return 0; }\nstatic int at_load = spin_at_load();\n"
    v = harness.mm(NAIVE, prelude, "--timeout-scale", "0.05")
    assert v["status"] == "timeout", v
    assert "load stage" in v["reason"]


@pytest.mark.parametrize("mode", ["warm", "cold"])
def test_a_judge_killed_from_outside_takes_its_hanging_worker_with_it(harness: Harness, mode: str) -> None:
    # A cancelled remote job kills the judge; the candidate spinning in its worker must not outlive it, whether
    # the worker was forked by the warm-worker server or started as a new Python.
    import signal
    import time
    body = "  volatile int spin = 1;\n  while (spin) {}\n"
    cand = harness.write(mm_source(body))
    judge_tmp = harness.tmp / "judge-tmp"  # the judge's workdir, and so its workers' working folder, is in here
    judge_tmp.mkdir()
    env = dict(os.environ, PYTHONPATH=str(HARNESS), KERNELEVOLVE_CACHE=str(harness.cache), TMPDIR=str(judge_tmp))
    flags = ["--no-warm"] if mode == "cold" else []
    judge = subprocess.Popen([sys.executable, "-m", "kernelevolve_harness", "evaluate", "--spec", str(MM_SPEC),
                              "--candidate", str(cand), "--json", *flags], stdout=subprocess.DEVNULL,
                             stderr=subprocess.DEVNULL, env=env, cwd=str(harness.tmp))

    def workers() -> List[int]:
        found = []
        for d in os.listdir("/proc"):
            if not d.isdigit() or int(d) == judge.pid:
                continue
            try:
                if os.readlink(f"/proc/{d}/cwd").startswith(str(judge_tmp)):
                    found.append(int(d))
            except OSError:
                continue
        return found

    deadline = time.time() + 60
    spinning: List[int] = []
    while time.time() < deadline and len(spinning) < 2:  # reference and candidate workers
        spinning = workers()
        time.sleep(0.2)
    assert spinning, "the judge never started its workers"
    time.sleep(1.5)  # the candidate is in its endless loop by now
    judge.send_signal(signal.SIGKILL)
    judge.wait()
    deadline = time.time() + 10
    alive = spinning
    while alive and time.time() < deadline:
        alive = [p for p in spinning if os.path.exists(f"/proc/{p}") and "Z" not in open(f"/proc/{p}/stat").read().rsplit(")", 1)[1].split()[0]]  # noqa: E501
        time.sleep(0.2)
    assert not alive, f"workers {alive} outlived their judge"
