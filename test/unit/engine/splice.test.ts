import { describe, expect, it } from 'vitest';
import { findFunction, spliceFunction, SpliceError } from '../../../src/engine/splice';

const CPP = `// header comment with a brace { that is not code
#include <cstdio>
#define STR "}{"

static int helper(int x) { return x + 1; }

/* the kernel */
template <int N>
__global__ void __launch_bounds__(256) scale(float* out, const float* in, int n) {
  const char* s = "}";  // a brace in a string
  char c = '}';
  if (n > 0) { for (int i = 0; i < n; ++i) { out[i] = in[i] * 2.0f; } }
}

extern "C" void launch(float* out, const float* in, int n) { scale<1><<<1, 1>>>(out, in, n); }
`;

describe('splice (C, C++, CUDA)', () => {
  it('finds a definition by brace matching that ignores braces in strings, chars and comments', () => {
    const f = findFunction(CPP, 'scale', 'clike')!;
    const text = CPP.slice(f.start, f.end);
    expect(text.startsWith('template <int N>\n__global__ void __launch_bounds__(256) scale(')).toBe(true);
    expect(text.endsWith('{ out[i] = in[i] * 2.0f; } }\n}')).toBe(true);
    expect(findFunction(CPP, 'launch', 'clike')).toBeDefined();
    expect(findFunction(CPP, 'missing', 'clike')).toBeUndefined();
  });

  it('replaces only the function: every other byte stays as it was', () => {
    const variant = `__global__ void scale(float* out, const float* in, int n) {\n  int i = threadIdx.x; if (i < n) out[i] = in[i] + in[i];\n}`;
    const out = spliceFunction(CPP, 'scale', variant, { fileName: 'k.cu' });
    const f = findFunction(CPP, 'scale', 'clike')!;
    expect(out.slice(0, f.start)).toBe(CPP.slice(0, f.start));
    expect(out.slice(f.start + variant.length)).toBe(CPP.slice(f.end));
    expect(out).toContain('out[i] = in[i] + in[i];');
  });

  it('takes the function out of a whole-file answer and brings over new helpers and includes', () => {
    const answer = `#include <cstdio>\n#include <cmath>\nstatic int helper(int x) { return x + 100; }\n` +
      `static inline float twice(float v) { return v * 2.0f; }\n` +
      `__global__ void scale(float* out, const float* in, int n) { out[0] = twice(in[0]); }\n`;
    const out = spliceFunction(CPP, 'scale', answer, { fileName: 'k.cu' });
    expect(out).toContain('#include <cstdio>\n#include <cmath>\n');
    expect(out).toContain('static inline float twice(float v) { return v * 2.0f; }\n\n__global__ void scale(');
    // the original's helper is kept, not the answer's rewrite of it
    expect(out).toContain('static int helper(int x) { return x + 1; }');
    expect(out).not.toContain('x + 100');
    expect(out.endsWith(CPP.slice(findFunction(CPP, 'scale', 'clike')!.end))).toBe(true);
  });

  it('says which side lacks the function', () => {
    expect(() => spliceFunction(CPP, 'scale', 'int other() { return 1; }', { lang: 'clike' })).toThrow(SpliceError);
    expect(() => spliceFunction(CPP, 'nothere', 'void nothere() {}', { lang: 'clike' })).toThrow(/original file has no definition of nothere/);
  });
});

const PY = `import triton
import triton.language as tl


@triton.autotune(
    configs=[triton.Config({"BLOCK": 128}, num_warps=4)],
    key=["n"],
)
@triton.jit
def add_kernel(x_ptr, y_ptr, out_ptr, n,
               BLOCK: tl.constexpr):
    """Adds.

not the end of the function: this line is inside a docstring
    """
    pid = tl.program_id(0)
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    # a comment at column 0 inside the body
    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=mask) + tl.load(y_ptr + offs, mask=mask), mask=mask)


def add(x, y):
    out = torch.empty_like(x)
    add_kernel[(triton.cdiv(x.numel(), 1024),)](x, y, out, x.numel())
    return out
`;

describe('splice (Python)', () => {
  it('finds a def with its decorators, by indentation, across multi-line signatures and docstrings', () => {
    const f = findFunction(PY, 'add_kernel', 'python')!;
    const text = PY.slice(f.start, f.end);
    expect(text.startsWith('@triton.autotune(\n')).toBe(true);
    expect(text.endsWith('mask=mask)')).toBe(true);
    expect(text).toContain('not the end of the function');
  });

  it('puts a variant back, the rest of the file byte-for-byte', () => {
    const variant = `@triton.jit\ndef add_kernel(x_ptr, y_ptr, out_ptr, n, BLOCK: tl.constexpr):\n    pid = tl.program_id(0)\n    tl.store(out_ptr + pid, 0.0)\n`;
    const out = spliceFunction(PY, 'add_kernel', variant, { fileName: 'k.py' });
    const f = findFunction(PY, 'add_kernel', 'python')!;
    expect(out.slice(0, f.start)).toBe(PY.slice(0, f.start));
    expect(out.endsWith(PY.slice(f.end))).toBe(true);
    expect(out).toContain('    tl.store(out_ptr + pid, 0.0)\n\n\ndef add(x, y):');
  });

  it('re-indents a method variant written at column 0, and adds a missing import', () => {
    const cls = `import math\n\nclass K:\n    def run(self):\n        return 1\n\n    def other(self):\n        return 2\n`;
    const out = spliceFunction(cls, 'run', `import numpy as np\n\ndef run(self):\n    return np.int64(3)\n`, { lang: 'python' });
    expect(out).toBe(`import math\nimport numpy as np\n\nclass K:\n    def run(self):\n        return np.int64(3)\n\n    def other(self):\n        return 2\n`);
  });
});
