// Drafts a spec for a kernel that has none, from the kernel's syntax tree: arrays sized as the kernel indexes
// them (cppKernelAccess.ts, tritonKernelAccess.ts), dtypes from what the kernel converts and how the workspace
// calls it, a reference when what the kernel computes can be read (cppReference.ts), and problem sizes whose
// cost per call is estimated before any run (specSizing.ts). The user reviews the draft before evolving; when
// an LLM is configured it reviews the draft too (specDraftLlm.ts).
import * as path from 'node:path';
import { cppKernelAccess, type CParam, type CppKernelAccess } from './cppKernelAccess';
import { cppReference, type DraftedReference } from './cppReference';
import type { KernelLocator, KernelSite } from '../engine/kernelLocator';
import { SizePolynomial } from './sizePolynomial';
import { chooseShapes, describeEstimate, estimateCall, type DraftDevice, type SizedArray } from './specSizing';
import { tritonKernelAccess, type TritonKernelAccess } from './tritonKernelAccess';

export interface SpecDraft {
  fileName: string;
  text: string;
  /** What one call costs at the largest shape, in words (shown before the first run). */
  estimate?: string;
  /** Set when that cost passes the limits of specSizing.ts. */
  warning?: string;
}

interface Body {
  text: string;
  how: string;
  reference?: DraftedReference;
  estimate?: ReturnType<typeof describeEstimate>;
  notes: string[];
}

const PYTHON_KEYWORDS = new Set(['in', 'is', 'as', 'if', 'or', 'and', 'not', 'for', 'def', 'del', 'from', 'with', 'pass', 'else', 'elif', 'try', 'class', 'global', 'lambda', 'return', 'yield', 'while', 'import', 'raise', 'assert', 'break', 'continue', 'finally', 'except', 'nonlocal', 'None', 'True', 'False']);

function pyName(name: string): string {
  return PYTHON_KEYWORDS.has(name) ? `${name}_` : name;
}

const C_TYPES: [RegExp, string, string, number][] = [
  [/\bdouble\b/, 'np.float64', 'ctypes.c_double', 8],
  [/\b(__half|half|_Float16|__fp16)\b/, 'np.float16', 'ctypes.c_uint16', 2],
  [/\bfloat\b/, 'np.float32', 'ctypes.c_float', 4],
  [/\b(int64_t|long long|long|ptrdiff_t)\b/, 'np.int64', 'ctypes.c_int64', 8],
  [/\b(uint8_t|unsigned char)\b/, 'np.uint8', 'ctypes.c_uint8', 1],
  [/\b(int8_t|char)\b/, 'np.int8', 'ctypes.c_int8', 1],
  [/\b(size_t|uint64_t)\b/, 'np.uint64', 'ctypes.c_size_t', 8],
  [/\b(unsigned|uint32_t)\b/, 'np.uint32', 'ctypes.c_uint', 4],
  [/\b(int|int32_t)\b/, 'np.int32', 'ctypes.c_int', 4],
];

function cType(type: string): { np: string; ctypes: string; bytes: number } {
  const hit = C_TYPES.find(([re]) => re.test(type));
  return hit ? { np: hit[1], ctypes: hit[2], bytes: hit[3] } : { np: 'np.float32', ctypes: 'ctypes.c_float', bytes: 4 };
}

function shapesLiteral(shapes: Record<string, number | string>[]): string {
  return `[\n${shapes.map((s) => `    {${Object.entries(s).map(([k, v]) => `"${k}": ${typeof v === 'string' ? `"${v}"` : v}`).join(', ')}},`).join('\n')}\n]`;
}

function referenceText(params: string[], ref: DraftedReference | undefined): string {
  return ref ? `\n\ndef reference(${params.join(', ')}):\n    # ${ref.what}\n${ref.body.map((l) => `    ${l}`).join('\n')}\n` : '';
}

/** Element counts of arrays the kernel's indexing did not reveal: as long as the longest known one. */
function fallbackExtent(known: SizePolynomial[], dims: string[]): SizePolynomial {
  const sample = (p: SizePolynomial) => p.evaluate(Object.fromEntries(p.symbols().map((s) => [s, 1000])));
  return known.sort((a, b) => sample(b) - sample(a))[0] ?? SizePolynomial.symbol(dims[0] ?? 'n');
}

