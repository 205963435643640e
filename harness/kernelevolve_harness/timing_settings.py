"""How long the worker times a shape, and when the judge has it timed again: every setting in one place, read
from the environment by the judge (`TimingSettings.from_env`) and sent to the worker with the timing command."""
from __future__ import annotations

import dataclasses
import os
from dataclasses import dataclass
from typing import Any, Dict

from .protocol import BATCH_BYTES, MAX_BATCH


def _env(name: str, default: float) -> float:
    try:
        return float(os.environ.get(name, default))
    except ValueError:
        return default


@dataclass(frozen=True)
class TimingSettings:
    # The stopping rule (stopping_rule.py): a pass stops once its paired ratio's interval is within round_goal,
    # after a floor (rounds and seconds of timed work) and at a ceiling (rounds, or seconds of timed work).
    floor_rounds: int = 30  # KERNELEVOLVE_MIN_SAMPLES
    floor_s: float = 0.0  # KERNELEVOLVE_TIMING_BUDGET_S
    ceiling_rounds: int = 200  # KERNELEVOLVE_MAX_SAMPLES
    ceiling_s: float = 1.2  # KERNELEVOLVE_TIMING_CEILING_S
    round_goal: float = 0.01  # KERNELEVOLVE_ROUND_GOAL: the pass's 95% interval, relative half-width
    # GPU kernels under ~10 us (timed as CUDA graphs), whose fidelity goal is +-5% rather than +-2%
    round_goal_short: float = 0.025  # KERNELEVOLVE_ROUND_GOAL_SHORT
    # The judge: shapes whose verdict interval is wider than ratio_goal are timed again in new buffers, at most
    # retime_shapes of them.
    ratio_goal: float = 0.02  # KERNELEVOLVE_RATIO_GOAL
    # shapes timed as CUDA graphs (kernels under ~10 us), whose passes stop at round_goal_short: their verdict
    # goal is as much wider (with 0.02, nearly every such shape was timed again, twice a softmax candidate on an
    # H200, for an interval its passes are not built to give)
    ratio_goal_short: float = 0.05  # KERNELEVOLVE_RATIO_GOAL_SHORT
    retime_shapes: int = 2  # KERNELEVOLVE_RETIME_SHAPES
    # only where more passes can bring the interval near its goal: not wider than goal x retime_reach
    retime_reach: float = 2.0  # KERNELEVOLVE_RETIME_REACH
    # A shape whose ratio's interval lies wholly below far_below (the candidate there at most half as fast as the
    # baseline) needs it no narrower than far_goal, and is not timed again in new buffers: no choice of the search
    # turns on a finer figure of a launch that loses by that much (a per-shape table never picks it there: the
    # launch as written is twice as fast), and such a candidate's calls are the slowest to time. 0 turns it off.
    far_below: float = 0.5  # KERNELEVOLVE_FAR_BELOW
    far_goal: float = 0.05  # KERNELEVOLVE_FAR_GOAL
    # and may stop from this many rounds on, before the floor (never below 3; at most the floor). The pass still
    # takes its spot checks: those drawn past the round where it stops are taken in the rounds right after it.
    far_floor_rounds: int = 10  # KERNELEVOLVE_FAR_FLOOR
    # GPU, one call per sample: the buffer sets a pass turns through (the interval's clusters)
    buffer_sets: int = 4  # KERNELEVOLVE_BUFFER_SETS
    # one sample's buffer sets at most: how many, and their bytes in all
    max_batch: int = MAX_BATCH
    batch_bytes: int = BATCH_BYTES

    @classmethod
    def from_env(cls, gpu: bool) -> "TimingSettings":
        """The defaults for the device kind, each overridden by its environment variable. The GPU's rounds stop
        on precision (30 to 200 rounds, at most 1.2 s of timed work); the CPU's take at least 80 ms of timed work,
        since a shared machine's samples are noisy and a few lucky ones must not end a pass, and at most as long
        again."""
        base = cls() if gpu else cls(floor_rounds=5, floor_s=0.08, ceiling_s=0.16, round_goal=0.02)
        return cls(
            floor_rounds=max(3, int(_env("KERNELEVOLVE_MIN_SAMPLES", base.floor_rounds))),
            floor_s=_env("KERNELEVOLVE_TIMING_BUDGET_S", base.floor_s),
            ceiling_rounds=int(_env("KERNELEVOLVE_MAX_SAMPLES", base.ceiling_rounds)),
            ceiling_s=_env("KERNELEVOLVE_TIMING_CEILING_S", base.ceiling_s),
            round_goal=_env("KERNELEVOLVE_ROUND_GOAL", base.round_goal),
            round_goal_short=_env("KERNELEVOLVE_ROUND_GOAL_SHORT", base.round_goal_short),
            ratio_goal=_env("KERNELEVOLVE_RATIO_GOAL", base.ratio_goal),
            ratio_goal_short=_env("KERNELEVOLVE_RATIO_GOAL_SHORT", base.ratio_goal_short),
            retime_shapes=int(_env("KERNELEVOLVE_RETIME_SHAPES", base.retime_shapes)),
            retime_reach=max(1.0, _env("KERNELEVOLVE_RETIME_REACH", base.retime_reach)),
            far_below=max(0.0, _env("KERNELEVOLVE_FAR_BELOW", base.far_below)),
            far_goal=_env("KERNELEVOLVE_FAR_GOAL", base.far_goal),
            far_floor_rounds=max(3, int(_env("KERNELEVOLVE_FAR_FLOOR", base.far_floor_rounds))),
            buffer_sets=max(1, int(_env("KERNELEVOLVE_BUFFER_SETS", base.buffer_sets))),
        )

    def to_message(self) -> Dict[str, Any]:
        return dataclasses.asdict(self)

    @classmethod
    def from_message(cls, fields: Dict[str, Any]) -> "TimingSettings":
        known = {f.name for f in dataclasses.fields(cls)}
        return cls(**{k: v for k, v in fields.items() if k in known})
