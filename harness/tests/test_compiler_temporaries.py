"""A compiler stopped at its timeout leaves nothing behind: its temporary files (g++'s intermediate assembly) go to a
folder of the build's own, and a cached build's partial output is removed. Before, every compile killed at its
timeout (or with its judge) left a `cc*.s` in the system's temporary folder."""
from pathlib import Path

import pytest

from kernelevolve_harness.backends import get_backend

# Some hundreds of functions that g++ -O3 vectorises one by one: seconds of compiling on any machine, so a
# timeout of a fraction of a second stops it in the middle.
_SLOW = "\n".join(
    f'extern "C" double f{i}(const double* a, int n) {{ double s = {i}; for (int k = 0; k < n; ++k) '
    f'{{ s = s * 1.0001 + a[k] * {i}.5 - (k % {i % 7 + 2}); if (s > 1e9) s -= 1e9; }} return s; }}'
    for i in range(1500))


@pytest.fixture
def system_tmp(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    d = tmp_path / "system-tmp"
    d.mkdir()
    monkeypatch.setenv("TMPDIR", str(d))
    return d


@pytest.mark.parametrize("cache", [False, True])
def test_a_compile_stopped_at_its_timeout_leaves_no_files(tmp_path: Path, system_tmp: Path,
                                                          monkeypatch: pytest.MonkeyPatch, cache: bool) -> None:
    monkeypatch.setenv("KERNELEVOLVE_CACHE", str(tmp_path / "cache"))
    src = tmp_path / "slow.cpp"
    src.write_text(_SLOW)
    out = tmp_path / "build"
    build = get_backend("cpp").build(str(src), str(out), 0.5, "f0", cache=cache)
    assert build.timed_out and not build.ok
    assert list(system_tmp.iterdir()) == []
    assert list(out.iterdir()) == []
    if cache:
        assert list((tmp_path / "cache" / "builds").iterdir()) == []


def test_a_finished_compile_leaves_only_its_library(tmp_path: Path, system_tmp: Path) -> None:
    src = tmp_path / "k.cpp"
    src.write_text('extern "C" void k(float* x, int n) { for (int i = 0; i < n; ++i) x[i] *= 2; }\n')
    out = tmp_path / "build"
    build = get_backend("cpp").build(str(src), str(out), 120, "k")
    assert build.ok, build.log
    assert [p.name for p in out.iterdir()] == [Path(build.artifact).name]
    assert list(system_tmp.iterdir()) == []


def _leaving_spec(tmp_path: Path) -> Path:
    """The axpby spec whose launch leaves a temporary file behind, as Triton's compiler does when its worker is
    killed in the middle (its .ptx and .cubin are removed only once ptxas returns)."""
    specs = Path(__file__).parent / "specs" / "axpby"
    folder = tmp_path / "spec"
    folder.mkdir()
    (folder / "axpby.cpp").write_text((specs / "axpby.cpp").read_text())
    text = (specs / "spec.py").read_text()
    text = text.replace("def launch(lib, x, y, out, a, b, n):\n",
                        "def launch(lib, x, y, out, a, b, n):\n"
                        "    import os, tempfile\n"
                        "    if not LEFT:  # once a process: a file a call would time the disk\n"
                        "        LEFT.append(1)\n"
                        "        fd, _ = tempfile.mkstemp(prefix='ke-leftover-')\n"
                        "        os.close(fd)\n")
    text = text.replace("def launch(lib, x, y, out, a, b, n):\n", "LEFT = []\n\n\ndef launch(lib, x, y, out, a, b, n):\n", 1)
    assert "ke-leftover-" in text
    (folder / "spec.py").write_text(text)
    return folder / "spec.py"


@pytest.mark.parametrize("warm", [True, False])
def test_a_worker_keeps_its_temporary_files_in_the_judges_folder(tmp_path: Path, system_tmp: Path, harness,
                                                                  warm: bool) -> None:
    spec = _leaving_spec(tmp_path)
    verdict, _ = harness.evaluate(spec, spec.parent / "axpby.cpp", *([] if warm else ["--no-warm"]))
    assert verdict["status"] == "ok", verdict
    assert verdict["workers"]["candidate"].startswith("warm" if warm else "cold"), verdict["workers"]
    assert list(system_tmp.rglob("ke-leftover-*")) == []