/** A numpy reference as torch, for kernels whose arrays are CUDA tensors. */
function asTorch(ref: DraftedReference): DraftedReference {
  return { what: ref.what, body: ref.body.map((l) => l.replace(/\.astype\(np\.float64\)/g, '.double()').replace(/\.astype\((\w+)\.dtype\)/g, '.to($1.dtype)').replace(/\bnp\./g, 'torch.')) };
}

function cppBody(a: CppKernelAccess, site: KernelSite, sourceName: string, launcher: string | undefined, computed: CppKernelAccess = a): Body {
  const device: DraftDevice = site.kind === 'cuda' ? 'gpu' : 'cpu';
  const order = a.params.map((p) => p.name);
  let dims = a.params.filter((p) => p.isSize).map((p) => p.name);
  if (!dims.length) dims = [];
  const known = a.params.filter((p) => p.pointer && p.extent).map((p) => p.extent!);
  const notes: string[] = [];
  const extentOf = (p: CParam) => p.extent ?? fallbackExtent([...known], dims.length ? dims : ['n']);
  const shown = (p: CParam) => extentOf(p).toString(p.layout ?? order);
  for (const p of a.params.filter((q) => q.pointer && !q.extent)) notes.push(`${p.name}: its length could not be read from the kernel's indexing; it is drafted as ${shown(p)}.`);
  if (!dims.length && a.params.some((p) => p.pointer && !p.extent)) dims = ['n'];
  const arrays: SizedArray[] = a.params.filter((p) => p.pointer).map((p) => ({ name: p.name, extent: extentOf(p), itemBytes: cType(p.element).bytes }));
  const shapes = chooseShapes(dims, arrays, a.work, device);
  const estimate = describeEstimate(estimateCall(shapes, arrays, a.work, device));
  const found = cppReference(computed);
  const ref = found && site.kind === 'cuda' ? asTorch(found) : found;
  const outputs = a.params.filter((p) => p.pointer && p.role === 'output').map((p) => p.index);
  const inplace = a.params.filter((p) => p.pointer && p.role === 'inplace').map((p) => p.index);
  const written = [...outputs, ...inplace].sort((x, y) => x - y);
  const gpu = site.kind === 'cuda';
  const lines = a.params.map((p) => {
    const t = cType(p.element);
    if (p.pointer) {
      const n = extentOf(p).toPython((s) => `shape["${s}"]`, p.layout ?? order);
      const torchDtype = t.np.replace('np.', 'torch.');
      const make = gpu
        ? (p.role === 'output' ? `torch.zeros(${n}, device="cuda", dtype=${torchDtype})` : /float/.test(t.np) ? `torch.randn(${n}, device="cuda", generator=g).to(${torchDtype})` : `torch.randint(0, 100, (${n},), device="cuda", generator=g).to(${torchDtype})`)
        : (p.role === 'output' ? `np.zeros(${n}, dtype=${t.np})` : /float/.test(t.np) ? `rng.standard_normal(${n}).astype(${t.np})` : `rng.integers(0, 100, ${n}).astype(${t.np})`);
      return `        ${make},  # ${p.name}: ${shown(p)}${p.role === 'output' ? ', written by the kernel' : p.role === 'inplace' ? ', read and written' : ''}`;
    }
    if (p.isSize) return `        shape["${p.name}"],  # ${p.name}`;
    return `        ${/float/.test(t.np) ? '1.5' : '1'},  # ${p.name}`;
  });
  const argtypes = a.params.map((p) => (p.pointer ? 'ctypes.c_void_p' : cType(p.element).ctypes)).join(', ');
  const callArgs = a.params.map((p, i) => (p.pointer ? (gpu ? `args[${i}].data_ptr()` : `args[${i}].ctypes.data`) : `args[${i}]`)).join(', ');
  const ret = written.length === 1 ? `args[${written[0]}]` : `tuple(args[i] for i in (${written.join(', ')}${written.length === 1 ? ',' : ''}))`;
  const fnName = launcher ?? site.name;
  const bytes = a.params.filter((p) => p.pointer).map((p) => `${cType(p.element).bytes} * (${extentOf(p).toPython((s) => `shape["${s}"]`, p.layout ?? order)})`).join(' + ');
  const text = `import ctypes

${gpu ? 'import torch' : 'import numpy as np'}

BACKEND = "${gpu ? 'cuda' : 'cpp'}"
SOURCE = "${sourceName}"
KERNEL = "${site.name}"

# Problem sizes: the dimensions differ (a kernel that swaps two of them fails) and include odd values.
SHAPES = ${shapesLiteral(shapes)}

# Arrays the kernel writes before reading (poisoned before every call), and those it reads and writes; every
# other array must come back unchanged.
OUTPUTS = [${outputs.join(', ')}]
INPLACE = [${inplace.join(', ')}]


def inputs(shape, seed):
    ${gpu ? 'g = torch.Generator(device="cuda").manual_seed(seed)' : 'rng = np.random.default_rng(seed)'}
    return (
${lines.join('\n')}
    )


def launch(k, *args):
    fn = k.${fnName}${launcher ? `  # ${launcher} in ${sourceName} launches ${site.name}` : ''}
    fn.argtypes = [${argtypes}]
    fn.restype = None
    fn(${callArgs})
    return ${ret}
${referenceText(a.params.map((p) => pyName(p.name)), ref)}

def BYTES(shape):
    return float(${bytes || '0'})
`;
  return { text, how: 'from how the kernel indexes its arrays', reference: ref, estimate, notes };
}

const TORCH_DTYPES = ['float16', 'bfloat16', 'float32'];

/** Dtypes the kernel is meant for: what its callers in the workspace create, and fp16/bf16 when it upcasts its loads. */
function tritonDtypes(t: TritonKernelAccess, callers: readonly string[]): string[] {
  const seen = TORCH_DTYPES.filter((d) => callers.some((c) => new RegExp(`torch\\.${d}\\b|\\b${d === 'float16' ? 'half' : d === 'bfloat16' ? 'bfloat16' : 'float'}\\(\\)`).test(c)));
  if (t.upcasts) return [...new Set([...seen, 'float16', 'bfloat16', 'float32'])];
  return seen.length ? seen : [];
}

function tritonBody(t: TritonKernelAccess, site: KernelSite, sourceName: string, callers: readonly string[]): Body {
  const dtypes = tritonDtypes(t, callers);
  const dims = t.dims.length ? t.dims : ['n'];
  const tensors = t.args.filter((a) => a.kind === 'tensor');
  const itemBytes = dtypes.length && !dtypes.includes('float32') ? 2 : 4;
  const arrays: SizedArray[] = tensors.map((a) => ({ name: a.name, extent: a.dims.map((d) => SizePolynomial.symbol(d)).reduce((x, y) => x.mul(y), SizePolynomial.constant(1)), itemBytes }));
  const sized = chooseShapes(dims, arrays, undefined, 'gpu');
  const shapes: Record<string, number | string>[] = sized.map((s, i) => (dtypes.length ? { ...s, dtype: dtypes[i % dtypes.length] } : s));
  const estimate = describeEstimate(estimateCall(sized, arrays, undefined, 'gpu'));
  const index = (name: string) => t.args.findIndex((a) => a.name === name);
  const outputs = tensors.filter((a) => a.role === 'output').map((a) => index(a.name));
  const inplace = tensors.filter((a) => a.role === 'inplace').map((a) => index(a.name));
  const dtype = dtypes.length ? 'dtype=getattr(torch, shape["dtype"]), ' : '';
  const lines = t.args.map((a) => {
    if (a.kind === 'scalar') return `        ${a.value},  # ${a.name}`;
    const size = a.dims.map((d) => `shape["${d}"]`).join(', ');
    const how = a.role === 'output' ? `torch.empty(${size}, device="cuda", ${dtype}).zero_()`.replace(', )', ')') : `torch.randn(${size}, device="cuda", ${dtype}generator=g)`;
    return `        ${how},  # ${a.name}: (${a.dims.join(', ')})${a.role === 'output' ? ', written by the kernel' : a.role === 'inplace' ? ', read and written' : ''}`;
  });
  const written = [...outputs, ...inplace].sort((x, y) => x - y);
  const launch = t.launcher
    ? `def launch(k, *args):\n    # ${t.launcher} in ${sourceName} launches ${site.name}.\n    return k.${t.launcher}(*args)\n`
    : `def launch(k, *args):\n    # ${sourceName} has no function that launches ${site.name}: the grid and block below are a guess to review.\n    grid = ${t.direct!.grid}\n    k.${site.name}[grid](*args${t.direct!.constexprs.length ? ', ' + t.direct!.constexprs.join(', ') : ''})\n    return ${written.length === 1 ? `args[${written[0]}]` : `tuple(args[i] for i in (${written.join(', ')}${written.length === 1 ? ',' : ''}))`}\n`;
  const notes = tensors.filter((a) => a.dims.length === 1 && tensors.some((o) => o.dims.length > 1 && o.dims.includes(a.dims[0])))
    .map((a) => `${a.name} is read broadcast: a vector of ${a.dims[0]}, as the kernel indexes it.`);
  const text = `import torch
import triton

BACKEND = "triton"
SOURCE = "${sourceName}"
KERNEL = "${site.name}"

# Problem sizes: the dimensions differ and include odd values${dtypes.length ? `; the dtypes are those the kernel is written for (${dtypes.join(', ')})` : ''}.
SHAPES = ${shapesLiteral(shapes)}

# Tensors the kernel only writes (poisoned before every call), and those it reads and writes.
OUTPUTS = [${t.returnsNew ? '' : outputs.join(', ')}]
INPLACE = [${t.returnsNew ? '' : inplace.join(', ')}]


def inputs(shape, seed):
    g = torch.Generator(device="cuda").manual_seed(seed)
    return (
${lines.join('\n')}
    )


${launch}${referenceText(t.args.map((a) => pyName(a.name)), t.reference)}`;
  return { text, how: t.launcher ? `from its launcher ${t.launcher} and how the kernel indexes its tensors` : 'from how the kernel indexes its tensors', reference: t.reference, estimate, notes };
}

