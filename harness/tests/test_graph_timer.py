"""GraphTimer's samples are queued and read together: a group of samples costs one synchronization, and each
sample's time per call is (the faster replay with the calls - the faster replay of the refills alone) / calls.
The device runs here as a clock that replays and sleeps advance (no GPU needed)."""
from typing import List

from kernelevolve_harness import timers as W


class Device:
    def __init__(self) -> None:
        self.clock = 0.0
        self.syncs = 0
        self.sleeps = 0


DEV = Device()


class Event:
    def __init__(self, enable_timing: bool = False) -> None:
        self.at = None

    def record(self) -> None:
        self.at = DEV.clock

    def elapsed_time(self, other: "Event") -> float:
        assert self.at is not None and other.at is not None, "read before it was recorded"
        return other.at - self.at


class Graph:
    def __init__(self, durations: List[float]) -> None:
        self.durations = list(durations)  # each replay's length, in turn

    def replay(self) -> None:
        DEV.clock += self.durations.pop(0)


class Cuda:
    Event = Event

    @staticmethod
    def synchronize() -> None:
        DEV.syncs += 1

    @staticmethod
    def _sleep(cycles: int) -> None:
        DEV.clock += cycles / 1000.0
        DEV.sleeps += 1


class Torch:
    cuda = Cuda


def graph_timer(calls_ms: List[float], refills_ms: List[float]) -> W.GraphTimer:
    t = W.GraphTimer(Torch, launch=None, outputs=[1])
    t.cover_cycles = 50  # 0.05 ms of sleep before each replay: not counted in any sample
    t.refills = (Graph(refills_ms), [])
    t.graphs["k"] = (Graph(calls_ms), ["out"])
    return t


def test_a_group_of_samples_waits_once_and_each_is_calls_minus_refills_per_call() -> None:
    # two samples of a graph of 4 calls: (refills, calls, refills, calls) replays each
    t = graph_timer(calls_ms=[0.50, 0.46, 0.60, 0.58], refills_ms=[0.10, 0.12, 0.11, 0.10])
    before = DEV.syncs
    queued = [t.start("k", None, [[0]] * 4), t.start("k", None, [[0]] * 4)]
    assert DEV.syncs == before  # nothing waited while queuing
    out = t.finish(queued)
    assert DEV.syncs == before + 1
    assert [round(s.ms, 6) for s in out] == [round((0.46 - 0.10) / 4, 6), round((0.58 - 0.10) / 4, 6)]
    assert out[0].results == ["out"] and not out[0].set_aside


def test_a_replay_slower_than_the_host_never_makes_a_negative_time() -> None:
    t = graph_timer(calls_ms=[0.05, 0.05], refills_ms=[0.2, 0.2])
    (s,) = t.finish([t.start("k", None, [[0]] * 2)])
    assert s.ms > 0


def test_only_the_first_replays_after_a_wait_are_covered() -> None:
    # the later replays are queued behind the first ones' device time: a cover would only lengthen the section
    t = graph_timer(calls_ms=[0.5] * 8, refills_ms=[0.1] * 8)
    before = DEV.sleeps
    queued = [t.start("k", None, [[0]] * 4), t.start("k", None, [[0]] * 4)]
    assert DEV.sleeps - before == W.COVERED_REPLAYS
    t.finish(queued)
    t.graphs["k"] = (Graph([0.5] * 2), ["out"])
    t.refills = (Graph([0.1] * 2), [])
    t.finish([t.start("k", None, [[0]] * 4)])  # after a wait, covered again
    assert DEV.sleeps - before == 2 * W.COVERED_REPLAYS
