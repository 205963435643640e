"""Parsing `nvcc -Xptxas -v` and `ncu --csv` output needs no GPU."""
from kernelevolve_harness.backends.cuda import parse_ptxas
from kernelevolve_harness.profiling import classify, parse_ncu_csv

PTXAS = """ptxas info    : 0 bytes gmem
ptxas info    : Compiling entry function '_Z12axpby_kernelPKfS0_Pfffi' for 'sm_90'
ptxas info    : Function properties for _Z12axpby_kernelPKfS0_Pfffi
    0 bytes stack frame, 8 bytes spill stores, 4 bytes spill loads
ptxas info    : Used 18 registers, 1024 bytes smem, 400 bytes cmem[0]
"""


def test_ptxas_registers_spills_and_shared_memory() -> None:
    assert parse_ptxas(PTXAS, "axpby_kernel") == {"n_regs": 18, "n_spills": 12, "shared": 1024, "kernels": 1}


def test_ncu_raw_csv_with_thousands_separators() -> None:
    text = ('==PROF== Connected\n"ID","Kernel Name","gpu__time_duration.sum","sm__throughput.avg.pct_of_peak_sustained_elapsed"\n'
            '"","","nsecond","%"\n"0","softmax_kernel","1,234","45.5"\n')
    m = parse_ncu_csv(text)
    assert m["gpu__time_duration.sum"] == 1234.0
    assert m["sm__throughput.avg.pct_of_peak_sustained_elapsed"] == 45.5


def test_bottleneck_classes() -> None:
    assert classify(85.0, 30.0) == "memory-bound"
    assert classify(20.0, 90.0) == "compute-bound"
    assert classify(10.0, 12.0) == "latency-bound"
    assert classify(None, 5.0) == "unknown"
