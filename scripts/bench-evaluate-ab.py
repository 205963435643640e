"""`evaluate` from two (or more) checkouts in turn, A B A B ..., on one machine: medians of the verdicts' stages,
of the wall time and of the time outside the timed rounds (wall - timing_s). Alternating keeps a load that
comes and goes (other work on the machine) from favouring one side. KERNELEVOLVE_WARM_OWNER=none: each
checkout's warm-worker server and shared reference outlive each run, as on a host between evaluations; each
checkout's first run warms its host and is not counted.

  python3 scripts/bench-evaluate-ab.py SPEC CANDIDATE N ROOT...
  (SPEC and CANDIDATE relative to each ROOT, or absolute; each ROOT a checkout with harness/, or ROOT@VAR=VALUE
  for that checkout with a variable of its own, e.g. .@KERNELEVOLVE_PRELOAD=1 .@KERNELEVOLVE_PRELOAD=0)
"""
import json
import os
import statistics
import subprocess
import sys
import time

KEYS = ("correctness_s", "timing_s", "verify_s", "total_s", "timing_setup_s", "timing_evidence_s",
        "reference_wait_timing_s", "reference_wait_verify_s", "retimed_shapes", "worker_start_s",
        "preloaded_workers")


def main() -> int:
    spec, cand, n, roots = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4:]
    env = dict(os.environ, KERNELEVOLVE_WARM_OWNER="none")
    rows = {r: [] for r in roots}
    for it in range(n + 1):
        for side in roots:
            root, _, var = side.partition("@")
            side_env = dict(env, **dict([var.split("=", 1)])) if var else env
            t = time.monotonic()
            out = subprocess.run([sys.executable, "-m", "kernelevolve_harness", "evaluate",
                                  "--spec", os.path.join(root, spec), "--candidate", os.path.join(root, cand), "--json"],
                                 cwd=os.path.join(root, "harness"), env=side_env, capture_output=True, text=True)
            wall = time.monotonic() - t
            v = json.loads(out.stdout)
            st = v.get("stages", {})
            print(side, it, v["status"], f"wall {wall:.2f}", v.get("workers"), {k: st.get(k) for k in KEYS},
                  file=sys.stderr)
            if it:
                row = dict(wall=wall, **{k: st.get(k, 0.0) for k in KEYS})
                row["outside_rounds"] = wall - row["timing_s"]
                rows[side].append(row)
    for root in roots:
        print(root, json.dumps({k: round(statistics.median(r[k] for r in rows[root]), 3) for k in rows[root][0]}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
