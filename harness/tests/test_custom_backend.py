"""The custom backend on the simulated accelerator simacc (tests/simacc: a compiler that builds C++ under another
name, a runtime launcher without which the spec's launch refuses to run): the toolchain the spec or the host
names builds and runs the kernel, and every guard of the cpp backend still applies."""
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

from conftest import HARNESS, NAIVE, SPECS, Harness, mm_source

SIMACC_SPEC = SPECS / "simacc_mm" / "spec.py"
SIMACC = Path(__file__).resolve().parent / "simacc"
STATE = "#include <cstring>\n#include <cmath>\nstatic int calls = 0;\n"
TRANSPOSED = """  for (int i = 0; i < M * N; ++i) C[i] = 0.0f;
  for (int i = 0; i < M; ++i)
    for (int k = 0; k < K; ++k) {
      const float a = A[i * K + k];
      for (int j = 0; j < N; ++j) C[i * N + j] += a * B[k * N + j];
    }"""


def simacc(harness: Harness, body: str, prelude: str = ""):
    return harness.evaluate(SIMACC_SPEC, mm_source(body, prelude))[0]


def spec_with(tmp: Path, toolchain: str) -> Path:
    """The simacc spec with another TOOLCHAIN line (its paths made absolute, since it moves)."""
    text = SIMACC_SPEC.read_text()
    start, end = text.index("TOOLCHAIN = {"), text.index("}\n", text.index("TOOLCHAIN = {")) + 2
    text = text[:start] + toolchain + "\n" + text[end:]
    text = text.replace('SOURCE = "../mm/mm.cpp"', f'SOURCE = "{SPECS / "mm" / "mm.cpp"}"')
    p = tmp / "spec.py"
    p.write_text(text)
    return p


def test_the_baseline_against_itself_is_ok_built_and_run_by_the_toolchain(harness: Harness) -> None:
    v = simacc(harness, NAIVE)
    assert v["status"] == "ok", v
    assert v["compile"]["compiler"] == "simacc-cc"
    assert 0.5 < v["speedup"] < 2.0, v
    assert v["workers"] == {"reference": "cold", "candidate": "cold"}  # started under simacc-run, never forked


def test_a_faster_loop_order_is_ok_and_wrong_results_are_incorrect(harness: Harness) -> None:
    assert simacc(harness, TRANSPOSED)["status"] == "ok"
    v = simacc(harness, NAIVE.replace("s += A", "s -= A"))
    assert v["status"] == "incorrect", v
    assert "Wrong result" in v["reason"]


def test_without_the_run_command_the_device_is_not_attached(harness: Harness) -> None:
    # The host's toolchain (KERNELEVOLVE_TOOLCHAIN, from the job) replaces the spec's run command with none: the
    # workers then start without simacc-run, and the spec's launch finds no device. So the run command is what ran them.
    env_run = dict(os.environ, KERNELEVOLVE_TOOLCHAIN=json.dumps({"run": []}), PYTHONPATH=str(HARNESS),
                   KERNELEVOLVE_CACHE=str(harness.cache))
    r = subprocess.run([sys.executable, "-m", "kernelevolve_harness", "evaluate", "--spec", str(SIMACC_SPEC),
                        "--candidate", str(SPECS / "mm" / "mm.cpp"), "--json"], capture_output=True, text=True,
                       env=env_run, timeout=120)
    assert r.returncode == 2, r.stdout
    assert "no simacc device is attached" in r.stderr


def test_the_adversarial_guards_apply_through_the_toolchain(harness: Harness) -> None:
    # skipping work once the correctness calls are over: the recheck of timed outputs
    v = simacc(harness, "  if (++calls > 24) return;\n" + NAIVE, STATE)  # past every correctness call
    assert v["status"] == "incorrect" and ("timed" in v["reason"] or "fresh" in v["reason"]), v
    # a cache keyed by call count
    v = simacc(harness, """  ++calls;
  if (calls > 24 && calls % 4 != 0) { std::memcpy(C, saved, sizeof(float) * M * N); return; }
""" + NAIVE + "\n  std::memcpy(saved, C, sizeof(float) * M * N);", STATE + "static float saved[48 * 40];\n")
    assert v["status"] == "incorrect", v
    # a write one past the end of the output: the guard bands
    v = simacc(harness, NAIVE + "\n  C[M * N] = 0.0f;")
    assert v["status"] == "incorrect", v
    assert "argument 2" in v["reason"], v
    # a thread: the static rules of C++
    v = simacc(harness, NAIVE, "#include <thread>\nstatic void spin() {}\nstatic std::thread t(spin);\n")
    assert v["status"] == "static_rejected", v
    # a sleep (the static rules, or the built library's imported symbols)
    v = simacc(harness, "  typedef int (*F)(unsigned); F f = (F)sleeper; f(0);\n" + NAIVE,
               'extern "C" int usleep(unsigned);\nstatic void* sleeper = (void*)&usleep;\n')
    assert v["status"] == "static_rejected", v
    # a crash is the candidate's runtime error, and the harness lives on
    v = simacc(harness, "  int* p = nullptr; *(volatile int*)p = 1;\n" + NAIVE)
    assert v["status"] == "runtime_error", v


