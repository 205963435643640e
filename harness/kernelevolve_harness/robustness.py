"""The judge's side of the robustness pass (docs/harness.md, "The robustness pass"; the inputs: wide_inputs.py).

The reference process decides which shapes have a narrow draw (it never sees the candidate), so a candidate
worker that skips the pass, or runs it where it does not apply, is caught here. A candidate right on the
problem's inputs and wrong on the wide ones gets its own status, `narrow_inputs`: not `ok`, so the engine never
offers it as a winner, and not `incorrect`, since it does what the problem as published checks.
"""
from __future__ import annotations

from typing import Any, Dict, List

from .verdicts import Verdict, alias_verdict, shape_text as _shape_text

OPT_OUT = ("`--inputs problem` judges by the problem's inputs alone, as KernelBench does, for comparisons with "
           "published figures.")


def check_wide_call(judge: Any, header: Dict[str, Any], blobs: List[Any], enabled: bool) -> None:
    """Checks one call on wide inputs: raises narrow_inputs when the outputs are wrong there."""
    i, seed = header["shape"], header["seed"]
    where = _shape_text(judge.shapes[i])
    if not enabled:
        raise Verdict("runtime_error", f"The worker ran the robustness pass on shape {where}, which this evaluation "
                                       f"turned off (--inputs problem).")
    if header.get("alias"):
        raise alias_verdict(f"shape {where}, seed {seed}, wide inputs", header["alias"])
    ref_header = judge.answers.header(i, seed, 1.0, wide=True)
    if not ref_header.get("narrow"):
        raise Verdict("runtime_error", f"The worker ran the robustness pass on shape {where}, whose inputs are not "
                                       f"narrow.")
    try:
        judge._check_call(header, blobs, i, seed, 1.0, "wide inputs", wide=True)
    except Verdict as v:
        if v.status != "incorrect" or not v.reason.startswith("Wrong result"):
            raise
        raise Verdict("narrow_inputs", f"Right on the problem's inputs ({ref_header['narrow']}) but wrong on "
                                       f"signed inputs of the same shapes and dtypes ({ref_header['wide']}): "
                                       f"{v.reason.rstrip('.')}. It is not offered as a winner; {OPT_OUT}", v.log)


def check_magnitude_call(judge: Any, header: Dict[str, Any], blobs: List[Any], enabled: bool, kind: str) -> None:
    """Checks one call on the problem's inputs scaled down or up (wide_inputs.rescale), element by element where
    the reference is finite; raises narrow_inputs when the outputs are wrong there."""
    i, seed = header["shape"], header["seed"]
    where = _shape_text(judge.shapes[i])
    if not enabled:
        raise Verdict("runtime_error", f"The worker ran the robustness pass on shape {where}, which this evaluation "
                                       f"turned off (--inputs problem).")
    if header.get("alias"):
        raise alias_verdict(f"shape {where}, seed {seed}, {kind} inputs", header["alias"])
    ref_header = judge.answers.header(i, seed, 1.0, wide=kind)
    if not ref_header.get("narrow"):
        judge.answers.forget(i, seed, 1.0, wide=kind)
        return  # no input was scaled: the probe does not apply
    try:
        judge._check_call(header, blobs, i, seed, 1.0, f"{kind} inputs", wide=kind)
    except Verdict as v:
        if v.status != "incorrect" or not v.reason.startswith("Wrong result"):
            raise
        raise Verdict("narrow_inputs", f"Right on the problem's inputs but wrong on {ref_header.get('wide', '')} "
                                       f"({ref_header['narrow']}), where the reference stays finite: "
                                       f"{v.reason.rstrip('.')}. A formula that loses precision or overflows at "
                                       f"other magnitudes is not offered as a winner; {OPT_OUT}", v.log)


def check_wide_probe(judge: Any, header: Dict[str, Any], blobs: List[Any], i: int, seed: int, what: str) -> None:
    """Checks the wide-input call made between timed rounds (shape_timing.ShapeTiming._wide_probe): wrong there,
    after being right on the robustness pass's call, is narrow_inputs too (a kernel that changes how it computes
    after some calls is caught at whichever call it changes)."""
    if header.get("alias"):
        raise alias_verdict(f"shape {_shape_text(judge.shapes[i])}, seed {seed}, {what}", header["alias"])
    ref_header = judge.answers.header(i, seed, 1.0, wide=True)
    try:
        judge._check_call(header, blobs, i, seed, 1.0, what, wide=True)
    except Verdict as v:
        if v.status != "incorrect" or not v.reason.startswith("Wrong result"):
            raise
        raise Verdict("narrow_inputs", f"Wrong on signed inputs of the problem's shapes and dtypes "
                                       f"({ref_header.get('wide', '')}) given between timed rounds: "
                                       f"{v.reason.rstrip('.')}. It is not offered as a winner; {OPT_OUT}", v.log)


def require_every_pass(judge: Any, widened: List[int]) -> None:
    """Every shape whose draw the reference found narrow was judged on wide inputs."""
    for i in range(len(judge.shapes)):
        ref_header = judge.answers.header(i, judge.seeds[0], 1.0, wide=True)
        if ref_header.get("narrow") and i not in widened:
            raise Verdict("runtime_error", f"The worker skipped the robustness pass on shape "
                                           f"{_shape_text(judge.shapes[i])} ({ref_header['narrow']}).")
