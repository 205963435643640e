"""The worker's rules for how long to time (the GPU stops once both medians are known precisely)."""
from kernelevolve_harness._worker import _precise


def test_gpu_timing_stops_once_both_medians_are_precise() -> None:
    steady = [10.0 + 0.01 * (i % 5) for i in range(30)]
    noisy = [10.0 + (i % 7) for i in range(30)]
    assert _precise({"baseline": steady, "candidate": steady}, 0.002)
    assert not _precise({"baseline": steady, "candidate": noisy}, 0.002)
    assert not _precise({"baseline": steady[:3], "candidate": steady[:3]}, 0.002)  # too few to say
