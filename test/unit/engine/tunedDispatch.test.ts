// The dispatch candidate's source: a table keyed on the launch's shape values (or the device) with the
// original computation as the fallback. It is run here by Python itself, with small stand-ins for torch and
// triton whose kernel object records the meta-parameters of each launch, so the test sees which configuration
// the launcher really picks for a shape in the table and for one that is not.
import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { detectKnobs } from '../../../src/engine/knobs';
import { cudaCapabilityOf, type DispatchEntry, writeDispatch } from '../../../src/engine/tunedDispatch';
import { PLAIN_PYTHON, PythonLaunches } from './pythonLaunches';

const python = new PythonLaunches();
afterAll(() => python.dispose());
const launches = (source: string, calls: string, capability = '(9, 0)') => python.run(source, calls, capability);

const root = path.resolve(__dirname, '../../..');
const fixture = (name: string) => fs.readFileSync(path.join(__dirname, 'fixtures', name), 'utf8');

describe('a dispatch by shape, with the original computation as the fallback', () => {
  const src = fixture('triton_computed_launch.py');
  const set = detectKnobs(src, 'k.py');

  it('writes a table keyed on the launcher\'s shape variables where no kernel moves; the file still compiles and keeps its lines', () => {
    const r = writeDispatch(src, set, [
      { shape: { rows: 4096, cols: 1024 }, values: { num_warps: 2 } },
      { shape: { rows: 2048, cols: 4097 }, values: { num_warps: 16 } },
    ]);
    if ('error' in r) throw new Error(r.error);
    expect(r.tables).toEqual([{ launcher: 'scale_rows', name: 'KERNELEVOLVE_SCALE_ROWS_BY_SHAPE', keyNames: ['n_rows', 'n_cols'], byDevice: false,
      rows: [{ key: [4096, 1024], values: { num_warps: 2 } }, { key: [2048, 4097], values: { num_warps: 16 } }] }]);
    expect(r.source).toContain('KERNELEVOLVE_SCALE_ROWS_BY_SHAPE = {\n    (4096, 1024): {"num_warps": 2},\n    (2048, 4097): {"num_warps": 16},\n}\n');
    expect(r.source).toContain('num_warps=KERNELEVOLVE_SCALE_ROWS_BY_SHAPE.get((n_rows, n_cols), {}).get("num_warps", num_warps),');
    execFileSync(PLAIN_PYTHON, ['-c', 'import sys; compile(sys.stdin.read(), "candidate.py", "exec")'], { input: r.source });
    // Triton keys a compiled kernel on its source and its first line: kernels are defined below scale_rows() too, with
    // only definitions between, so the table goes below the last of them, and every line above it is the
    // original's on the same line (the tuned places aside); every line below it is the original's, in order
    const lines = r.source.split('\n');
    const original = src.split('\n');
    const at = lines.findIndex((l) => l.startsWith('# Launch parameters of scale_rows()'));
    expect(lines.slice(0, at).filter((l, i) => l !== original[i] && !l.includes('KERNELEVOLVE'))).toEqual([]);
    expect(lines.slice(at - 3, at)).toEqual(['    tl.store(out_ptr + row, tl.sum(acc, axis=0))', '', '']);
    expect(lines.slice(at + 6)).toEqual(original.slice(at - 2));
  });

  it('keeps a launcher\'s comment with it, goes above its class, and above the first definition where the launcher is under an `if`', () => {
    const kernel = ['import torch', 'import triton', 'import triton.language as tl', '', '',
      '@triton.jit', 'def k(x_ptr, n, BLOCK: tl.constexpr):', '    tl.load(x_ptr + tl.arange(0, BLOCK))', '', ''];
    const launcher = (indent: string) => [`${indent}def launch(x):`, `${indent}    n = x.numel()`, `${indent}    k[(triton.cdiv(n, 256),)](x, n, BLOCK=256)`, ''];
    const write = (text: string) => {
      const r = writeDispatch(text, detectKnobs(text, 'k.py'), [{ shape: { n: 4096 }, values: { BLOCK: 1024 } }]);
      if ('error' in r) throw new Error(r.error);
      execFileSync(PLAIN_PYTHON, ['-c', 'import sys; compile(sys.stdin.read(), "candidate.py", "exec")'], { input: r.source });
      return r.source.split('\n');
    };
    const commented = [...kernel, '# The launcher.', '# Its block is a guess.', ...launcher('')];
    let lines = write(commented.join('\n'));
    expect(lines.slice(0, kernel.length)).toEqual(kernel);
    expect(lines[kernel.length]).toMatch(/^# Launch parameters of launch\(\)/);
    expect(lines.slice(kernel.length + 5, kernel.length + 8)).toEqual(['', '# The launcher.', '# Its block is a guess.']);
    const method = [...kernel, 'class Launcher:', '    @staticmethod', ...launcher('    ')];
    lines = write(method.join('\n'));
    expect(lines.slice(0, kernel.length)).toEqual(kernel);
    expect(lines[kernel.length + 6]).toBe('class Launcher:');
    // a statement between the launcher and a kernel below it could call the launcher on import: the table stays above
    const later = ['', '', '@triton.jit', 'def k2(x_ptr):', '    pass', ''];
    lines = write([...kernel, ...launcher(''), 'LAUNCHED = 0', ...later].join('\n'));
    expect(lines[kernel.length]).toMatch(/^# Launch parameters of launch\(\)/);
    const plain = [...kernel, ...launcher(''), ...later];
    lines = write(plain.join('\n'));
    const n = plain.length - 1;
    expect(lines.slice(0, n).filter((l, i) => l !== plain[i] && !l.includes('KERNELEVOLVE'))).toEqual([]);
    expect(lines.slice(n, n + 3)).toEqual(['', '', '# Launch parameters of launch() tuned by KernelEvolve, keyed on (n); anything not listed keeps']);
    const guarded = [...kernel, 'if torch.cuda.is_available():', ...launcher('    ')];
    lines = write(guarded.join('\n'));
    expect(lines[5]).toMatch(/^# Launch parameters of launch\(\)/);
    expect(lines.slice(11, 14)).toEqual(['@triton.jit', 'def k(x_ptr, n, BLOCK: tl.constexpr):', '    tl.load(x_ptr + tl.arange(0, BLOCK))']);
  });

  it('picks the table\'s configuration for a listed shape and the original one for any other', () => {
    const r = writeDispatch(src, set, [
      { shape: { rows: 4096, cols: 1024 }, values: { num_warps: 2 } },
      { shape: { rows: 2048, cols: 4097 }, values: { num_warps: 16 } },
    ]);
    if ('error' in r) throw new Error(r.error);
    const got = launches(r.source, `
w = Tensor((1,))
candidate.scale_rows(Tensor((4096, 1024)), w, 1e-6)
candidate.scale_rows(Tensor((2048, 4097)), w, 1e-6)
candidate.scale_rows(Tensor((1000, 1000)), w, 1e-6)
candidate.scale_rows(Tensor((1024, 4096)), w, 1e-6)`);
    expect(got.map((l) => [l.BLOCK_SIZE, l.num_warps])).toEqual([[1024, 2], [8192, 16], [1024, 4], [4096, 8]]);
    // the original launcher, run the same way, differs only where the table says so
    const original = launches(src, `
w = Tensor((1,))
candidate.scale_rows(Tensor((4096, 1024)), w, 1e-6)
candidate.scale_rows(Tensor((2048, 4097)), w, 1e-6)
candidate.scale_rows(Tensor((1000, 1000)), w, 1e-6)
candidate.scale_rows(Tensor((1024, 4096)), w, 1e-6)`);
    expect(original.map((l) => [l.BLOCK_SIZE, l.num_warps])).toEqual([[1024, 4], [8192, 16], [1024, 4], [4096, 8]]);
  });

  it('a tuned tile that the grid uses moves the grid with it; an inserted launch option appears only for listed shapes', () => {
    const r = writeDispatch(src, set, [
      { shape: { n: 1 << 20 }, values: { BLOCK: 1024, 'num_warps@93': 4 } },
    ]);
    if ('error' in r) throw new Error(r.error);
    const got = launches(r.source, 'candidate.gelu(Tensor((1 << 20,)))\ncandidate.gelu(Tensor((5000,)))');
    expect(got.map((l) => [l.BLOCK, l.num_warps, l.grid])).toEqual([[1024, 4, [1024]], [4096, 8, [2]]]);
    const rows = writeDispatch(src, set, [{ shape: { rows: 64, cols: 100000 }, values: { 'BLOCK@110': 256, num_stages: 3 } }]);
    if ('error' in rows) throw new Error(rows.error);
    expect(rows.source).toContain('"launch options": {"num_stages": 3}');
    const sums = launches(rows.source, 'candidate.row_sum(Tensor((64, 100000)))\ncandidate.row_sum(Tensor((64, 1000)))');
    expect(sums.map((l) => [l.BLOCK, l.num_stages ?? 'default'])).toEqual([[256, 3], [1024, 'default']]);
  });

  it('warps and stages a launch leaves to Triton, both tuned for a shape, are passed once each', () => {
    // a row kernel launched with a literal block and nothing else: both launch options are inserted at one place
    const rows = ['import torch', 'import triton', 'import triton.language as tl', '',
      '@triton.jit', 'def row_max_kernel(x_ptr, out_ptr, stride, n_cols, BLOCK_SIZE: tl.constexpr):',
      '    for start in range(0, n_cols, BLOCK_SIZE):', '        tl.load(x_ptr + start + tl.arange(0, BLOCK_SIZE))', '',
      'def row_max(x):', '    n_rows, n_cols = x.shape', '    out = torch.empty(n_rows)',
      '    row_max_kernel[(n_rows,)](x, out, x.stride(0), n_cols, BLOCK_SIZE=1024)', '    return out', ''].join('\n');
    const knobs = detectKnobs(rows, 'rows.py');
    const warps = knobs.knobs.find((k) => k.insert === 'num_warps')!.name;
    const stages = knobs.knobs.find((k) => k.insert === 'num_stages')!.name;
    const r = writeDispatch(rows, knobs, [{ shape: { rows: 128, cols: 256000 }, values: { BLOCK_SIZE: 8192, [warps]: 32, [stages]: 1 } }]);
    if ('error' in r) throw new Error(r.error);
    expect(r.source.match(/\*\*KERNELEVOLVE_ROW_MAX_BY_SHAPE/g)).toHaveLength(1);
    const got = launches(r.source, 'candidate.row_max(Tensor((128, 256000)))\ncandidate.row_max(Tensor((64, 1000)))');
    expect(got.map((l) => [l.BLOCK_SIZE, l.num_warps ?? 'default', l.num_stages ?? 'default'])).toEqual([[8192, 32, 1], [1024, 'default', 'default']]);
  });

  it('two methods of one name launching one kernel (a softmax and a log-softmax) get a table each, keyed on each one\'s variables', () => {
    const two = ['import torch', 'import triton', 'import triton.language as tl', '',
      '@triton.jit', 'def rows_kernel(x_ptr, y_ptr, n_cols, LOG: tl.constexpr, BLOCK_SIZE: tl.constexpr):',
      '    for start in range(0, n_cols, BLOCK_SIZE):', '        tl.load(x_ptr + start + tl.arange(0, BLOCK_SIZE))', '',
      'class Softmax:', '    @staticmethod', '    def forward(ctx, x):', '        rows, cols = x.shape', '        y = torch.empty_like(x)',
      '        rows_kernel[(rows,)](y, x, cols, LOG=0, BLOCK_SIZE=128)', '        return y', '',
      'class LogSoftmax:', '    @staticmethod', '    def forward(ctx, x):', '        n_rows, n_cols = x.shape', '        y = torch.empty_like(x)',
      '        rows_kernel[(n_rows,)](y, x, n_cols, LOG=1, BLOCK_SIZE=128)', '        return y', ''].join('\n');
    const knobs = detectKnobs(two, 'rows.py');
    const warps = knobs.knobs.find((k) => k.insert === 'num_warps')!.name;
    const r = writeDispatch(two, knobs, [{ shape: { rows: 128, cols: 256000 }, values: { BLOCK_SIZE: 4096, [warps]: 16 } }]);
    if ('error' in r) throw new Error(r.error);
    expect(r.tables.map((t) => [t.launcher, t.name, t.keyNames])).toEqual([
      ['Softmax.forward', 'KERNELEVOLVE_SOFTMAX_FORWARD_BY_SHAPE', ['rows', 'cols']],
      ['LogSoftmax.forward', 'KERNELEVOLVE_LOGSOFTMAX_FORWARD_BY_SHAPE', ['n_rows', 'n_cols']]]);
    const got = launches(r.source, ['candidate.Softmax.forward(None, Tensor((128, 256000)))', 'candidate.LogSoftmax.forward(None, Tensor((128, 256000)))',
      'candidate.LogSoftmax.forward(None, Tensor((64, 1000)))'].join('\n'));
    expect(got.map((l) => [l.LOG, l.BLOCK_SIZE, l.num_warps ?? 'default'])).toEqual([[0, 4096, 16], [1, 4096, 16], [1, 128, 'default']]);
  });

  it('dispatches the bundled Triton matmul per (M, N, K), block sizes assigned in the launcher and used by the grid', () => {
    const mm = fs.readFileSync(path.join(root, 'examples/triton/matmul/matmul.py'), 'utf8');
    const r = writeDispatch(mm, detectKnobs(mm, 'matmul.py'), [
      { shape: { m: 1024, n: 1024, k: 1024 }, values: { BLOCK_M: 64, BLOCK_N: 128, BLOCK_K: 64, num_warps: 4, num_stages: 3 } },
      { shape: { m: 1000, n: 1537, k: 513 }, values: { BLOCK_M: 128, BLOCK_N: 64, BLOCK_K: 32, num_warps: 8, num_stages: 4 } },
    ]);
    if ('error' in r) throw new Error(r.error);
    expect(r.tables[0].keyNames).toEqual(['M', 'K', 'N']);
    const got = launches(r.source, `
for m, n, k in [(1024, 1024, 1024), (1000, 1537, 513), (512, 512, 512)]:
    candidate.matmul(Tensor((m, k)), Tensor((k, n)), Tensor((m, n)))`);
    expect(got.map((l) => [l.BLOCK_M, l.BLOCK_N, l.BLOCK_K, l.num_warps, l.num_stages, l.grid])).toEqual([
      [64, 128, 64, 4, 3, [16, 8]], [128, 64, 32, 8, 4, [8, 25]], [32, 32, 32, 2, 1, [16, 16]]]);
  });

  it('a literal shared by two launchers (forward and backward) gets a table in each, keyed on each one\'s variables', () => {
    const two = `import triton
import triton.language as tl


@triton.jit
def fwd_kernel(x, n, ROWS: tl.constexpr):
    r = tl.program_id(0) * ROWS + tl.arange(0, ROWS)


@triton.jit
def bwd_kernel(x, n, ROWS: tl.constexpr):
    r = tl.program_id(0) * ROWS + tl.arange(0, ROWS)


def forward(x):
    n_rows, n_cols = x.shape
    ROWS = 16
    fwd_kernel[(triton.cdiv(n_rows, ROWS),)](x, n_rows, ROWS=ROWS)


def backward(dy):
    n_rows = dy.shape[0]
    ROWS = 16
    bwd_kernel[(triton.cdiv(n_rows, ROWS),)](dy, n_rows, ROWS=ROWS)
`;
    const r = writeDispatch(two, detectKnobs(two, 'k.py'), [{ shape: { rows: 4096, cols: 64 }, values: { ROWS: 64 } }]);
    if ('error' in r) throw new Error(r.error);
    expect(r.tables.map((x) => [x.launcher, x.keyNames])).toEqual([['forward', ['n_rows', 'n_cols']], ['backward', ['n_rows']]]);
    const got = launches(r.source, 'candidate.forward(Tensor((4096, 64)))\ncandidate.backward(Tensor((4096, 64)))\ncandidate.forward(Tensor((100, 64)))');
    expect(got.map((l) => [l.kernel, l.ROWS, l.grid])).toEqual([['fwd_kernel', 64, [64]], ['bwd_kernel', 64, [64]], ['fwd_kernel', 16, [7]]]);
  });

  it('keys on the launcher\'s shape variables in order where no name matches the spec\'s (M, N against rows, cols)', () => {
    // as lecture code writes a row softmax: its warps left to Triton, the launcher's own names for the shape
    const lecture = [
      'import triton', 'import triton.language as tl', '',
      'def softmax(x):', '    y = x', '    M, N = x.shape', '    block_size = triton.next_power_of_2(N)',
      '    softmax_kernel[(M,)](x, y, N, BLOCK_SIZE=block_size)', '    return y', '',
      '@triton.jit', 'def softmax_kernel(x_ptr, y_ptr, n_cols, BLOCK_SIZE: tl.constexpr):',
      '    cols = tl.arange(0, BLOCK_SIZE)', '    tl.store(y_ptr + cols, tl.load(x_ptr + cols, mask=cols < n_cols), mask=cols < n_cols)', '',
    ].join('\n');
    const r = writeDispatch(lecture, detectKnobs(lecture, 'k.py'), [
      { shape: { rows: 16384, cols: 257 }, values: { num_warps: 1 } },
      { shape: { rows: 1024, cols: 16384 }, values: { num_warps: 32 } },
    ]);
    if ('error' in r) throw new Error(r.error);
    expect(r.tables[0].keyNames).toEqual(['M', 'N']);
    const got = launches(r.source, `
candidate.softmax(Tensor((16384, 257)))
candidate.softmax(Tensor((1024, 16384)))
candidate.softmax(Tensor((257, 16384)))`);
    // listed shapes get their warps; a transposed one (the same numbers in the other order) keeps Triton's default
    expect(got.map((l) => l.num_warps)).toEqual([1, 32, undefined]);
    // the kernel, defined below its launcher, keeps its line: the table goes below it
    expect(r.source.split('\n').slice(10, 12)).toEqual(['@triton.jit', 'def softmax_kernel(x_ptr, y_ptr, n_cols, BLOCK_SIZE: tl.constexpr):']);
    expect(r.source).toMatch(/mask=cols < n_cols\)\n\n\n# Launch parameters of softmax\(\)[^]*\n}\n$/);
  });

  it('keys on a slice of the shape (`rows, depth = x.shape[-2:]`) and a size read under a condition, as batched launchers write them', () => {
    const batched = [
      'import triton', 'import triton.language as tl', '',
      'def gram(x, g):', '    rows, depth = x.shape[-2:]', '    batch = x.size(0) if x.ndim == 3 else 1', '    BM, BN = 64, 128',
      '    grid = (batch * triton.cdiv(rows, BM) * triton.cdiv(rows, BN),)',
      '    gram_kernel[grid](x, g, rows, depth, BM=BM, BN=BN, num_warps=4)', '    return g', '',
      '@triton.jit', 'def gram_kernel(x_ptr, g_ptr, rows, depth, BM: tl.constexpr, BN: tl.constexpr):',
      '    r = tl.program_id(0) * BM + tl.arange(0, BM)', '    c = tl.program_id(1) * BN + tl.arange(0, BN)',
      '    tl.store(g_ptr + r[:, None] * rows + c[None, :], tl.load(x_ptr + r[:, None] * depth), mask=r[:, None] < rows)', '',
    ].join('\n');
    const r = writeDispatch(batched, detectKnobs(batched, 'k.py'), [
      { shape: { b: 4, rows: 768, depth: 3072 }, values: { BM: 128, num_warps: 8 } },
      { shape: { b: 3, rows: 1000, depth: 1537 }, values: { BN: 64 } },
    ]);
    if ('error' in r) throw new Error(r.error);
    expect(r.tables[0].keyNames).toEqual(['rows', 'depth']);
    const got = launches(r.source, `
g = Tensor((1,))
candidate.gram(Tensor((4, 768, 3072)), g)
candidate.gram(Tensor((3, 1000, 1537)), g)
candidate.gram(Tensor((768, 3072)), g)
candidate.gram(Tensor((2, 768, 768)), g)`);
    // a listed shape gets its row (a 2-D input of the same sizes too), any other the launcher's own
    expect(got.map((l) => [l.BM, l.BN, l.num_warps])).toEqual([[128, 128, 8], [64, 64, 4], [128, 128, 8], [64, 128, 4]]);
    // and the grid follows the tiles: 4 matrices of 6 x 6 tiles of 128 x 128 for the first
    expect(got[0].grid).toEqual([4 * 6 * 6]);
  });

  it('takes tiles written as defaults of the launcher\'s parameters: None there, the table read where the body first reads them, a caller\'s own value kept', () => {
    const kernel = ['@triton.jit', 'def mm_kernel(a, b, c, M, N, K, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):',
      '    pid = tl.program_id(0)', '    tl.store(c + pid, tl.load(a + pid))', ''];
    const launcher = ['def mm(a, b, BM=128, BN=128, BK=32):', '    M, K = a.shape', '    K_, N = b.shape', '    c = a',
      '    grid = (triton.cdiv(M, BM), triton.cdiv(N, BN))', '    mm_kernel[grid](a, b, c, M, N, K, BM, BN, BK)', '    return c', ''];
    const head = ['import triton', 'import triton.language as tl', ''];
    const rows: DispatchEntry[] = [
      { shape: { m: 4096, n: 4096, k: 4096 }, values: { BM: 128, BN: 256, BK: 64, num_warps: 8 } },
      { shape: { m: 1000, n: 1537, k: 1024 }, values: { BM: 128, BN: 64, BK: 64 } },
    ];
    const calls = `
candidate.mm(Tensor((4096, 4096)), Tensor((4096, 4096)))
candidate.mm(Tensor((1000, 1024)), Tensor((1024, 1537)))
candidate.mm(Tensor((512, 512)), Tensor((512, 512)))
candidate.mm(Tensor((4096, 4096)), Tensor((4096, 4096)), BN=32)`;
    // the launcher below its kernel: the reads on lines of their own above the body's first read
    const below = [...head, ...kernel, ...launcher].join('\n');
    const r = writeDispatch(below, detectKnobs(below, 'k.py'), rows);
    if ('error' in r) throw new Error(r.error);
    expect(r.tables[0].keyNames).toEqual(['M', 'K', 'N']);
    expect(r.source).toContain('def mm(a, b, BM=128, BN=None, BK=None):\n');
    expect(r.source).toContain('    c = a\n    BN = KERNELEVOLVE_MM_BY_SHAPE.get((M, K, N), {}).get("BN", 128) if BN is None else BN\n'
      + '    BK = KERNELEVOLVE_MM_BY_SHAPE.get((M, K, N), {}).get("BK", 32) if BK is None else BK\n    grid = ');
    const got = launches(r.source, calls);
    // a listed shape gets its row, any other the launcher's own defaults, and a tile the caller passes stays
    expect(got.map((l) => [l.BM, l.BN, l.BK, l.num_warps ?? 'default'])).toEqual([[128, 256, 64, 8], [128, 64, 64, 'default'], [128, 128, 32, 'default'], [128, 32, 64, 8]]);
    expect(got[0].grid).toEqual([32, 16]);
    // the launcher above its kernel: the reads joined to that line, so the kernel keeps its line (Triton keys a
    // compiled kernel on it)
    const above = [...head, ...launcher, ...kernel].join('\n');
    const j = writeDispatch(above, detectKnobs(above, 'k.py'), rows);
    if ('error' in j) throw new Error(j.error);
    const at = (text: string, line: string) => text.split('\n').indexOf(line);
    const kernelLine = at(j.source, '@triton.jit') - at(j.source, 'def mm(a, b, BM=128, BN=None, BK=None):');
    expect(kernelLine).toBe(at(above, '@triton.jit') - at(above, 'def mm(a, b, BM=128, BN=128, BK=32):'));
    expect(j.source).toContain('    BN = KERNELEVOLVE_MM_BY_SHAPE.get((M, K, N), {}).get("BN", 128) if BN is None else BN; BK = ');
    expect(launches(j.source, calls).map((l) => [l.BM, l.BN, l.BK])).toEqual([[128, 256, 64], [128, 64, 64], [128, 128, 32], [128, 32, 64]]);
    // a first read inside a block: said, not written
    const nested = [...head, ...kernel, 'def mm(a, b, BM=128):', '    M, K = a.shape', '    if M > 0:', '        mm_kernel[(triton.cdiv(M, BM),)](a, b, a, M, M, K, BM, 64, 32)', '    return a', ''].join('\n');
    expect(writeDispatch(nested, detectKnobs(nested, 'k.py'), [{ shape: { m: 64, k: 64 }, values: { BM: 64 } }]))
      .toEqual({ error: 'BM of mm() is first read inside a block, so it cannot be chosen per shape there' });
  });

  it('says why when the spec\'s shapes do not match the launcher\'s variables, or a knob lives outside a launcher', () => {

    const r = writeDispatch(src, set, [{ shape: { batch: 8, heads: 32, hidden: 4096 }, values: { num_warps: 8 } }]);
    expect(r).toEqual({ error: expect.stringMatching(/scale_rows\(\) has no shape variable that matches the spec's shapes \(batch, heads, hidden\); found n_rows, n_cols/) });
    const mod = 'import triton\nBLOCK_SIZE = 256\n\n@triton.jit\ndef k(x, BLOCK_SIZE: tl.constexpr):\n    pass\n\ndef run(x):\n    n = x.numel()\n    k[(triton.cdiv(n, BLOCK_SIZE),)](x, BLOCK_SIZE=BLOCK_SIZE)\n';
    const m = writeDispatch(mod, detectKnobs(mod, 'k.py'), [{ shape: { n: 10 }, values: { BLOCK_SIZE: 512 } }]);
    expect(m).toEqual({ error: 'BLOCK_SIZE is not set inside a launcher function, so it cannot be chosen per shape' });
  });
});

describe('one launcher launching two kernels, each with warps it computes', () => {
  // Liger's RMSNorm launches its row kernel or, for short rows, a kernel of blocks of rows, both with
  // `num_warps=num_warps` computed by one statement: once the tuner writes numbers there the candidates name the two
  // apart, and the table must too (a row of the H200 tune of 2026-12-05, Liger's SwiGLU, whose two launches were one
  // knob then, gave the row kernel the tiled launch's 1 warp: 0.09x on that shape)
  const src = [
    'import torch', 'import triton', 'import triton.language as tl', '', '',
    '@triton.jit', 'def _row_kernel(y_ptr, x_ptr, n_cols, BLOCK_SIZE: tl.constexpr):', '    pass', '', '',
    '@triton.jit', 'def _tiled_kernel(y_ptr, x_ptr, n_cols, BLOCK_SIZE: tl.constexpr):', '    pass', '', '',
    'def scale(x, tiled=False):', '    n_rows, n_cols = x.shape', '    y = torch.empty_like(x)',
    '    BLOCK_SIZE, num_warps = triton.next_power_of_2(n_cols), n_cols // 4096', '    if tiled:',
    '        _tiled_kernel[(n_rows, triton.cdiv(n_cols, BLOCK_SIZE))](y, x, n_cols, BLOCK_SIZE=BLOCK_SIZE, num_warps=num_warps)',
    '        return y',
    '    _row_kernel[(n_rows,)](y, x, n_cols, BLOCK_SIZE=BLOCK_SIZE, num_warps=num_warps)', '    return y', '',
  ].join('\n');

  it('gives each launch its own warps from a table row, as its candidates named them', () => {
    // the baseline's one computed knob stands at both launches; a candidate with numbers there tells them apart
    const set = detectKnobs(src, 'k.py');
    const warps = set.knobs.filter((k) => k.role === 'warps');
    expect(warps.map((k) => [k.name, k.spans.length])).toEqual([['num_warps', 2]]);
    let at = 0;
    const candidate = src.replace(/num_warps=num_warps\)/g, () => `num_warps=${at++ ? 16 : 1})`);
    expect(detectKnobs(candidate, 'k.py').knobs.filter((k) => k.role === 'warps').map((k) => [k.name, k.value])).toEqual([['num_warps', 1], ['num_warps@23', 16]]);
    const r = writeDispatch(src, set, [
      { shape: { rows: 64, cols: 16384 }, values: { num_warps: 1, 'num_warps@23': 16 } },
      // a row whose candidate came from the baseline's knob: one value at both launches
      { shape: { rows: 64, cols: 4096 }, values: { num_warps: 4 } },
    ]);
    if ('error' in r) throw new Error(r.error);
    expect(r.source).toContain('(64, 16384): {"num_warps": 1, "num_warps@23": 16},\n    (64, 4096): {"num_warps": 4, "num_warps@23": 4},');
    const got = launches(r.source, ['candidate.scale(Tensor((64, 16384)))', 'candidate.scale(Tensor((64, 16384)), True)',
      'candidate.scale(Tensor((64, 4096)))', 'candidate.scale(Tensor((64, 4096)), True)', 'candidate.scale(Tensor((64, 8192)))'].join('\n'));
    expect(got.map((l) => [l.kernel, l.num_warps])).toEqual([['_row_kernel', 16], ['_tiled_kernel', 1], ['_row_kernel', 4], ['_tiled_kernel', 4], ['_row_kernel', 2]]);
  });
});

describe('a dispatch by device (per-hardware winners), the original as the fallback', () => {
  const src = fixture('triton_computed_launch.py');
  const set = detectKnobs(src, 'k.py');

  it('keys on the compute capability of each hardware\'s winner and falls back on other devices', () => {
    expect(cudaCapabilityOf('nvidia-h200')).toEqual([9, 0]);
    expect(cudaCapabilityOf('nvidia-a100')).toEqual([8, 0]);
    expect(cudaCapabilityOf('cpu-x86')).toBeUndefined();
    const r = writeDispatch(src, set, [
      { capability: cudaCapabilityOf('nvidia-h200'), values: { num_warps: 16 } },
      { capability: cudaCapabilityOf('nvidia-a100'), values: { num_warps: 2 } },
    ]);
    if ('error' in r) throw new Error(r.error);
    expect(r.source).toContain('KERNELEVOLVE_SCALE_ROWS_BY_DEVICE = {\n    (9, 0): {"num_warps": 16},\n    (8, 0): {"num_warps": 2},\n}');
    const call = 'candidate.scale_rows(Tensor((10, 1000)), Tensor((1,)), 1e-6)';
    expect(launches(r.source, call, '(9, 0)')[0].num_warps).toBe(16);
    expect(launches(r.source, call, '(8, 0)')[0].num_warps).toBe(2);
    expect(launches(r.source, call, '(8, 9)')[0].num_warps).toBe(4);
  });

  it('nests shapes under devices when winners are per device and per shape', () => {
    const r = writeDispatch(src, set, [
      { capability: [9, 0], shape: { rows: 10, cols: 1000 }, values: { num_warps: 1 } },
      { capability: [8, 0], shape: { rows: 10, cols: 1000 }, values: { num_warps: 2 } },
    ]);
    if ('error' in r) throw new Error(r.error);
    const call = (rows: number) => `candidate.scale_rows(Tensor((${rows}, 1000)), Tensor((1,)), 1e-6)`;
    expect(launches(r.source, call(10), '(9, 0)')[0].num_warps).toBe(1);
    expect(launches(r.source, call(10), '(8, 0)')[0].num_warps).toBe(2);
    expect(launches(r.source, call(11), '(9, 0)')[0].num_warps).toBe(4);
  });
});
