"""KernelBench's correctness rule, restated here to compare verdicts (not KernelBench's code): in one process,
Model and ModelNew made from get_init_inputs() under the same seed, moved to the GPU; for each of 5 trials,
inputs from get_inputs() under the trial's seed (drawn on the GPU, where KernelBench draws them on the host and
moves them: the same distributions), Model's output then ModelNew's, compared with torch.allclose at
atol = rtol = tol; correct when every trial passes. tol 1e-2 is KernelBench v0/v0.1's fp32 rule, 1e-4 its
current fp32 default. Prints one JSON line.
Usage: python3 scripts/gpu/kernelbench_rule.py PROBLEM.py CANDIDATE.py [PROBLEM.py CANDIDATE.py ...]"""
from __future__ import annotations

import importlib.util
import json
import sys

import torch


def load(path: str, name: str):
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


def judge(problem_path: str, candidate_path: str, n: int) -> None:
    problem = load(problem_path, f"kb_problem_{n}")
    out = {"problem": problem_path, "candidate": candidate_path}
    try:
        candidate = load(candidate_path, f"kb_candidate_{n}")
        torch.manual_seed(42)
        model = problem.Model(*problem.get_init_inputs()).cuda()
        torch.manual_seed(42)
        model_new = candidate.ModelNew(*problem.get_init_inputs()).cuda()
        passed = {"1e-2": 0, "1e-4": 0}
        worst = 0.0
        trials = 5
        with torch.no_grad():
            for trial in range(trials):
                torch.manual_seed(1000 + trial)
                with torch.device("cuda"):  # drawn where they are used: a 6 GB draw on the host takes seconds
                    inputs = [x.cuda() if isinstance(x, torch.Tensor) else x for x in problem.get_inputs()]
                ref = model(*inputs)
                torch.cuda.synchronize()
                new = model_new(*inputs)
                torch.cuda.synchronize()
                if ref.shape != new.shape:
                    break
                worst = max(worst, float((ref - new).abs().max()))
                for tol in passed:
                    passed[tol] += bool(torch.allclose(ref, new, atol=float(tol), rtol=float(tol)))
        out.update({f"correct_{tol}": n == trials for tol, n in passed.items()}, max_abs_diff=worst)
    except Exception as e:  # KernelBench counts a candidate that fails to run as not correct
        out.update({"correct_1e-2": False, "correct_1e-4": False, "error": f"{type(e).__name__}: {e}"[:300]})
    print(json.dumps(out), flush=True)


if __name__ == "__main__":
    pairs = sys.argv[1:]
    for i in range(0, len(pairs) - 1, 2):
        judge(pairs[i], pairs[i + 1], i)
