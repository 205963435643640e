"""Shortcuts that only pay off when timed: skipping work, caching by pointer, by call count, by content."""
from conftest import NAIVE, Harness

STATE = "#include <cstring>\n#include <cmath>\nstatic int calls = 0;\n"


def test_skipping_work_after_any_number_of_calls_is_caught(harness: Harness) -> None:
    # 3 shapes x (2 seeds x 2 runs + the same buffers again with the second seed's inputs) = 15 correctness calls,
    # and the robustness pass's calls among them at places drawn per evaluation; after k calls it returns at once.
    # No k is safe: the calls after k are checked, whichever they are (a probe: narrow_inputs; a timed or fresh
    # call: incorrect).
    for k in (3, 15, 21):
        v = harness.mm(f"  if (++calls > {k}) return;\n" + NAIVE, STATE)
        assert v["status"] in ("incorrect", "narrow_inputs"), (k, v)
        assert "Wrong result" in v["reason"] and "NaN" in v["reason"], (k, v["reason"])


def test_skipping_work_when_the_output_looks_already_written_gains_nothing(harness: Harness) -> None:
    # Outputs are poisoned before every timed call, so the shortcut never fires: ok, and no inflated speedup.
    v = harness.mm("  if (!std::isnan(C[0])) return;\n" + NAIVE, STATE)
    assert v["status"] == "ok", v
    assert v["speedup"] < 2.0, v


def test_caching_results_by_pointer_is_caught(harness: Harness) -> None:
    # Remembers the result for each (A, C) pointer pair it has seen, and replays it on the next call.
    prelude = STATE + """struct Entry { const float* a; float* c; float out[48 * 40]; };
static Entry cache[256]; static int used = 0;
"""
    body = """  for (int e = 0; e < used; ++e)
    if (cache[e].a == A && cache[e].c == C) { std::memcpy(C, cache[e].out, sizeof(float) * M * N); return; }
""" + NAIVE + """
  if (used < 256) { cache[used].a = A; cache[used].c = C; std::memcpy(cache[used].out, C, sizeof(float) * M * N); ++used; }"""
    v = harness.mm(body, prelude)
    assert v["status"] == "incorrect", v
    # Caught in timing, or already by the second correctness run when the allocator reuses the addresses.
    assert "Wrong result" in v["reason"]


def test_caching_results_by_call_count_is_caught(harness: Harness) -> None:
    prelude = STATE + "static float saved[48 * 40];\n"
    body = """  ++calls;
  if (calls > 15 && calls % 4 != 0) { std::memcpy(C, saved, sizeof(float) * M * N); return; }
""" + NAIVE + "\n  std::memcpy(saved, C, sizeof(float) * M * N);"
    v = harness.mm(body, prelude)
    assert v["status"] == "incorrect", v


def test_memoising_by_input_content_never_hits_while_timed(harness: Harness) -> None:
    # Every timed call sees inputs it has never seen (pool entries scaled by a random factor), so a memo keyed
    # on the input's content gains nothing: the verdict is ok, with no inflated speedup.
    prelude = STATE + "static unsigned long long lastKey = 0; static float saved[48 * 40];\n"
    body = """  unsigned long long h = 1469598103934665603ULL;
  for (int i = 0; i < M * K; ++i) { unsigned u; std::memcpy(&u, &A[i], 4); h = (h ^ u) * 1099511628211ULL; }
  for (int i = 0; i < K * N; ++i) { unsigned u; std::memcpy(&u, &B[i], 4); h = (h ^ u) * 1099511628211ULL; }
  if (h == lastKey) { std::memcpy(C, saved, sizeof(float) * M * N); return; }
""" + NAIVE + "\n  std::memcpy(saved, C, sizeof(float) * M * N); lastKey = h;"
    v = harness.mm(body, prelude)
    assert v["status"] == "ok", v
    assert v["speedup"] < 2.0, v


def test_a_nondeterministic_result_is_caught(harness: Harness) -> None:
    # Within tolerance of the reference, but two runs on the same inputs differ bitwise.
    v = harness.mm(NAIVE + "\n  if (++calls % 2 == 0) C[0] = std::nextafter(C[0], 1e30f);", STATE)
    assert v["status"] == "incorrect", v
    assert "not deterministic" in v["reason"]


def test_returning_at_once_when_called_again_on_the_same_buffers_is_caught(harness: Harness) -> None:
    # Remembers the buffers of its last call and returns at once when given them again, leaving whatever the
    # output holds: a program that refills the same buffers every step would read stale results. The buffers
    # of the timed calls rotate, so only a second call on the same buffers with new contents shows it.
    prelude = STATE + "static const float* lastA = nullptr; static float* lastC = nullptr;\n"
    body = "  if (A == lastA && C == lastC) return;\n  lastA = A; lastC = C;\n" + NAIVE
    v = harness.mm(body, prelude)
    assert v["status"] == "incorrect", v
    # the output left poisoned: on the same buffers with new inputs, or already in the second run when the
    # allocator gives it the first run's addresses again (the replaying variant below is right there)
    # (or at any call whose buffers took the address a robustness call's freed buffers had)
    assert "Wrong result" in v["reason"], v


def test_replaying_the_last_result_for_the_same_buffers_is_caught(harness: Harness) -> None:
    prelude = STATE + ("static const float* lastA = nullptr; static float* lastC = nullptr;\n"
                       "static float saved[48 * 40];\n")
    body = ("  if (A == lastA && C == lastC) { std::memcpy(C, saved, sizeof(float) * M * N); return; }\n"
            "  lastA = A; lastC = C;\n" + NAIVE + "\n  std::memcpy(saved, C, sizeof(float) * M * N);")
    # caught at the call on the same buffers with new inputs, or earlier, where a call's buffers took the address a
    # robustness call's freed buffers had (the allocator gives them back): wrong either way
    v = harness.mm(body, prelude)
    assert v["status"] == "incorrect", v
    assert "Wrong result" in v["reason"], v
