// Drafts a spec for a kernel that has none: from its signature and, for Triton, from the launcher in the
// same file that calls it. The draft is a starting point the user reviews before any run; when an LLM is
// configured it refines the draft (specDraftLlm.ts).
import * as path from 'node:path';
import type { KernelSite } from './kernelLocator';

export interface SpecDraft {
  fileName: string;
  text: string;
}

interface CParam { name: string; type: string; pointer: boolean; isConst: boolean }

function cParams(signature: string): CParam[] {
  const inner = signature.slice(signature.indexOf('(') + 1, signature.lastIndexOf(')')).trim();
  if (!inner || inner === 'void') return [];
  return inner.split(',').map((p) => {
    const t = p.replace(/__restrict__|__restrict|restrict/g, '').trim();
    const m = /([A-Za-z_]\w*)\s*(\[\s*\])?$/.exec(t);
    const name = m?.[1] ?? 'arg';
    const type = t.slice(0, m?.index ?? t.length).trim();
    return { name, type, pointer: type.includes('*') || !!m?.[2], isConst: /\bconst\b/.test(type) };
  });
}

const NP_TYPES: [RegExp, string, string][] = [
  [/\bdouble\b/, 'np.float64', 'ctypes.c_double'],
  [/\bfloat\b/, 'np.float32', 'ctypes.c_float'],
  [/\b(int64_t|long long|long)\b/, 'np.int64', 'ctypes.c_int64'],
  [/\b(uint8_t|unsigned char)\b/, 'np.uint8', 'ctypes.c_uint8'],
  [/\b(int|int32_t)\b/, 'np.int32', 'ctypes.c_int'],
  [/\b(size_t|uint64_t)\b/, 'np.uint64', 'ctypes.c_size_t'],
];

function npType(type: string): [string, string] {
  const hit = NP_TYPES.find(([re]) => re.test(type));
  return hit ? [hit[1], hit[2]] : ['np.float32', 'ctypes.c_float'];
}

function header(kind: string, source: string, kernel: string, how: string): string {
  return `# KernelEvolve spec for ${kernel} in ${source} — drafted by KernelEvolve (${how}).\n` +
    `# Review it before evolving: the shapes, the inputs and the way launch() calls the kernel must match how\n` +
    `# the kernel is really used. See docs/harness.md in KernelEvolve for every field.\n`;
}

function cppDraft(site: KernelSite, sourceName: string): string {
  const params = cParams(site.signature);
  const sizes = params.filter((p) => !p.pointer && /\b(int|long|size_t|int64_t|int32_t)\b/.test(p.type)).map((p) => p.name);
  const dims = sizes.length ? sizes : ['n'];
  const shapes = [61, 250, 509].map((size) => `{${dims.map((d) => `"${d}": ${size}`).join(', ')}}`);
  const elems = dims.map((d) => `shape["${d}"]`).join(' * ');
  const outputs: number[] = [];
  const lines: string[] = [];
  params.forEach((p, i) => {
    const [np] = npType(p.type);
    if (p.pointer) {
      if (!p.isConst) outputs.push(i);
      lines.push(`        rng.standard_normal(${elems}).astype(${np}),  # ${p.name}`);
    } else if (dims.includes(p.name)) {
      lines.push(`        shape["${p.name}"],  # ${p.name}`);
    } else {
      lines.push(`        ${np.startsWith('np.float') ? '1.0' : '1'},  # ${p.name}`);
    }
  });
  const argtypes = params.map((p) => p.pointer ? 'ctypes.c_void_p' : npType(p.type)[1]).join(', ');
  const callArgs = params.map((p, i) => p.pointer ? `args[${i}].ctypes.data` : `args[${i}]`).join(', ');
  const ret = outputs.length === 1 ? `args[${outputs[0]}]` : `tuple(args[i] for i in INPLACE)`;
  return `import ctypes

import numpy as np

BACKEND = "${site.kind === 'cuda' ? 'cuda' : 'cpp'}"
SOURCE = "${sourceName}"
KERNEL = "${site.name}"

# Problem sizes: include odd ones, they catch tail bugs.
SHAPES = [${shapes.join(', ')}]

# Arrays the kernel may read and write (from the non-const pointers); every other array must come back
# unchanged. Move an index to OUTPUTS = [...] when the kernel only writes it (it is then poisoned before calls).
INPLACE = [${outputs.join(', ')}]


def inputs(shape, seed):
    rng = np.random.default_rng(seed)
    return (
${lines.join('\n')}
    )


def launch(k, *args):
    fn = getattr(k, KERNEL)
    fn.argtypes = [${argtypes}]
    fn.restype = None
    fn(${callArgs})
    return ${ret}
`;
}

/** The Python function in the file that launches the Triton kernel (`kernel[grid](...)`). */
export function findTritonLauncher(text: string, kernel: string): { name: string; params: string[] } | undefined {
  const re = /^def\s+([A-Za-z_]\w*)\s*\(([^)]*)\)[^:]*:/gm;
  const defs = [...text.matchAll(re)];
  for (let i = 0; i < defs.length; i++) {
    const body = text.slice(defs[i].index!, defs[i + 1]?.index ?? text.length);
    if (new RegExp(`\\b${kernel}\\s*\\[`).test(body)) {
      const params = defs[i][2].split(',').map((p) => p.split(/[:=]/)[0].trim()).filter((p) => p && p !== '*' && !p.startsWith('*'));
      return { name: defs[i][1], params };
    }
  }
  return undefined;
}

function tritonDraft(site: KernelSite, sourceName: string, text: string): string {
  const launcher = findTritonLauncher(text, site.name);
  const params = launcher?.params ?? site.params.filter((p) => !/^[A-Z_0-9]+$/.test(p));
  const tensors = params.filter((p) => !/^(n|m|k|n_\w+|\w+_size|\w+_len)$/i.test(p));
  const launch = launcher
    ? `def launch(k, *args):\n    # ${launcher.name} is the launcher in ${sourceName} that calls ${site.name}.\n    return k.${launcher.name}(*args)\n`
    : `def launch(k, *args):\n    # No launcher calling ${site.name} was found in ${sourceName}: write the grid and the call here.\n    (${params.join(', ')}${params.length === 1 ? ',' : ''}) = args\n    grid = (triton.cdiv(args[0].numel(), 1024),)\n    k.${site.name}[grid](*args)\n    return args[0]\n`;
  return `import torch
import triton

BACKEND = "triton"
SOURCE = "${sourceName}"
KERNEL = "${site.name}"

# Problem sizes: include odd ones, they catch tail bugs.
SHAPES = [{"n": 4093}, {"n": 65536}, {"n": 1048573}]


def inputs(shape, seed):
    g = torch.Generator(device="cuda").manual_seed(seed)
    return (
${tensors.map((t) => `        torch.randn(shape["n"], device="cuda", generator=g),  # ${t}`).join('\n') || '        torch.randn(shape["n"], device="cuda", generator=g),'}
    )


${launch}`;
}

/** A spec next to the source, named for the kernel. */
export function draftSpec(site: KernelSite, sourcePath: string, sourceText: string): SpecDraft {
  const sourceName = path.basename(sourcePath);
  const how = site.kind === 'triton' ? (findTritonLauncher(sourceText, site.name) ? 'from its launcher and signature' : 'from its signature') : 'from its signature';
  const body = site.kind === 'triton' ? tritonDraft(site, sourceName, sourceText) : cppDraft(site, sourceName);
  return { fileName: `${site.name}_spec.py`, text: header(site.kind, sourceName, site.name, how) + body };
}
