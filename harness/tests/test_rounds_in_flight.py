"""A GPU pass's rounds are queued in batches of half a group, and the worker waits for the older of two batches
while the newer runs (shape_timing.ShapeTiming.rounds): the device always has the pass's work queued, no more
rounds are in flight than the memory plan allows, a spot-checked round and the floor wait for everything
queued, and every round queued is read before the pass ends. The timer here records what was queued and waited
for (no GPU needed)."""
import random
from types import SimpleNamespace
from typing import Any, List

import pytest

from kernelevolve_harness import shape_timing as S
from kernelevolve_harness import timers as W
from kernelevolve_harness.timing_settings import TimingSettings


class Recorder(W.GraphTimer):
    """Queues samples as numbers; finish() checks they are the oldest queued and notes how many stay queued."""

    def __init__(self) -> None:
        self.queued_samples: List[int] = []
        self.n = 0
        self.most_in_flight = 0
        self.waits: List[bool] = []  # drained or not, each wait

    def start(self, name: str, k: Any, sets: Any) -> Any:
        self.n += 1
        self.queued_samples.append(self.n)
        self.most_in_flight = max(self.most_in_flight, len(self.queued_samples))
        return self.n

    def finish(self, queued: List[Any], drained: bool = True) -> List[W.Sample]:
        assert queued == self.queued_samples[:len(queued)], "the oldest samples are read first"
        del self.queued_samples[:len(queued)]
        assert drained == (not self.queued_samples), "drained exactly when nothing else is queued"
        self.waits.append(drained)
        return [W.Sample(0.01 * random.uniform(0.99, 1.01), ["out"]) for _ in queued]


def pass_of(floor: int, ceiling: int, group_rounds: int) -> S.ShapeTiming:
    t = S.ShapeTiming.__new__(S.ShapeTiming)
    t.gpu, t.rng = True, random.Random(7)
    t.s = TimingSettings(floor_rounds=floor, ceiling_rounds=ceiling, round_goal_short=1e-9)  # runs to the ceiling
    t.timer = Recorder()
    t.kernels = {"baseline": None, "candidate": None}
    t.sets = {"baseline": [([0], [])], "candidate": [([0], [])]}
    t.plan = {"baseline": [(0, 1.0)], "candidate": [(0, 1.0)]}
    t.batch = {"baseline": 1, "candidate": 1}
    t.rotation, t.distinct = [], []
    t.mem = SimpleNamespace(group_rounds=group_rounds, to_json=lambda: {})
    t.phases, t.spans = {"rounds": 0.0}, {}
    t.kept: List[Any] = []
    t.last_results = []
    t._keep = lambda *a, **k: t.kept.append(t.timer.queued_samples[:])  # what was still queued at a spot copy
    return t


@pytest.mark.parametrize("group_rounds", [1, 2, 8])
def test_rounds_are_read_a_batch_behind_within_the_memory_plan(group_rounds: int) -> None:
    t = pass_of(floor=30, ceiling=60, group_rounds=group_rounds)
    report = t.rounds()
    timer = t.timer
    assert isinstance(timer, Recorder)
    assert timer.queued_samples == []  # every queued round read before the pass ended
    assert report["rounds"] * 2 == timer.n == len(report["samples"]["candidate"]) * 2
    # the ceiling, read a batch at a time, and the batch still running behind it
    assert 60 <= report["rounds"] <= 60 + 2 * max(1, group_rounds // 2)
    assert timer.most_in_flight <= 2 * 2 * max(1, group_rounds // 2)  # two batches of half a group's rounds
    assert t.kept == [[], []]  # the two spot-checked rounds: nothing queued behind them when copied
    if group_rounds > 1:
        assert False in timer.waits  # the older batch waited for while the newer ran
