// The answer parser on the shapes real models produce, through the engine's real splice.
import { describe, expect, it } from 'vitest';
import { extractRationale, parseAnswer, type ParsedAnswer } from '../../src/engine/llm/answerParser';
import { PythonLaunches } from './engine/pythonLaunches';

const CPP = `#include <cstddef>

static inline float sq(float x) { return x * x; }

extern "C" void scale(const float* x, float* y, size_t n) {
  for (size_t i = 0; i < n; ++i) y[i] = 2.0f * x[i];
}

extern "C" float sumsq(const float* x, size_t n) {
  float s = 0;
  for (size_t i = 0; i < n; ++i) s += sq(x[i]);
  return s;
}
`;

const NEW_SCALE = `extern "C" void scale(const float* __restrict x, float* __restrict y, size_t n) {
  size_t i = 0;
  for (; i + 4 <= n; i += 4) {
    y[i] = 2.0f * x[i]; y[i + 1] = 2.0f * x[i + 1]; y[i + 2] = 2.0f * x[i + 2]; y[i + 3] = 2.0f * x[i + 3];
  }
  for (; i < n; ++i) y[i] = 2.0f * x[i];
}`;

const PY = `import triton
import triton.language as tl


@triton.jit
def add_kernel(x_ptr, y_ptr, out_ptr, n, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=mask) + tl.load(y_ptr + offs, mask=mask), mask=mask)


def launch(x, y, out):
    n = x.numel()
    add_kernel[(triton.cdiv(n, 1024),)](x, y, out, n, BLOCK=1024)
`;

function cpp(answer: string, finishReason?: string): ParsedAnswer {
  return parseAnswer({ answer, parentSource: CPP, kernel: 'scale', language: 'clike', finishReason });
}
function ok(p: ParsedAnswer): Extract<ParsedAnswer, { ok: true }> {
  if (!p.ok) throw new Error(`expected a candidate, got: ${p.reason}`);
  return p;
}
function bad(p: ParsedAnswer): string {
  if (p.ok) throw new Error('expected an invalid answer');
  return p.reason;
}

