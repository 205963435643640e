"""The copies of a Triton cache that the judge hands to workers serve lookups after the original is gone
(backends/triton.py: copy_cache), and the count of what a process compiled sees a compile into an entry that
already existed (cache_writes). Triton itself is not needed: the folders are laid out as Triton 3.x writes them."""
import json
import os
import shutil
import time

from kernelevolve_harness.backends.triton import cache_writes, compiled_between, copy_cache


def _entry(root, key, name, exts=("json", "cubin", "ptx")):
    """One compiled kernel as Triton keeps it: its files, and a group file listing them by absolute path."""
    folder = root / key
    folder.mkdir(parents=True)
    children = {}
    for ext in exts:
        path = folder / f"{name}.{ext}"
        path.write_text(f"{name} {ext}")
        children[path.name] = str(path)
    (folder / f"__grp__{name}.json").write_text(json.dumps({"child_paths": children}))
    return folder


def test_a_copied_cache_lists_its_own_files_after_the_original_is_gone(tmp_path):
    src, dst = tmp_path / "reference", tmp_path / "candidate"
    _entry(src, "KEYA", "softmax_kernel")
    _entry(src, "KEYB", "softmax_kernel")
    copy_cache(str(src), str(dst))
    shutil.rmtree(src)
    for key in ("KEYA", "KEYB"):
        group = json.loads((dst / key / "__grp__softmax_kernel.json").read_text())
        paths = group["child_paths"]
        assert set(paths) == {"softmax_kernel.json", "softmax_kernel.cubin", "softmax_kernel.ptx"}
        for name, path in paths.items():
            assert path == str(dst / key / name), path
            assert os.path.exists(path), path


def test_a_group_file_that_does_not_parse_is_copied_as_it_is(tmp_path):
    src, dst = tmp_path / "a", tmp_path / "b"
    folder = _entry(src, "KEY", "k")
    (folder / "__grp__k.json").write_text("{not json")
    copy_cache(str(src), str(dst))
    assert (dst / "KEY" / "__grp__k.json").read_text() == "{not json"
    assert (dst / "KEY" / "k.cubin").read_text() == "k cubin"


def test_a_compile_into_an_existing_entry_is_counted(tmp_path):
    cache = tmp_path / "cache"
    folder = _entry(cache, "KEY", "k")
    before = cache_writes(str(cache))
    assert compiled_between(before, cache_writes(str(cache))) == 0  # a lookup that hits writes nothing
    time.sleep(0.01)
    (folder / "k.cubin").write_text("compiled again")  # a lookup that missed: the same names written again
    os.utime(folder / "k.cubin", ns=(before[str(folder / "k.cubin")] + 10**6,) * 2)
    _entry(cache, "NEW", "k")  # and a new entry
    assert compiled_between(before, cache_writes(str(cache))) == 2
    assert cache_writes(str(tmp_path / "absent")) == {}


def test_files_the_destination_has_are_left_alone_and_new_ones_arrive_whole(tmp_path):
    # a worker may already run from the folder (its first calls while the reference starts): a launcher it has
    # loaded must never be rewritten in place under it (that killed workers with SIGSEGV on the H200)
    src, dst = tmp_path / "reference", tmp_path / "candidate"
    _entry(src, "KEY", "k")
    _entry(src, "MORE", "k")
    (dst / "KEY").mkdir(parents=True)
    mine = dst / "KEY" / "k.cubin"
    mine.write_text("compiled by the worker")  # the same entry, compiled by the worker itself
    inode = mine.stat().st_ino
    with open(mine, "rb") as held:  # open, as a loaded library is
        copy_cache(str(src), str(dst))
        assert held.read() == b"compiled by the worker"
    assert mine.stat().st_ino == inode and mine.read_text() == "compiled by the worker"
    assert (dst / "MORE" / "k.cubin").read_text() == "k cubin"
    assert not [p for p in dst.rglob("*.tmp")]
