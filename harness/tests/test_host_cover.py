"""The cover of a GPU sample (EventTimer.finish): a sample counts only when its launch had returned on the host
before the device could reach its timing start. The device runs here as recorded event times (no GPU needed)."""
from kernelevolve_harness import shape_timing as S
from kernelevolve_harness import timers as W


class Event:
    def __init__(self, at_ms: float) -> None:
        self.at = at_ms

    def elapsed_time(self, other: "Event") -> float:
        return other.at - self.at


class Cuda:
    @staticmethod
    def synchronize() -> None:
        pass


class Torch:
    cuda = Cuda


def timer() -> W.EventTimer:
    return W.EventTimer(Torch, launch=None, flush=None)


def sample(cover_ms: float, kernel_ms: float, host_ms: float) -> W.QueuedSample:
    """(cover start, timing start, timing end, the launch's host time from the cover start)."""
    return W.QueuedSample(Event(0.0), Event(cover_ms), Event(cover_ms + kernel_ms), host_ms, ["out"])


def test_a_launch_queued_within_the_cover_counts() -> None:
    t = timer()
    out = t.finish([sample(0.06, 0.04, 0.03), sample(0.06, 0.05, 0.02)])
    assert [round(x.ms, 6) for x in out] == [0.04, 0.05] and not any(x.set_aside for x in out)
    assert t.cover_ms == 0.0  # nothing set aside: the flush alone was enough


def test_a_launch_still_queued_at_the_timing_start_is_set_aside_and_the_cover_grows() -> None:
    t = timer()
    # the host took 0.2 ms to queue the second launch (another process had the core): its device time may hold
    # host time, so it is set aside and its round taken again
    out = t.finish([sample(0.06, 0.04, 0.03), sample(0.06, 0.1, 0.2)])
    assert not out[0].set_aside and out[1].set_aside and out[1].results == ["out"]  # its outputs are still checked
    assert round(out[1].ms, 6) == 0.1  # the time as measured, not a sign
    assert t.cover_ms >= 0.06
    # the cover follows most launches, not the one slowed down (a long stall is not chased)
    for _ in range(20):
        t.finish([sample(0.06, 0.04, 0.03)])
    t.finish([sample(0.06, 0.04, 3.0)])
    assert t.cover_ms < 1.0
    assert t.cover_ms <= W.MAX_COVER_MS


def test_rotation_takes_fewer_buffer_sets_when_memory_is_short() -> None:
    assert S.rotation_sets(64 << 20, 4) == 4
    assert S.rotation_sets(800 << 20, 4) == 2
    assert S.rotation_sets(3 << 30, 4) == 1
    assert S.rotation_sets(1 << 20, 1) == 1