function header(sourceName: string, kernel: string, body: Body): string {
  const lines = [
    `# KernelEvolve spec for ${kernel} in ${sourceName}, drafted by KernelEvolve ${body.how}.`,
    '# Review it before evolving: the shapes, the inputs and the way launch() calls the kernel must match how',
    '# the kernel is really used. See docs/harness.md in KernelEvolve for every field.',
    body.reference
      ? `# Reference: ${body.reference.what}.`
      : "# Reference: none could be derived from the kernel, so candidates are compared with the baseline's own outputs;\n# check those once, or write reference(*args).",
    ...(body.estimate ? [`# Cost: ${body.estimate.line}.`] : []),
    ...(body.estimate?.warning ? [`# WARNING: ${body.estimate.warning}`] : []),
    ...body.notes.map((n) => `# Note: ${n}`),
  ];
  return lines.join('\n') + '\n';
}

/** The `extern "C"` function of a CUDA file that launches the `__global__` kernel. */
function cudaLauncher(locator: KernelLocator, text: string, kernel: string): string | undefined {
  return locator.find(text, 'cpp').find((k) => k.kind === 'cpp' && new RegExp(`\\b${kernel}\\s*<<<`).test(text.slice(k.start, k.end)))?.name;
}

/** A spec next to the source, named for the kernel. `callers` are texts of workspace files that use the kernel. */
export function draftSpec(locator: KernelLocator, site: KernelSite, sourcePath: string, sourceText: string, callers: readonly string[] = []): SpecDraft {
  const sourceName = path.basename(sourcePath);
  const body = locator.withTree(sourceText, site.kind === 'triton' ? 'python' : 'cpp', (root) => {
    if (site.kind === 'triton') {
      const t = tritonKernelAccess(root, site.name);
      return t && tritonBody(t, site, sourceName, callers);
    }
    const launcher = site.kind === 'cuda' ? cudaLauncher(locator, sourceText, site.name) : undefined;
    const a = cppKernelAccess(root, launcher ?? site.name);
    const kernelAccess = launcher ? cppKernelAccess(root, site.name) : a;
    if (a && kernelAccess && launcher) {
      // The launcher's parameters take the lengths the kernel indexes under the same names.
      for (const p of a.params) {
        const q = kernelAccess.params.find((x) => x.name === p.name && x.pointer === p.pointer);
        if (q) Object.assign(p, { extent: q.extent ?? p.extent, role: q.role ?? p.role, isSize: q.isSize ?? p.isSize });
      }
    }
    return a && cppBody(a, site, sourceName, launcher, kernelAccess);
  });
  if (!body) throw new Error(`KernelEvolve could not read ${site.name} in ${sourceName} to draft its spec.`);
  return { fileName: `${site.name}_spec.py`, text: header(sourceName, site.name, body) + body.text, estimate: body.estimate?.line, warning: body.estimate?.warning };
}
