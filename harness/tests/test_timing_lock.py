"""The timed pass's phases (shape_timing.py) and the timing lock, on the CPU: the setup runs before the judge takes
the lock, only the rounds while it holds it, the checks after it is released."""
import os
import random
import re
from pathlib import Path
from typing import Any, Dict, List, Tuple

import pytest

from conftest import MM_SPEC, NAIVE, Harness, mm_source
from kernelevolve_harness import _worker as W
from kernelevolve_harness.shape_timing import ShapeTiming, StopTiming
from kernelevolve_harness.timing_settings import TimingSettings

SPAN = re.compile(r"pass of shape (\d+): lock held ([\d.]+)-([\d.]+); setup ([\d.]+)-([\d.]+); "
                  r"rounds ([\d.]+)-([\d.]+); evidence ([\d.]+)-([\d.]+)")


def test_only_the_rounds_run_while_the_lock_is_held(harness: Harness, tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setenv("KERNELEVOLVE_TRACE", "1")
    lock = tmp_path / "cpu.lock"
    v, r = harness.evaluate(MM_SPEC, mm_source(NAIVE), "--lock", str(lock))
    assert v["status"] == "ok", v
    passes = [tuple(map(float, m.groups()[1:])) for m in SPAN.finditer(r.stderr)]
    holds = v["timing"]["lock_held"]
    assert len(passes) == len(holds) >= 3, r.stderr  # one hold per pass of a shape
    for (start, end, *phases), hold in zip(passes, holds):
        setup, rounds, evidence = phases[0:2], phases[2:4], phases[4:6]
        assert [start, end] == pytest.approx(hold, abs=1e-5)
        assert setup[1] <= start, "the setup ran while the lock was held"
        assert start <= rounds[0] <= rounds[1] <= end, "rounds ran outside the lock"
        assert end <= evidence[0], "the checks ran while the lock was held"
    assert v["stages"]["timing_s"] == pytest.approx(sum(e - s for s, e in holds), abs=0.01)


class Recorder:
    def __init__(self) -> None:
        self.sent: List[Tuple[str, Dict[str, Any]]] = []

    def __call__(self, kind: str, blobs: Any = None, **fields: Any) -> None:
        self.sent.append((kind, fields))


def worker(tmp_path: Path, body: str = NAIVE) -> W.CandidateWorker:
    """A candidate worker in this process with the mm spec's baseline and a candidate built from body."""
    w = W.CandidateWorker(None, {"nonce": "n", "backend": "cpp", "spec": str(MM_SPEC)})
    w.load_spec()
    w.outputs, w.inplace = [2], []
    w.threads0 = w.thread_count()
    libs = []
    for name, source in (("base", NAIVE), ("cand", body)):
        src = tmp_path / f"{name}.cpp"
        src.write_text(mm_source(source))
        build = w.backend.build(str(src), str(tmp_path), 120, "mm")
        assert build.ok, build.log
        libs.append(w.backend.load(build.artifact, "mm"))
    w.kb, w.kc = libs
    w.send = Recorder()  # type: ignore[method-assign]
    return w


def test_a_pass_times_both_kernels_and_keeps_evidence_of_its_calls(tmp_path: Path) -> None:
    w = worker(tmp_path)
    settings = TimingSettings(floor_rounds=8, floor_s=0.005, ceiling_rounds=40, ceiling_s=0.05, round_goal=0.02)
    t = ShapeTiming(w, 2, [11, 22, 33], 44, settings, random.Random(5))
    t.setup()
    assert t.timer.kind == "cpu-perf_counter" and t.batch["baseline"] >= 1
    report = t.rounds()
    kept = len(report["samples"]["candidate"])
    assert 8 <= kept <= 40 and len(report["samples"]["baseline"]) == kept
    assert report["rule"]["stop"] in ("precise", "ceiling: rounds", "ceiling: timed work"), report["rule"]
    assert all(x > 0 for x in report["samples"]["candidate"])
    checked = t.evidence()
    # two spot-checked calls, the last timed call of every buffer set (at most 8) and the fresh-input call
    assert [k.meta["what"] for k in t.kept] == ["timed", "timed"] + ["last timed"] * min(8, t.batch["candidate"]) \
        + ["fresh"]
    # on the problem's inputs (its draw is not narrow: no wide inputs here), its outputs of its own
    assert checked["fresh"] == {"seed": 44, "factor": 1.0, "what": "fresh", "wide": False, "alias": None, "guard": None}
    assert all(e["seed"] in (11, 22, 33) and 0.5 <= e["factor"] < 2.0 for e in checked["verify"])
    assert set(checked["phases"]) == {"setup", "capture", "rounds", "evidence"}
    spans = checked["spans"]
    assert spans["setup"][1] <= spans["rounds"][0] <= spans["rounds"][1] <= spans["evidence"][0]


def test_a_guard_band_written_during_the_rounds_is_reported_after_them(tmp_path: Path) -> None:
    # the damage stays in the band until checked (refills write only the buffers), so the check can wait until
    # the lock is released
    w = worker(tmp_path, NAIVE + "\n  C[M * N] = 0.0f;")
    settings = TimingSettings(floor_rounds=4, floor_s=0.0, ceiling_rounds=8, ceiling_s=1.0, round_goal=0.0)
    t = ShapeTiming(w, 0, [1, 2, 3], 4, settings, random.Random(1))
    t.setup()
    t.rounds()
    assert w.send.sent == []  # nothing said while timing
    with pytest.raises(StopTiming):
        t.evidence()
    kind, fields = w.send.sent[-1]
    assert kind == "call" and fields["guard"] == "wrote past the end of argument 2"


def test_a_gpu_worker_asks_for_one_device_queue_unless_told_otherwise(monkeypatch) -> None:
    monkeypatch.delenv("CUDA_DEVICE_MAX_CONNECTIONS", raising=False)
    W.one_device_queue(False)
    assert "CUDA_DEVICE_MAX_CONNECTIONS" not in os.environ  # a CPU worker's environment is left alone
    W.one_device_queue(True)
    assert os.environ["CUDA_DEVICE_MAX_CONNECTIONS"] == "1"
    monkeypatch.setenv("CUDA_DEVICE_MAX_CONNECTIONS", "8")  # the user's (or an A/B run's) choice stands
    W.one_device_queue(True)
    assert os.environ["CUDA_DEVICE_MAX_CONNECTIONS"] == "8"



def race(lock: str, hold_s: float, waiters: List[Tuple[str, float, float]]) -> Dict[str, float]:
    """Holds `lock` for hold_s while waiters come, each (name, background seconds, when after the hold started)
    and holding it 0.1 s once it has it; when each got it (monotonic seconds), and "start", when the hold began."""
    import threading
    import time
    from kernelevolve_harness.device_lock import device_lock
    got: Dict[str, float] = {}
    holding = threading.Event()

    def hold() -> None:
        with device_lock(lock):
            got["start"] = time.monotonic()
            holding.set()
            time.sleep(hold_s)

    def take(name: str, background: float, after: float) -> None:
        time.sleep(after)
        with device_lock(lock, background=background):
            got[name] = time.monotonic()
            time.sleep(0.1)

    holder = threading.Thread(target=hold)
    holder.start()
    holding.wait(5)
    threads = [threading.Thread(target=take, args=w) for w in waiters]
    for t in threads:
        t.start()
    for t in [holder, *threads]:
        t.join(10)
    return got


def test_a_background_evaluation_lets_the_search_take_the_lock_first(tmp_path: Path) -> None:
    # a holder, then a background evaluation waiting (a leader judged again), then one of the search: when the holder
    # lets go, the search's goes first, then the background one; alone, a background one takes the lock at once
    lock = str(tmp_path / "gpu-0.lock")
    got = race(lock, 0.5, [("background", 5.0, 0.0), ("search", 0.0, 0.15)])
    assert got["search"] < got["background"], got
    assert got["background"] - got["search"] >= 0.09  # after the search's hold, not beside it
    got = race(lock, 0.0, [("alone", 5.0, 0.0)])
    assert got["alone"] - got["start"] < 0.5


def test_a_background_evaluation_waits_in_line_once_its_yield_is_over(tmp_path: Path) -> None:
    # the search's evaluations keep waiting (a holder, then one in line): the background one stops giving way after
    # its yield and gets the lock like any, so a confirmation is never shut out
    got = race(str(tmp_path / "gpu-0.lock"), 1.0, [("search", 0.0, 0.0), ("background", 0.2, 0.05)])
    assert set(got) == {"start", "search", "background"}
    assert got["background"] - got["start"] < 2.0, got
