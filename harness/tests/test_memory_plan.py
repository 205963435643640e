"""The memory plan (memory_plan.py): buffer sets, pool entries and rounds in flight planned from the device's
memory and the size of one input/output set; a problem that cannot fit is refused before any call. The last
tests judge a numpy KernelBench-format problem with the device memory stated (KERNELEVOLVE_DEVICE_MEMORY_BYTES)."""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any, Dict, Tuple

import pytest

from conftest import EXAMPLES, HARNESS, Harness
from kernelevolve_harness import memory_plan as M
from kernelevolve_harness.memory_plan import GROUP_ROUNDS
from kernelevolve_harness.shape_timing import batch_cap

H200 = 139 * 10**9
MiB = 1 << 20
CANDIDATE = EXAMPLES / "kernelbench" / "cpu" / "candidates" / "relu_scale.py"
ROWS, COLS = 512, 4096  # x and the output: 8 MiB each
X = ROWS * COLS * 4

# The ReLU-and-scale example problem (examples/kernelbench/cpu/relu_scale.py) at one size of ROWS x COLS
PROBLEM = (EXAMPLES / "kernelbench" / "cpu" / "relu_scale.py").read_text() \
    .replace("batch_size = 16\n", f"batch_size = {ROWS}\n").replace("dim = 1000\n", f"dim = {COLS}\n") \
    .replace('SHAPES = [{"batch_size": 16, "dim": 1000}, {"batch_size": 7, "dim": 4099}]\n', "")
assert f"batch_size = {ROWS}" in PROBLEM and "SHAPES" not in PROBLEM


# --- the arithmetic ----------------------------------------------------------------------------------------
@pytest.mark.parametrize("name,elements", [
    ("HardSigmoid 4096 x 393216", 4096 * 393216),
    ("L2 norm 32768 x 65535", 32768 * 65535),
    ("cumsum 32768 x 32768", 32768 * 32768),
])
def test_published_level1_sizes_fit_an_h200(name: str, elements: int) -> None:
    # fp32 in, fp32 out of the same size: 4.3-8.6 GB each. The counts before held three pool entries, a buffer set
    # and the outputs of two groups of eight rounds (the last group's were still referenced while the next ran):
    # 4 I + 32 O, 155-310 GB.
    size = 4 * elements
    plan = M.plan(size, 2 * size, size, wanted_sets=1, wanted_pool=3, gpu=True, free=H200)
    assert plan.planned_bytes <= plan.usable_bytes, (name, plan)
    assert (plan.sets, plan.pool, plan.group_rounds) == (1, 3, 1), (name, plan)  # 2 GiB of outputs queued at most
    assert 4 * size + 32 * size > plan.usable_bytes, name


def test_a_small_problem_gets_every_set_it_asks_for() -> None:
    plan = M.plan(MiB, 2 * MiB, MiB, wanted_sets=4, wanted_pool=3, gpu=True, free=H200)
    assert (plan.sets, plan.pool, plan.group_rounds) == (4, 3, GROUP_ROUNDS)


def test_sets_come_before_the_pool_and_the_pool_before_rounds_in_flight() -> None:
    i = o = 1000
    need = M.minimum_bytes(i, i + o, o)
    free = int((need + 2 * (i + o) + i) / M.HEADROOM) + 1  # two more sets and one more pool entry
    plan = M.plan(i, i + o, o, wanted_sets=4, wanted_pool=3, gpu=False, free=free)
    assert (plan.sets, plan.pool, plan.group_rounds) == (3, 2, 1)
    assert [plan.set_for_round(r) for r in range(7)] == [0, 1, 2, 0, 1, 2, 0]


def test_one_buffer_set_when_a_second_does_not_fit() -> None:
    i = o = 1000
    need = M.minimum_bytes(i, i + o, o)
    plan = M.plan(i, i + o, o, wanted_sets=4, wanted_pool=3, gpu=False, free=int((need + i + o - 1) / M.HEADROOM))
    assert (plan.sets, plan.pool, plan.group_rounds) == (1, 2, 1)  # what is left holds a pool entry