def test_a_compile_error_carries_the_toolchains_words(harness: Harness) -> None:
    v = simacc(harness, NAIVE + "\n  undeclared_name = 1;")
    assert v["status"] == "compile_error", v
    assert "undeclared_name" in v["log"] and "simacc-cc: building" in v["log"]


def test_a_missing_or_broken_toolchain_is_the_users_error(harness: Harness, tmp_path: Path) -> None:
    cand = SPECS / "mm" / "mm.cpp"
    spec = spec_with(tmp_path, 'TOOLCHAIN = {"compile": ["' + str(SIMACC / "simacc-cc") + '", "{source}", "-o", "{output}"]}')
    r = harness.run("evaluate", "--spec", str(spec), "--candidate", str(cand), "--json")
    assert r.returncode == 2 and r.stdout == "", r.stdout
    assert 'BACKEND "custom" needs the toolchain\'s run command' in r.stderr
    assert '"toolchain" in the host\'s config' in r.stderr

    spec = spec_with(tmp_path, 'TOOLCHAIN = {"compile": ["simacc-cc-not-installed", "{source}"], "run": []}')
    r = harness.run("evaluate", "--spec", str(spec), "--candidate", str(cand), "--json")
    assert r.returncode == 2
    assert "simacc-cc-not-installed is not found" in r.stderr

    # the toolchain fails on the baseline itself: the spec's error, with the toolchain's own words
    broken = tmp_path / "broken-cc"
    broken.write_text("#!/bin/sh\necho 'broken-cc: no license for simacc' >&2\nexit 3\n")
    broken.chmod(0o755)
    spec = spec_with(tmp_path, 'TOOLCHAIN = {"compile": ["' + str(broken) + '", "{source}"], "run": []}')
    r = harness.run("evaluate", "--spec", str(spec), "--candidate", str(cand), "--json")
    assert r.returncode == 2
    assert "does not build" in r.stderr and "no license for simacc" in r.stderr

    # no library written although the compiler said yes
    spec = spec_with(tmp_path, 'TOOLCHAIN = {"compile": ["/bin/true"], "run": []}')
    r = harness.run("evaluate", "--spec", str(spec), "--candidate", str(cand), "--json")
    assert r.returncode == 2 and "wrote no" in r.stderr


def test_the_host_names_the_toolchain_when_the_spec_does_not(harness: Harness, tmp_path: Path) -> None:
    spec = spec_with(tmp_path, "")
    job = {"spec": str(spec), "candidate_source": mm_source(TRANSPOSED), "candidate_name": "mm.cpp",
           "toolchain": {"compile": [str(SIMACC / "simacc-cc"), "{source}", "-o", "{output}"],
                         "run": [str(SIMACC / "simacc-run"), "--"]}}
    env = dict(os.environ, PYTHONPATH=str(HARNESS), KERNELEVOLVE_CACHE=str(harness.cache),
               KERNELEVOLVE_LOCK_DIR=str(tmp_path / "locks"))
    r = subprocess.run([sys.executable, "-m", "kernelevolve_harness", "run-job"], input=json.dumps(job),
                       capture_output=True, text=True, env=env, timeout=180)
    answer = json.loads(r.stdout.strip().splitlines()[-1])
    assert answer["outcome"] == "verdict", answer
    assert answer["verdict"]["status"] == "ok" and answer["verdict"]["compile"]["compiler"] == "simacc-cc"
    job["toolchain"] = "simacc"
    r = subprocess.run([sys.executable, "-m", "kernelevolve_harness", "run-job"], input=json.dumps(job),
                       capture_output=True, text=True, env=env, timeout=60)
    answer = json.loads(r.stdout.strip().splitlines()[-1])
    assert answer["outcome"] == "harness_error" and '"toolchain" must be an object' in answer["message"]


def test_describe_spec_answers_the_toolchain(harness: Harness, tmp_path: Path) -> None:
    r = harness.run("describe-spec", "--spec", str(SIMACC_SPEC))
    facts = json.loads(r.stdout)
    assert r.returncode == 0 and facts["ok"] and facts["backend"] == "custom" and "custom" in facts["backends"]
    assert facts["toolchain"]["hardware"] == "simacc"
    assert facts["toolchain"]["knowledge"] == str(SIMACC / "knowledge")
    assert facts["toolchain"]["run"] == [str(SIMACC / "simacc-run"), "--"]
    spec = spec_with(tmp_path, 'TOOLCHAIN = {"compile": ["cc"], "flags": ["-O2"]}')
    r = harness.run("describe-spec", "--spec", str(spec))
    facts = json.loads(r.stdout)
    assert r.returncode == 2 and not facts["ok"] and "does not know: flags" in facts["error"]


def test_the_example_spec_runs_on_the_simulated_accelerator(harness: Harness) -> None:
    if not shutil.which("g++"):
        raise AssertionError("g++ is needed (the simulated accelerator builds with it)")
    example = HARNESS.parent / "examples" / "custom" / "simacc_matmul"
    v, _ = harness.evaluate(example / "spec.py", example / "candidates" / "scratchpad_tiles.cpp", timeout=240)
    assert v["status"] == "ok", v
    assert v["speedup"] > 1.0, v
