"""The instruction-cache flush's kernel text (code_flush.py): what makes it as long as its size on any GPU."""
import re

from kernelevolve_harness.code_flush import ENTRY, ptx


def test_the_flush_is_a_chain_of_distinct_multiply_adds_whose_result_only_a_set_flag_stores() -> None:
    text = ptx(5000)
    fmas = re.findall(r"fma\.rn\.f32 %f, %f, 0f3F800001, (0f[0-9A-F]{8});", text)
    assert len(fmas) == 5000
    # each step adds its own constant to the last one's result: no compiler may fold two steps into one
    assert all(a != b for a, b in zip(fmas, fmas[1:]))
    body = text[text.index(f".entry {ENTRY}"):]
    assert body.index("ld.param.u32 %r, [flag]") < body.index("fma.rn.f32")
    # the one store comes after every step, behind a branch taken when the flag is 0 (as it is always launched)
    assert body.count("st.global") == 1
    assert body.index("setp.eq.u32 %p, %r, 0;") > body.rindex("fma.rn.f32")
    assert body.index("@%p bra DONE;") < body.index("st.global") < body.index("DONE:")
