"""Sums py-spy's raw collapsed stacks (record -f raw --subprocesses) by role and by function.

    python3 scripts/gpu/pyspy_summary.py judges.txt workers.txt [--rate HZ] [--top N]

A stack's role is what its process is doing: the judge, the candidate's worker, the shared reference, the
warm-worker server. For each role: CPU seconds sampled (samples / rate), then the functions with the most samples
anywhere on the stack (inclusive) and at the top of it (self)."""
from __future__ import annotations

import argparse
import collections
import re

FRAME = re.compile(r"^(?P<fn>[^ ]+) \((?P<file>[^:]+):?(?P<line>\d*)\)$")


def role(frames):
    text = ";".join(frames)
    if "_worker.py" in text:  # a worker (forked by the server: its stack starts in warm.py)
        if "ReferenceWorker" in text or "SharedReference" in text or "class ReferenceWorker" in text:
            return "reference"
        if "time_shape" in text or "correctness (_worker.py" in text or "CandidateWorker" in text:
            return "candidate worker"
        return "worker (other: start, load)"
    if "judge.py" in text:
        return "judge"
    if "warm.py" in text:
        return "server"
    return "other"


def short(frame):
    m = FRAME.match(frame.strip())
    if not m:
        return frame.strip()[:90]
    f = m.group("file")
    for cut in ("site-packages/", "kernelevolve_harness/", "lib/python3"):
        if cut in f:
            f = f.split(cut, 1)[1]
            break
    return f"{m.group('fn')} ({f})"


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("files", nargs="+")
    ap.add_argument("--rate", type=float, default=50.0)
    ap.add_argument("--top", type=int, default=25)
    a = ap.parse_args()
    total = collections.Counter()
    incl = collections.defaultdict(collections.Counter)
    leaf = collections.defaultdict(collections.Counter)
    for path in a.files:
        with open(path, errors="replace") as f:
            for line in f:
                line = line.rstrip("\n")
                if not line or " " not in line:
                    continue
                stack, _, count = line.rpartition(" ")
                try:
                    n = int(count)
                except ValueError:
                    continue
                frames = [fr for fr in stack.split(";") if fr and not fr.startswith(("process ", "thread "))]
                r = role(frames)
                total[r] += n
                for fr in set(short(x) for x in frames):
                    incl[r][fr] += n
                if frames:
                    leaf[r][short(frames[-1])] += n
    for r, n in total.most_common():
        print(f"\n== {r}: {n} samples, {n / a.rate:.1f} CPU s sampled")
        print(f"{'inclusive':>9} {'%':>5}  function")
        for fr, k in incl[r].most_common(a.top):
            print(f"{k / a.rate:9.2f} {100 * k / n:5.1f}  {fr}")
        print(f"{'self':>9} {'%':>5}  function")
        for fr, k in leaf[r].most_common(a.top):
            print(f"{k / a.rate:9.2f} {100 * k / n:5.1f}  {fr}")


if __name__ == "__main__":
    main()
