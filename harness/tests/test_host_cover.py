"""The cover of a GPU sample (EventTimer): a sample counts only when the device had not reached its timing start
by the time its end was queued; the device is kept behind the host by a head cover after each wait and a sleep
that matches the device's pace per sample to the host's. The device runs here as recorded sleeps and event
answers (no GPU needed), the host as a clock the launches advance."""
from typing import List

import pytest

from kernelevolve_harness import shape_timing as S
from kernelevolve_harness import timers as W

PER_MS = 1000.0  # sleep cycles a millisecond
FLUSH_MS = 0.07


class Device:
    def __init__(self) -> None:
        self.host_ms = 0.0  # the host's clock
        self.reached: List[bool] = []  # what each sample's start event answers when queried, in turn
        self.kernel_ms = 0.02
        self.sleeps: List[float] = []  # ms of each sleep queued
        self.syncs = 0
        self.waited_on: List["Event"] = []


DEV = Device()


class Event:
    def __init__(self, enable_timing: bool = False) -> None:
        self.starts = False

    def record(self) -> None:
        pass

    def query(self) -> bool:
        return DEV.reached.pop(0) if DEV.reached else False

    def elapsed_time(self, other: "Event") -> float:
        return DEV.kernel_ms

    def synchronize(self) -> None:
        DEV.waited_on.append(self)


class Cuda:
    Event = Event

    @staticmethod
    def synchronize() -> None:
        DEV.syncs += 1

    @staticmethod
    def _sleep(cycles: int) -> None:
        DEV.sleeps.append(cycles / PER_MS)


class Torch:
    cuda = Cuda


class Flush:
    def zero_(self) -> None:
        pass


@pytest.fixture(autouse=True)
def device(monkeypatch: pytest.MonkeyPatch) -> Device:
    global DEV
    DEV = Device()
    monkeypatch.setattr(W, "_SLEEP", (PER_MS, FLUSH_MS))
    monkeypatch.setattr(W, "_perf_counter", lambda: DEV.host_ms / 1000.0)
    return DEV


def timer(host_ms_a_sample: float) -> W.EventTimer:
    def launch(k: object, *args: object) -> str:
        DEV.host_ms += host_ms_a_sample  # the launch's host time (the refills' too, here)
        return "out"
    return W.EventTimer(Torch, launch=launch, flush=Flush())


def queue(t: W.EventTimer, n: int) -> List[W.QueuedSample]:
    return [t.start("k", None, [[0]]) for _ in range(n)]


def test_a_sample_whose_start_the_device_had_not_reached_counts_and_one_it_had_is_set_aside() -> None:
    t = timer(0.1)
    DEV.reached = [False, True, False]
    out = t.finish(queue(t, 3))
    assert [s.set_aside for s in out] == [False, True, False]
    assert out[1].results == ["out"]  # its outputs are still checked
    assert round(out[1].ms, 6) == 0.02  # the time as measured
    assert t.margin > W.PACE_MARGIN  # the device is kept further behind from now on


def test_the_sleep_matches_the_device_pace_to_the_host_pace() -> None:
    t = timer(0.3)  # the host queues a sample in 0.3 ms; the device runs one in 0.07 + 0.02 ms without a sleep
    t.finish(queue(t, 9))
    assert t.sleep_ms == pytest.approx(0.3 * W.PACE_MARGIN - FLUSH_MS - 0.02)
    assert t.cover_ms == pytest.approx(t.sleep_ms + FLUSH_MS)
    fast = timer(0.05)  # a host faster than the device: no sleep at all
    fast.finish(queue(fast, 9))
    assert fast.sleep_ms == 0.0


def test_a_head_cover_after_each_wait_and_none_while_samples_are_still_queued() -> None:
    t = timer(0.3)
    t.finish(queue(t, 9))
    DEV.sleeps.clear()
    first = queue(t, 4)  # after a wait: the first sample covered by a few of the host's samples
    assert DEV.sleeps[0] == pytest.approx(W.HEAD_SAMPLES * 0.3 * W.PACE_MARGIN, abs=0.002)  # whole cycles
    assert DEV.sleeps[1:] == pytest.approx([t.sleep_ms] * 3, abs=0.002)
    second = queue(t, 4)
    t.finish(first, drained=False)  # waits on the first batch's last sample alone; the second still runs
    assert DEV.waited_on == [first[-1].end] and DEV.syncs == 1
    DEV.sleeps.clear()
    queue(t, 1)
    assert DEV.sleeps == pytest.approx([t.sleep_ms], abs=0.002)  # behind the second batch: no head cover
    t.finish(second)
    assert DEV.syncs == 2


def test_a_wait_never_counts_as_the_host_pace() -> None:
    t = timer(0.1)
    a = queue(t, 4)
    DEV.host_ms += 50.0  # the host waits, or checks outputs, between two batches
    t.finish(a, drained=False)
    t.finish(queue(t, 4))
    assert max(t.paces) == pytest.approx(0.1)


def test_the_cover_stays_bounded_when_every_sample_comes_late() -> None:
    t = timer(0.2)
    for _ in range(40):
        DEV.reached = [True] * 4
        t.finish(queue(t, 4))
    assert t.margin == W.MAX_PACE_MARGIN
    assert t.sleep_ms <= W.MAX_COVER_MS and t.head_ms() <= W.MAX_COVER_MS
    for _ in range(100):  # samples on time again: the margin comes back down
        t.finish(queue(t, 4))
    assert t.margin == pytest.approx(W.PACE_MARGIN)


def test_rotation_takes_fewer_buffer_sets_when_memory_is_short() -> None:
    assert S.rotation_sets(64 << 20, 4) == 4
    assert S.rotation_sets(800 << 20, 4) == 2
    assert S.rotation_sets(3 << 30, 4) == 1
    assert S.rotation_sets(1 << 20, 1) == 1
