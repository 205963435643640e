"""A wrong spec is the user's error: a message on stderr naming what is wrong and what to write, exit 2."""
from pathlib import Path

import pytest

from conftest import NAIVE, SPECS, Harness, mm_source

GOOD = (SPECS / "mm" / "spec.py").read_text()


def spec_dir(tmp: Path, text: str) -> Path:
    d = tmp / "spec"
    d.mkdir(exist_ok=True)
    (d / "mm.cpp").write_text((SPECS / "mm" / "mm.cpp").read_text())
    (d / "spec.py").write_text(text)
    return d / "spec.py"


def run_bad(harness: Harness, text: str):
    spec = spec_dir(harness.tmp, text)
    cand = harness.write(mm_source(NAIVE))
    r = harness.run("evaluate", "--spec", str(spec), "--candidate", str(cand), "--json")
    assert r.returncode == 2, (r.returncode, r.stdout, r.stderr)
    assert r.stdout == ""
    return r.stderr


@pytest.mark.parametrize("change,expect", [
    (("BACKEND = \"cpp\"", ""), "BACKEND"),
    (("BACKEND = \"cpp\"", "BACKEND = \"fortran\""), "fortran"),
    (("SOURCE = \"mm.cpp\"", "SOURCE = \"missing.cpp\""), "missing.cpp"),
    (("KERNEL = \"mm\"", "KERNEL = \"matmul_kernel\""), "matmul_kernel"),
    (("def inputs(shape, seed):", "def make_inputs(shape, seed):"), "inputs(shape, seed)"),
    (("def launch(lib,", "def run(lib,"), "launch(k, *args)"),
    (("SHAPES = [", "SHAPES = []\nX = ["), "SHAPES must be a non-empty list"),
    (("SHAPES = [", "SHAPES = [3, "), "SHAPES[0]"),
    (("OUTPUTS = [2]", "OUTPUTS = ['c']"), "OUTPUTS must be a list of argument indices"),
    (("OUTPUTS = [2]", "OUTPUTS = [2]\nTOLERANCE = 0.1"), "TOLERANCE must be a dict"),
    (("    rng = np.random", "    raise ValueError('bad shape')\n    rng = np.random"), "bad shape"),
    (("import ctypes", "import ctypes\nimport no_such_module_here"), "no_such_module_here"),
    (("OUTPUTS = [2]", "OUTPUTS = []"), "changes argument 2"),
])
def test_spec_error_is_named(harness: Harness, change, expect) -> None:
    old, new = change
    assert old in GOOD
    err = run_bad(harness, GOOD.replace(old, new))
    assert expect in err, err
    assert err.startswith("kernelevolve_harness: ")
    assert "Traceback" not in err


def test_a_baseline_that_does_not_compile_is_a_spec_error(harness: Harness) -> None:
    spec = spec_dir(harness.tmp, GOOD)
    (spec.parent / "mm.cpp").write_text('extern "C" void mm( { }')
    cand = harness.write(mm_source(NAIVE))
    r = harness.run("evaluate", "--spec", str(spec), "--candidate", str(cand), "--json")
    assert r.returncode == 2
    assert "does not build" in r.stderr


def test_a_missing_candidate_file_is_a_usage_error(harness: Harness) -> None:
    r = harness.run("evaluate", "--spec", str(SPECS / "mm" / "spec.py"), "--candidate", "nope.cpp", "--json")
    assert r.returncode == 2
    assert "--candidate" in r.stderr


def test_outputs_are_inferred_when_the_spec_does_not_declare_them(harness: Harness) -> None:
    spec = spec_dir(harness.tmp, GOOD.replace("OUTPUTS = [2]", ""))
    v, _ = harness.evaluate(spec, mm_source(NAIVE.replace("C[i * N + j] = s;", "if (i < M / 2) C[i * N + j] = s;")))
    assert v["status"] == "incorrect", v  # poisoned because launch returns c, so c is an output


def test_a_gpu_backend_without_a_usable_gpu_is_named_in_torchs_words() -> None:
    # the reference's log on a machine with torch's CPU build and Triton, and no GPU (its last lines, as written)
    from kernelevolve_harness.judge import no_gpu_here
    log = ('  File ".../torch/cuda/__init__.py", line 522, in _lazy_init\n'
           '    raise AssertionError("Torch not compiled with CUDA enabled")\n'
           'AssertionError: Torch not compiled with CUDA enabled\n')
    assert no_gpu_here(log) == "Torch not compiled with CUDA enabled"
    assert no_gpu_here("RuntimeError: Found no NVIDIA driver on your system. Please check that you have an NVIDIA GPU")
    assert no_gpu_here("ValueError: the spec's inputs() returned nothing") is None