def test_a_problem_that_cannot_fit_is_refused_with_the_arithmetic() -> None:
    size = 4 * 4096 * 393216  # 6.4 GB in, 6.4 GB out
    with pytest.raises(M.MemoryRefused) as e:
        M.plan(size, 2 * size, size, wanted_sets=4, wanted_pool=3, gpu=True, free=30 * 10**9, source="free on the GPU")
    text = str(e.value)
    for figure in ("12.88 GB", "6.44 GB", "32.21 GB", "30.00 GB", "free on the GPU", "25.93 GB"):
        assert figure in text, (figure, text)
    assert "batch_size" in text and "more memory" in text


def test_a_share_plans_within_that_part_of_the_device_and_never_above_the_measured(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(M.MEMORY_ENV, str(int(40 * M.GB)))
    monkeypatch.setenv(M.SHARE_ENV, "0.25")
    value, source = M.free_bytes(gpu=False)
    assert value == int(10 * M.GB)
    assert "share of 0.25" in source and "beside others" in source
    # a share larger than what is measured keeps to the measured figure
    monkeypatch.delenv(M.MEMORY_ENV)
    monkeypatch.setenv(M.SHARE_ENV, "0.999")
    measured, _ = M._measured_bytes(gpu=False, held=0)
    value, _ = M.free_bytes(gpu=False)
    assert value <= measured
    # 1 (or a number that is not a share) means the whole device
    for text in ("1", "nonsense", "-0.5"):
        monkeypatch.setenv(M.SHARE_ENV, text)
        assert M.memory_share() is None


def test_the_stated_memory_wins_over_the_measured(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(M.MEMORY_ENV, "123456789")
    assert M.free_bytes(gpu=False) == (123456789, f"stated by {M.MEMORY_ENV}")
    monkeypatch.setenv(M.MEMORY_ENV, "")
    free, source = M.free_bytes(gpu=False)
    assert free > 0 and source == "available RAM"


def test_the_gpus_free_memory_is_measured_once_for_the_plan_and_the_kept_outputs(
        monkeypatch: pytest.MonkeyPatch) -> None:
    # free on the GPU counts what this process's allocator holds unused; the memory plan and the room for an output
    # kept on the device (shape_timing._device_room) read that one figure (here from a stand-in for the driver)
    torch = pytest.importorskip("torch")
    from kernelevolve_harness import shape_timing
    gb = 1 << 30
    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)
    monkeypatch.setattr(torch.cuda, "mem_get_info", lambda device=None: (10 * gb, 80 * gb))
    monkeypatch.setattr(torch.cuda, "memory_reserved", lambda device=None: 6 * gb)
    monkeypatch.setattr(torch.cuda, "memory_allocated", lambda device=None: 4 * gb)
    monkeypatch.delenv(M.MEMORY_ENV, raising=False)
    monkeypatch.delenv(M.SHARE_ENV, raising=False)
    assert M.gpu_free_bytes() == (12 * gb, 80 * gb)
    assert M.free_bytes(gpu=True, held=gb) == (13 * gb, "free on the GPU")

    class Output:  # what _device_room reads of a tensor: its device and its size
        device = "cuda:0"
        dtype = torch.float32
        shape = (1,)

        def __init__(self, nbytes: int) -> None:
            self.nbytes = nbytes

    monkeypatch.setattr(shape_timing.A, "nbytes", lambda o: o.nbytes)
    headroom = max(shape_timing.DEVICE_COPY_HEADROOM, int(shape_timing.DEVICE_COPY_HEADROOM_SHARE * 80 * gb))
    assert shape_timing._device_room(Output(12 * gb - headroom))
    assert not shape_timing._device_room(Output(12 * gb - headroom + 1))


# --- judged with the memory stated -------------------------------------------------------------------------
def evaluate(harness: Harness, problem: Path, candidate: Path, memory: int,
             **extra: str) -> Tuple[Dict[str, Any], str, int]:
    env = dict(os.environ, PYTHONPATH=str(HARNESS), KERNELEVOLVE_CACHE=str(harness.cache), **extra)
    env[M.MEMORY_ENV] = str(memory)
    r = subprocess.run([sys.executable, "-m", "kernelevolve_harness", "evaluate", "--spec", str(problem),
                        "--candidate", str(candidate), "--json"], capture_output=True, text=True, env=env,
                       timeout=240, cwd=str(harness.tmp))
    verdict = json.loads(r.stdout) if r.stdout.strip() else {}
    return verdict, r.stderr, r.returncode


@pytest.fixture
def problem(tmp_path: Path) -> Path:
    p = tmp_path / "relu_large.py"
    p.write_text(PROBLEM)
    return p


def one_set_memory() -> int:
    """Memory that holds the minimum (one buffer set) but not a second buffer set."""
    need = M.minimum_bytes(X, 2 * X, X)
    return int((need + X) / M.HEADROOM)


def test_memory_for_one_set_judges_a_right_candidate_ok_with_one_shared_set(harness: Harness, problem: Path) -> None:
    memory = one_set_memory()
    assert 2 * X + M.minimum_bytes(X, 2 * X, X) > M.HEADROOM * memory  # a second set would not fit
    v, err, code = evaluate(harness, problem, CANDIDATE, memory)
    assert code == 0 and v["status"] == "ok", (v, err)
    plan = v["shapes"][0]["memory"]
    assert (plan["sets"], plan["pool"], plan["sets_used"]) == (1, 1, 1), plan  # both kernels in the same set
    assert plan["set_bytes"] == 2 * X and plan["free_bytes"] == memory and plan["source"].startswith("stated")
    assert v["shapes"][0]["batch"] == 1


def test_memory_for_one_set_still_finds_a_wrong_candidate(harness: Harness, problem: Path) -> None:
    wrong = harness.write(CANDIDATE.read_text().replace("(v > 0.0f ? v : 0.0f) * w[j]", "v * w[j]"), ".py")
    v, err, code = evaluate(harness, problem, wrong, one_set_memory())
    assert code == 0 and v["status"] == "incorrect", (v, err)


def test_a_problem_larger_than_the_memory_is_refused_before_any_call(harness: Harness, problem: Path) -> None:
    memory = 3 * X  # less than the minimum, 5 X (three copies of the input, two of the output)
    v, err, code = evaluate(harness, problem, CANDIDATE, memory)
    assert code == 2 and not v, (v, err)
    assert "does not fit" in err and "16.78 MB" in err and "41.94 MB" in err and "25.17 MB" in err, err
    assert "batch_size" in err


def test_a_small_problem_keeps_its_usual_sets(harness: Harness) -> None:
    problem = EXAMPLES / "kernelbench" / "cpu" / "relu_scale.py"
    v, err, code = evaluate(harness, problem, CANDIDATE, 64 << 30)
    assert code == 0 and v["status"] == "ok", (v, err)
    for row in v["shapes"]:
        plan = row["memory"]
        assert plan["pool"] == 3 and plan["group_rounds"] == GROUP_ROUNDS, plan
        assert plan["sets"] == batch_cap(plan["input_bytes"]), plan  # both kernels in the same sets
        assert plan["sets_used"] >= 2, plan


def test_expected_outputs_asked_one_at_a_time_still_judge_right_and_wrong(harness: Harness, problem: Path) -> None:
    # the judge asks the reference for no more outputs ahead than KERNELEVOLVE_PREFETCH_BYTES hold (at least one),
    # and the worker sends each kept call's outputs in a message of its own
    v, err, code = evaluate(harness, problem, CANDIDATE, 64 << 30, KERNELEVOLVE_PREFETCH_BYTES="1")
    assert code == 0 and v["status"] == "ok", (v, err)
    wrong = harness.write(CANDIDATE.read_text().replace("out[i * cols + j] = (v", "if (i + 1 < rows) out[i * cols + j] = (v"),
                          ".py")
    v, err, code = evaluate(harness, problem, wrong, 64 << 30, KERNELEVOLVE_PREFETCH_BYTES="1")
    assert code == 0 and v["status"] == "incorrect", (v, err)


def test_a_later_shape_that_does_not_fit_is_refused_when_it_is_timed(harness: Harness, tmp_path: Path) -> None:
    # the reference measures the first shape only; the worker plans each shape before timing it
    p = tmp_path / "relu_two_sizes.py"
    p.write_text(PROBLEM.replace("def get_inputs", f"SHAPES = [{{'batch_size': 8, 'dim': {COLS}}}, "
                                                   f"{{'batch_size': {ROWS}, 'dim': {COLS}}}]\n\n\ndef get_inputs"))
    v, err, code = evaluate(harness, p, CANDIDATE, 3 * X)
    assert code == 2 and not v, (v, err)
    assert "does not fit" in err and "16.78 MB" in err, err
