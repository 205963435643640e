"""The verdict the harness prints and the one the extension reads (src/contract/verdict.ts) are one contract: the
same statuses, the same fields, the same optional ones; and a verdict prints only the fields it has."""
from __future__ import annotations

import dataclasses
import re
from typing import Dict

from conftest import REPO
from kernelevolve_harness.verdicts import STATUSES, VerdictRecord

CONTRACT = REPO / "src" / "contract" / "verdict.ts"


def _interface_fields(ts: str, name: str) -> Dict[str, bool]:
    """An interface's fields, each with whether it is optional (its index signature left out)."""
    start = ts.index(f"export interface {name} {{")
    body = ts[start:ts.index("\n}", start)]
    return {m.group(1): bool(m.group(2)) for m in re.finditer(r"^  (\w+)(\?)?:", body, re.M)}


def test_the_harness_and_the_verdict_contract_name_the_same_statuses() -> None:
    ts = CONTRACT.read_text()
    block = ts[ts.index("VERDICT_STATUSES = ["):ts.index("] as const")]
    assert tuple(re.findall(r"^\s*'(\w+)',", block, re.M)) == STATUSES


def test_the_harness_and_the_verdict_contract_name_the_same_fields() -> None:
    ts_fields = _interface_fields(CONTRACT.read_text(), "Verdict")
    py_fields = {f.name: f.default is not dataclasses.MISSING for f in dataclasses.fields(VerdictRecord)}
    assert {"status": False, "reason": False, "speedup": True, "log": True}.items() <= ts_fields.items(), ts_fields
    assert py_fields == ts_fields


def test_a_verdict_prints_the_fields_it_has_in_order() -> None:
    failed = VerdictRecord("compile_error", "It does not compile.", compile={}, stages={"total_s": 0.5}, log="")
    assert list(failed.to_json().items()) == [("status", "compile_error"), ("reason", "It does not compile."),
                                              ("compile", {}), ("stages", {"total_s": 0.5}), ("log", "")]
    ok = VerdictRecord("ok", "Correct.", workers={}, notes=["a note"], speedup=2.0, timing={"method": "cpu"})
    assert list(ok.to_json()) == ["status", "reason", "speedup", "timing", "notes", "workers"]
