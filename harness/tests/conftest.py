"""Runs the real harness CLI (`python3 -m kernelevolve_harness`) in a child process, as hosts do."""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any, Dict, Tuple

import pytest

HARNESS = Path(__file__).resolve().parent.parent
if str(HARNESS) not in sys.path:
    sys.path.insert(0, str(HARNESS))  # the tests import the package too, with or without PYTHONPATH
REPO = HARNESS.parent
SPECS = Path(__file__).resolve().parent / "specs"
MM_SPEC = SPECS / "mm" / "spec.py"
EXAMPLES = REPO / "examples"

MM_WRAP = """
extern "C" void mm(const float* A, const float* B, float* C, int M, int N, int K) {{
{body}
}}
"""
NAIVE = """  for (int i = 0; i < M; ++i)
    for (int j = 0; j < N; ++j) {
      float s = 0.0f;
      for (int k = 0; k < K; ++k) s += A[i * K + k] * B[k * N + j];
      C[i * N + j] = s;
    }"""


def mm_source(body: str, prelude: str = "") -> str:
    return prelude + MM_WRAP.format(body=body)


@pytest.fixture(scope="session")
def cache_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("cache")


class Harness:
    def __init__(self, tmp: Path, cache: Path) -> None:
        self.tmp = tmp
        self.cache = cache
        self.n = 0

    def run(self, *args: str, timeout: float = 120) -> subprocess.CompletedProcess:
        env = dict(os.environ, PYTHONPATH=str(HARNESS), KERNELEVOLVE_CACHE=str(self.cache))
        return subprocess.run([sys.executable, "-m", "kernelevolve_harness", *args], capture_output=True, text=True,
                              env=env, timeout=timeout, cwd=str(self.tmp))

    def write(self, text: str, suffix: str = ".cpp") -> Path:
        self.n += 1
        p = self.tmp / f"cand{self.n}{suffix}"
        p.write_text(text)
        return p

    def evaluate(self, spec: Path, candidate: Any, *flags: str, suffix: str = ".cpp",
                 timeout: float = 120) -> Tuple[Dict[str, Any], subprocess.CompletedProcess]:
        path = candidate if isinstance(candidate, Path) else self.write(candidate, suffix)
        r = self.run("evaluate", "--spec", str(spec), "--candidate", str(path), "--json", *flags, timeout=timeout)
        assert r.returncode == 0, f"harness exited {r.returncode}: {r.stderr}"
        lines = r.stdout.strip().splitlines()
        assert len(lines) == 1, f"stdout must be exactly one verdict line, got: {r.stdout!r}"
        return json.loads(lines[0]), r

    def mm(self, body: str, prelude: str = "", *flags: str) -> Dict[str, Any]:
        return self.evaluate(MM_SPEC, mm_source(body, prelude), *flags)[0]


@pytest.fixture
def harness(tmp_path: Path, cache_dir: Path) -> Harness:
    return Harness(tmp_path, cache_dir)