describe('parseAnswer: fenced code', () => {
  it('splices a function-only block into the parent and keeps the rest of the file byte for byte', () => {
    const p = ok(cpp(`Unrolling by four lets the compiler keep four independent multiplies in flight.\n\n\`\`\`cpp\n${NEW_SCALE}\n\`\`\`\n`));
    expect(p.form).toBe('function');
    expect(p.source).toContain('__restrict x');
    expect(p.source).toContain('extern "C" float sumsq(const float* x, size_t n) {');
    expect(p.source.startsWith('#include <cstddef>\n\nstatic inline float sq')).toBe(true);
    expect(p.rationale).toBe('Unrolling by four lets the compiler keep four independent multiplies in flight.');
  });

  it('takes a whole file as it is when it brings the includes', () => {
    const whole = CPP.replace('#include <cstddef>', '#include <cstddef>\n#define UNROLL 8').replace('2.0f * x[i]', '(float)2 * x[i]');
    const p = ok(cpp('```c++\n' + whole + '```'));
    expect(p.form).toBe('file');
    expect(p.source).toContain('#define UNROLL 8');
  });

  it('takes a whole file that left out the includes when it defines every other top-level name again', () => {
    const parent = '#include <algorithm>\n\nconstexpr int BLOCK_N = 2;\n\nextern "C" void f(float* y, int n) {\n  for (int i = 0; i < n; i += BLOCK_N) y[i] = 0;\n}\n';
    const answer = '```cpp\nconstexpr int BLOCK_N = 64;\n\nextern "C" void f(float* y, int n) {\n  for (int i = 0; i < n; i += BLOCK_N) y[i] = 1;\n}\n```';
    const p = ok(parseAnswer({ answer, parentSource: parent, kernel: 'f', language: 'clike' }));
    expect(p.form).toBe('file');
    expect(p.source).toContain('BLOCK_N = 64');
    // Only the function: spliced, the constant kept.
    const fnOnly = ok(parseAnswer({ answer: '```cpp\nextern "C" void f(float* y, int n) {\n  for (int i = 0; i < n; ++i) y[i] = 1;\n}\n```', parentSource: parent, kernel: 'f', language: 'clike' }));
    expect(fnOnly.form).toBe('function');
    expect(fnOnly.source).toContain('constexpr int BLOCK_N = 2;');
  });

  it('keeps the kernel\'s extern "C" linkage when the answer drops it', () => {
    const plain = NEW_SCALE.replace('extern "C" ', '');
    const p = ok(cpp('```cpp\n' + plain + '\n```'));
    expect(p.source).toContain('extern "C" void scale(const float* __restrict x');
    const inBlock = ok(cpp('```cpp\nextern "C" {\n' + plain + '\n}\n```'));
    expect(inBlock.source).toMatch(/extern "C" void scale\(const float\* __restrict x/);
    // A parent without C linkage is left as it is.
    const cxx = CPP.replace(/extern "C" /g, '');
    const q = ok(parseAnswer({ answer: '```cpp\n' + plain + '\n```', parentSource: cxx, kernel: 'scale', language: 'clike' }));
    expect(q.source).not.toContain('extern "C"');
  });

  it('picks, among several blocks, the last one that defines the kernel (old code first, new code after)', () => {
    const old = 'extern "C" void scale(const float* x, float* y, size_t n) {\n  for (size_t i = 0; i < n; ++i) y[i] = 2.0f * x[i];\n}';
    const answer = `The current version:\n\`\`\`cpp\n${old}\n\`\`\`\nA usage example:\n\`\`\`cpp\nscale(a, b, 16);\n\`\`\`\nThe new one:\n\`\`\`cpp\n${NEW_SCALE}\n\`\`\`\nCompile with -O3.\n\`\`\`bash\ng++ -O3 x.cpp\n\`\`\``;
    expect(ok(cpp(answer)).source).toContain('i + 4 <= n');
  });

  it('ignores a wrong language tag and judges by content', () => {
    expect(ok(cpp('```python\n' + NEW_SCALE + '\n```')).source).toContain('i + 4 <= n');
  });

  it('accepts a block whose closing fence is missing when the code is whole', () => {
    expect(ok(cpp('Here it is:\n```cpp\n' + NEW_SCALE + '\n')).source).toContain('i + 4 <= n');
  });

  it('rejects a block cut off by the token limit', () => {
    const cut = NEW_SCALE.slice(0, NEW_SCALE.length - 40);
    expect(bad(cpp('```cpp\n' + cut, 'length'))).toMatch(/cut off/);
    expect(bad(cpp('```cpp\n' + cut))).toMatch(/cut off/);
  });

  it('rejects a closed block whose braces do not balance', () => {
    expect(bad(cpp('```cpp\n' + NEW_SCALE.replace('for (; i < n; ++i)', 'for (; i < n; ++i) {') + '\n```'))).toMatch(/braces do not balance/);
  });

  it('rejects blocks that never define the kernel, naming it', () => {
    expect(bad(cpp('```cpp\nextern "C" void scale_v2(const float* x, float* y, size_t n) { }\n```'))).toMatch(/none of the answer's 1 code block\(s\) defines scale/);
  });

  it('does not take a call or a declaration of the kernel for its definition', () => {
    expect(bad(cpp('```cpp\nextern "C" void scale(const float* x, float* y, size_t n);\nint main() { scale(0, 0, 0); }\n```'))).toMatch(/defines scale/);
  });

  it('explains that a unified diff is not applied', () => {
    expect(bad(cpp('```diff\n@@ -1,3 +1,3 @@\n-  y[i] = 2.0f * x[i];\n+  y[i] = x[i] + x[i];\n```'))).toMatch(/unified diff/);
  });

  it('rejects an answer that repeats the parent', () => {
    expect(bad(cpp('```cpp\n' + CPP + '```'))).toMatch(/repeats the parent/);
  });

  it('handles tilde fences and four-backtick fences holding triple backticks', () => {
    expect(ok(cpp('~~~cpp\n' + NEW_SCALE + '\n~~~')).source).toContain('i + 4 <= n');
    expect(ok(cpp('````cpp\n// a ``` in a comment\n' + NEW_SCALE + '\n````')).source).toContain('i + 4 <= n');
  });

  it('brings new file-scope constants and macros declared with the kernel', () => {
    const answer = '```cpp\nconstexpr int UNROLL = 4;\n#define TWICE(v) \\\n  ((v) + (v))\nstatic const float W[2] = {\n  1.0f, 2.0f};\n\nextern "C" void scale(const float* x, float* y, size_t n) {\n  for (size_t i = 0; i < n; ++i) y[i] = TWICE(x[i]) * W[i % UNROLL % 2];\n}\n```';
    const p = ok(cpp(answer));
    expect(p.form).toBe('function');
    expect(p.source).toContain('constexpr int UNROLL = 4;\n#define TWICE(v) \\\n  ((v) + (v))\nstatic const float W[2] = {\n  1.0f, 2.0f};\n\nextern "C" void scale(');
    expect(p.source.match(/UNROLL = 4/g)).toHaveLength(1);
    expect(p.source).toContain('extern "C" float sumsq');
  });

  it('takes the answer\'s value for a constant the file already has', () => {
    const parent = '#include <algorithm>\n\nconstexpr int BLOCK_N = 2;\nconstexpr int BLOCK_K = 8;\n\nextern "C" void f(float* y, int n) {\n  for (int i = 0; i < n; i += BLOCK_N * BLOCK_K) y[i] = 0;\n}\n';
    const answer = '```cpp\nconstexpr int BLOCK_N = 64;  // wider\n\nextern "C" void f(float* y, int n) {\n  for (int i = 0; i < n; i += BLOCK_N * BLOCK_K) y[i] = 1;\n}\n```';
    const p = ok(parseAnswer({ answer, parentSource: parent, kernel: 'f', language: 'clike' }));
    expect(p.form).toBe('function');
    expect(p.source).toContain('constexpr int BLOCK_N = 64;  // wider\nconstexpr int BLOCK_K = 8;');
    expect(p.source.match(/BLOCK_N =/g)).toHaveLength(1);
  });

  it('brings a new helper function with the kernel', () => {
    const withHelper = 'static inline float twice(float v) { return v + v; }\n\nextern "C" void scale(const float* x, float* y, size_t n) {\n  for (size_t i = 0; i < n; ++i) y[i] = twice(x[i]);\n}';
    const p = ok(cpp('```cpp\n' + withHelper + '\n```'));
    expect(p.source).toContain('static inline float twice');
    expect(p.source).toContain('extern "C" float sumsq');
  });

  it('ignores code drafts inside <think> and rejects an answer cut off while thinking', () => {
    const p = ok(cpp('<think>Maybe:\n```cpp\nextern "C" void scale(const float* x, float* y, size_t n) { /*draft*/ }\n```\n</think>\nFinal:\n```cpp\n' + NEW_SCALE + '\n```'));
    expect(p.source).not.toContain('draft');
    expect(bad(cpp('<think>Let me consider the loop order. First'))).toMatch(/<think>/);
  });
});

describe('parseAnswer: no fence', () => {
  it('cuts the function out of prose', () => {
    const p = ok(cpp(`I unrolled the loop.\n${NEW_SCALE}\nThis should be about 2x faster.`));
    expect(p.form).toBe('function');
    expect(p.source).toContain('i + 4 <= n');
    expect(p.source).not.toContain('2x faster');
    expect(p.rationale).toBe('I unrolled the loop.');
  });

  it('takes an unfenced whole file', () => {
    const whole = CPP.replace('2.0f * x[i]', 'x[i] + x[i]');
    expect(ok(cpp(whole)).form).toBe('file');
  });

  it('rejects prose without code, and empty answers', () => {
    expect(bad(cpp('I would try loop unrolling and restrict pointers.'))).toMatch(/no code block/);
    expect(bad(cpp('   \n'))).toMatch(/empty/);
  });
});

describe('parseAnswer: JSON answers', () => {
  it('reads code and rationale from a JSON object, fenced or not', () => {
    const obj = JSON.stringify({ rationale: 'Unrolled by four.', code: NEW_SCALE });
    for (const answer of [obj, '```json\n' + obj + '\n```']) {
      const p = ok(cpp(answer));
      expect(p.source).toContain('i + 4 <= n');
      expect(p.rationale).toBe('Unrolled by four.');
    }
    expect(bad(cpp(JSON.stringify({ rationale: 'x', code: 'no kernel here' })))).toMatch(/does not define scale/);
  });
});

describe('parseAnswer: SEARCH/REPLACE', () => {
  it('applies several blocks in order', () => {
    const answer = `Use restrict and a multiply by a constant.
<<<<<<< SEARCH
extern "C" void scale(const float* x, float* y, size_t n) {
=======
extern "C" void scale(const float* __restrict x, float* __restrict y, size_t n) {
>>>>>>> REPLACE

<<<<<<< SEARCH
  for (size_t i = 0; i < n; ++i) y[i] = 2.0f * x[i];
=======
  for (size_t i = 0; i < n; ++i) y[i] = x[i] + x[i];
>>>>>>> REPLACE`;
    const p = ok(cpp(answer));
    expect(p.form).toBe('search-replace');
    expect(p.source).toContain('float* __restrict y');
    expect(p.source).toContain('y[i] = x[i] + x[i];');
    expect(p.rationale).toBe('Use restrict and a multiply by a constant.');
  });

  it('matches despite different indentation, and re-indents the replacement', () => {
    const answer = '```cpp\n<<<<<<< SEARCH\nfor (size_t i = 0; i < n; ++i) y[i] = 2.0f * x[i];\n=======\nfor (size_t i = 0; i < n; ++i)\n  y[i] = x[i] * 2;\n>>>>>>> REPLACE\n```';
    const p = ok(cpp(answer));
    expect(p.source).toContain('  for (size_t i = 0; i < n; ++i)\n    y[i] = x[i] * 2;');
  });

  it('says which block does not match the parent', () => {
    const answer = '<<<<<<< SEARCH\ny[i] = 2.0f * x[i];\n=======\ny[i] = x[i];\n>>>>>>> REPLACE\n<<<<<<< SEARCH\n  return s * 1;\n=======\n  return s;\n>>>>>>> REPLACE';
    expect(bad(cpp(answer))).toMatch(/block 2 of 2 does not match the parent .*return s \* 1/);
  });

  it('rejects cut-off and empty-search blocks', () => {
    expect(bad(cpp('<<<<<<< SEARCH\n  float s = 0;\n=======\n  double s = 0;\n'))).toMatch(/cut off before its >>>>>>> REPLACE/);
    expect(bad(cpp('<<<<<<< SEARCH\n  float s = 0;\n'))).toMatch(/cut off before its =======/);
    expect(bad(cpp('<<<<<<< SEARCH\n\n=======\n#include <cmath>\n>>>>>>> REPLACE'))).toMatch(/empty SEARCH/);
  });
});

describe('parseAnswer: Python (Triton)', () => {
  const py = (answer: string) => parseAnswer({ answer, parentSource: PY, kernel: 'add_kernel', language: 'python' });
  const newKernel = `@triton.jit
def add_kernel(x_ptr, y_ptr, out_ptr, n, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask, eviction_policy="evict_first")
    tl.store(out_ptr + offs, x + tl.load(y_ptr + offs, mask=mask), mask=mask)`;

  it('splices a decorated kernel and keeps the launcher', () => {
    const p = ok(py('Stream x once.\n```python\n' + newKernel + '\n```'));
    expect(p.form).toBe('function');
    expect(p.source).toContain('evict_first');
    expect(p.source).toContain('def launch(x, y, out):');
    expect(p.source.match(/@triton.jit/g)).toHaveLength(1);
  });

  it('keeps @triton.jit when the answer drops it', () => {
    const p = ok(py('```python\n' + newKernel.replace('@triton.jit\n', '') + '\n```'));
    expect(p.source).toMatch(/@triton.jit\ndef add_kernel\(/);
    expect(p.source.match(/@triton.jit/g)).toHaveLength(1);
  });

  it('takes a whole module with its imports as the file', () => {
    const whole = PY.replace('BLOCK=1024', 'BLOCK=2048');
    const p = ok(py('```py\n' + whole + '```'));
    expect(p.form).toBe('file');
    expect(p.source).toContain('BLOCK=2048');
  });

  it('cuts an unfenced kernel out of prose', () => {
    const p = ok(py('Here:\n\n' + newKernel + '\n\nThat is all.'));
    expect(p.source).toContain('evict_first');
    expect(p.source).not.toContain('That is all');
    expect(p.rationale).toBe('That is all.');
  });
});

describe('parseAnswer: a per-shape dispatch in the launcher (Triton)', () => {
  const SOFTMAX = `import torch
import triton
import triton.language as tl


@triton.jit
def softmax_kernel(out_ptr, in_ptr, n_cols, BLOCK_SIZE: tl.constexpr):
    row = tl.program_id(0)
    offs = tl.arange(0, BLOCK_SIZE)
    x = tl.load(in_ptr + row * n_cols + offs, mask=offs < n_cols, other=-float("inf"))
    e = tl.exp(x - tl.max(x, 0))
    tl.store(out_ptr + row * n_cols + offs, e / tl.sum(e, 0), mask=offs < n_cols)


def softmax(x):
    n_rows, n_cols = x.shape
    BLOCK_SIZE = triton.next_power_of_2(n_cols)
    num_warps = min(max(BLOCK_SIZE // 256, 1), 8)
    y = torch.empty_like(x)
    softmax_kernel[(n_rows,)](y, x, n_cols, BLOCK_SIZE=BLOCK_SIZE, num_warps=num_warps)
    return y
`;
  const launcher = (table: string) => `Rationale: 16 warps win on the wide rows and 2 on the narrow ones; a table keyed on the shape picks them, and any other shape launches as before.

\`\`\`python
SOFTMAX_BY_SHAPE = {
${table}
}


def softmax(x):
    n_rows, n_cols = x.shape
    BLOCK_SIZE = triton.next_power_of_2(n_cols)
    num_warps = min(max(BLOCK_SIZE // 256, 1), 8)
    num_warps = SOFTMAX_BY_SHAPE.get((n_rows, n_cols), {}).get("num_warps", num_warps)
    y = torch.empty_like(x)
    softmax_kernel[(n_rows,)](y, x, n_cols, BLOCK_SIZE=BLOCK_SIZE, num_warps=num_warps)
    return y
\`\`\`
`;
  const parse = (answer: string, parentSource = SOFTMAX) => parseAnswer({ answer, parentSource, kernel: 'softmax_kernel', language: 'python' });
  const python = new PythonLaunches();
  const warpsOn = (source: string, rows: number, cols: number) => python.run(source, `candidate.softmax(Tensor((${rows}, ${cols})))`)[0].num_warps;

  it('takes a launcher with its table (no kernel in the answer): the kernel kept, each listed shape its setting, the original elsewhere', () => {
    const p = ok(parse(launcher('    (4096, 4097): {"num_warps": 16},\n    (1024, 768): {"num_warps": 2},')));
    expect(p.form).toBe('launcher');
    expect(p.rationale).toMatch(/^16 warps win on the wide rows/);
    const kernel = SOFTMAX.slice(SOFTMAX.indexOf('@triton.jit'), SOFTMAX.indexOf('def softmax(x)'));
    expect(p.source).toContain(kernel);
    expect(p.source.indexOf('SOFTMAX_BY_SHAPE = {')).toBeLessThan(p.source.indexOf('@triton.jit'));
    expect(warpsOn(p.source, 4096, 4097)).toBe(16);
    expect(warpsOn(p.source, 1024, 768)).toBe(2);
    expect(warpsOn(p.source, 333, 1000)).toBe(warpsOn(SOFTMAX, 333, 1000));
    try {
      // a later dispatch replaces the table the parent already has, and keeps one of it
      const again = ok(parse(launcher('    (4096, 4097): {"num_warps": 8},'), p.source));
      expect(again.source.match(/SOFTMAX_BY_SHAPE = \{/g)).toHaveLength(1);
      expect(warpsOn(again.source, 4096, 4097)).toBe(8);
      expect(warpsOn(again.source, 1024, 768)).toBe(4);
    } finally {
      python.dispose();
    }
  });

  it('still refuses a block that defines neither the kernel nor any function of the file', () => {
    expect(bad(parse('```python\ndef helper(x):\n    return x\n```'))).toBe("none of the answer's 1 code block(s) defines softmax_kernel");
  });
});

describe('extractRationale', () => {
  it('prefers a labelled paragraph and skips lead-ins', () => {
    expect(extractRationale('Here is the faster kernel:\n\n```cpp\nx\n```\n\n**Rationale:** tiles of 64 fit L1.')).toBe('tiles of 64 fit L1.');
    expect(extractRationale('## Rationale\n\nBlocking for L2 cuts misses.\n\n```cpp\nx\n```')).toBe('Blocking for L2 cuts misses.');
    expect(extractRationale('Sure! Here it is:\n\n```cpp\nx\n```\n\nVectorized the inner loop with AVX2.')).toBe('Vectorized the inner loop with AVX2.');
  });

  it('keeps one paragraph of bounded length', () => {
    const long = 'Word '.repeat(400) + 'end.';
    const r = extractRationale(long, 200);
    expect(r.length).toBeLessThanOrEqual(201);
  });
});

// Answers whose kernel a finder of patterns cut wrongly out of the prose around it.
describe('parseAnswer: kernels the parser finds whole', () => {
  const CU = `#include <cuda_runtime.h>

template <class T>
__global__ void scale(T* out, const T* in, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = in[i] * 2;
}

extern "C" /* exported for ctypes */ {
void launch(float* out, const float* in, int n) { scale<float><<<(n + 255) / 256, 256>>>(out, in, n); }
}
`;
  const cu = (answer: string) => parseAnswer({ answer, parentSource: CU, kernel: 'scale', language: 'clike' });

  it('cuts out a CUDA kernel whose qualifiers and launch bounds stand on lines of their own', () => {
    const kernel = 'template <class T>\n__global__ void\n__launch_bounds__(256, 2)\nscale(T* out, const T* in, int n) {\n' +
      '  int i = blockIdx.x * blockDim.x + threadIdx.x;\n  if (i < n) out[i] = in[i] + in[i];\n}';
    const p = ok(cu(`Bounded the registers per thread.\n\n${kernel}\n\nThat should let two blocks share an SM.`));
    expect(p.form).toBe('function');
    expect(p.source).toBe(CU.replace(/template <class T>\n__global__ void scale[\s\S]*?\n}/, kernel));
  });

  it('reads braces and the kernel\'s name in strings and comments as text', () => {
    const kernel = 'template <class T>\n__global__ void scale(T* out, const T* in, int n) {\n' +
      '  // not the end: }\n  const char* note = "scale(T* x) { }";\n  int i = blockIdx.x * blockDim.x + threadIdx.x;\n  if (i < n) out[i] = in[i] + in[i];\n}';
    const p = ok(cu('```cuda\n' + kernel + '\n```'));
    expect(p.source).toBe(CU.replace(/template <class T>\n__global__ void scale[\s\S]*?\n}/, kernel));
  });

  it('keeps the whole decorator list of an unfenced Triton kernel, arguments across lines included', () => {
    const kernel = `@triton.autotune(
    configs=[triton.Config({"BLOCK": 512}, num_warps=4),
             triton.Config({"BLOCK": 1024}, num_warps=8)],
    key=["n"],
)
@triton.jit
def add_kernel(x_ptr, y_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=mask) + tl.load(y_ptr + offs, mask=mask), mask=mask)`;
    const p = ok(parseAnswer({ answer: `Let autotune pick the block.\n\n${kernel}\n\nThat is all.`, parentSource: PY, kernel: 'add_kernel', language: 'python' }));
    expect(p.source).toContain('triton.Config({"BLOCK": 1024}, num_warps=8)],\n    key=["n"],\n)\n@triton.jit\ndef add_kernel(');
    expect(p.source.match(/@triton\.jit/g)).toHaveLength(1);
  });
});
