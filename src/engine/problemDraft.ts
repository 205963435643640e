// A KernelBench-format problem drafted from a PyTorch (or numpy) operator: the operator's source copied in (the
// reference and the eager baseline), a Model that calls it, get_inputs() from sizes inferred from call sites
// in the workspace or given by the user, and SHAPES with an odd second size. KernelBench's format, not our
// spec format, because an operator is a model to the harness (ModelNew candidates, the reference's weights
// copied in, torch.compile as a second baseline) and because KernelBench problems and ours then run through
// one path. The file says where it came from, so accepting can write the kernel next to the operator.
import type { Framework, OperatorParam, PythonOperator } from './operatorSource';
import { importLines } from './operatorSource';

export type InputKind = 'array' | 'int' | 'float';

export interface InputSpec {
  name: string;
  kind: InputKind;
  /** Sizes of an array, outermost first. */
  dims?: number[];
  /** numpy/torch dtype name: float32, float16, bfloat16, int64 ... */
  dtype?: string;
  /** The value of a scalar. */
  value?: number;
}

export interface ProblemDraft {
  fileName: string;
  text: string;
  /** Names given to the sizes, in order (n1, n2, ...), with their values. */
  sizes: Array<[string, number]>;
}

export const ORIGIN_MARKER = '# kernelevolve-origin:';

export interface ProblemOrigin {
  moduleFile: string;
  name: string;
  kind: 'function' | 'module';
}

/** Where a drafted problem's operator lives (its origin line), or undefined for other problems. */
export function problemOrigin(text: string): ProblemOrigin | undefined {
  const m = /^# kernelevolve-origin: (\S+)::(\w+) \((function|module)\)$/m.exec(text);
  return m ? { moduleFile: m[1], name: m[2], kind: m[3] as 'function' | 'module' } : undefined;
}

/** Inputs read from a call of the operator in the workspace: `name(x, w)` where `x = torch.randn(64, 128)`. */
export function inputsFromCallSites(op: PythonOperator, texts: string[]): InputSpec[] | undefined {
  const callee = op.kind === 'function' ? op.name : undefined;
  for (const text of texts) {
    let callRe: RegExp;
    if (callee) callRe = new RegExp(`(?<![\\w.])${callee}\\s*\\(([^()]*(?:\\([^()]*\\)[^()]*)*)\\)`, 'g');
    else {
      const inst = new RegExp(`(\\w+)\\s*=\\s*${op.name}\\s*\\(`).exec(text)?.[1];
      if (!inst) continue;
      callRe = new RegExp(`(?<![\\w.])${inst}\\s*\\(([^()]*(?:\\([^()]*\\)[^()]*)*)\\)`, 'g');
    }
    for (const m of text.matchAll(callRe)) {
      if (/^\s*def\s/.test(text.slice(text.lastIndexOf('\n', m.index) + 1, m.index + 1))) continue;
      const args = splitArgs(m[1]);
      if (args.length !== op.params.length) continue;
      const specs = args.map((a, i) => argSpec(op.params[i], a, text));
      if (specs.every((s): s is InputSpec => !!s)) return specs;
    }
  }
  return undefined;
}

function splitArgs(s: string): string[] {
  const out: string[] = [];
  let depth = 0;
  let cur = '';
  for (const ch of s) {
    if ('([{'.includes(ch)) depth++;
    if (')]}'.includes(ch)) depth--;
    if (ch === ',' && depth === 0) {
      out.push(cur.trim());
      cur = '';
    } else cur += ch;
  }
  if (cur.trim()) out.push(cur.trim());
  return out;
}

const CTOR = /(?:torch\.(?:randn|rand|empty|zeros|ones)|np\.random\.(?:randn|rand|standard_normal)|np\.(?:zeros|ones|empty))\s*\(\s*\(?\s*(\d+(?:\s*,\s*\d+)*)/;

function argSpec(param: OperatorParam, arg: string, text: string): InputSpec | undefined {
  if (/^-?\d+$/.test(arg)) return { name: param.name, kind: 'int', value: Number(arg) };
  if (/^-?\d*\.\d*(?:e-?\d+)?$/.test(arg)) return { name: param.name, kind: 'float', value: Number(arg) };
  let expr = arg;
  if (/^\w+$/.test(arg)) {
    const assigned = new RegExp(`^\\s*${arg}\\s*=\\s*(.+)$`, 'm').exec(text);
    if (!assigned) return undefined;
    expr = assigned[1];
  }
  const m = CTOR.exec(expr);
  if (!m) return undefined;
  const dims = m[1].split(',').map((d) => d.trim()).filter(Boolean).map(Number);
  if (!dims.length || dims.some((d) => !Number.isInteger(d) || d < 1)) return undefined;
  const dtype = /(?:dtype\s*=\s*|astype\(\s*)(?:torch|np|numpy)\.(\w+)/.exec(expr)?.[1] ?? 'float32';
  return { name: param.name, kind: 'array', dims, dtype };
}

/** "4096, 1024" or "4096x1024 float16": an array's sizes and dtype as a user types them; undefined if not. */
export function parseShapeText(name: string, text: string): InputSpec | undefined {
  const t = text.trim();
  const dtype = /\b(float16|bfloat16|float32|float64|int32|int64)\b/.exec(t)?.[1] ?? 'float32';
  const dims = t.replace(/\b(float16|bfloat16|float32|float64|int32|int64)\b/, '').split(/[\s,x×()]+/).filter(Boolean).map(Number);
  if (!dims.length || dims.some((d) => !Number.isInteger(d) || d < 1)) return undefined;
  return { name, kind: 'array', dims, dtype };
}

/** The problem's odd second size of n: a size that is not a multiple of 2 (tails in every kernel). */
function oddSize(n: number): number {
  if (n < 4) return n;
  return n % 2 === 0 ? n - 1 : n - 2;
}

function torchDtype(dtype: string): string {
  return `torch.${dtype}`;
}

export function draftProblem(input: {
  operator: PythonOperator;
  /** The operator's file, as it stands. */
  moduleText: string;
  /** The operator's file name (its base name). */
  moduleFile: string;
  inputs: InputSpec[];
  /** __init__'s arguments for a module operator, as Python expressions. */
  initArgs?: string[];
}): ProblemDraft {
  const { operator: op, moduleText, moduleFile, inputs } = input;
  const fw: Framework = op.framework;
  const sizes: Array<[string, number]> = [];
  const sizeName = (n: number): string => {
    const known = sizes.find(([, v]) => v === n);
    if (known) return known[0];
    const name = `n${sizes.length + 1}`;
    sizes.push([name, n]);
    return name;
  };
  const inputExprs = inputs.map((s) => {
    if (s.kind !== 'array') return String(s.value ?? (s.kind === 'int' ? 1 : 1.0));
    const dims = (s.dims ?? []).map(sizeName);
    const dtype = s.dtype ?? 'float32';
    const floating = /float/.test(dtype);
    if (fw === 'torch') {
      return floating ? `torch.randn(${dims.join(', ')}, dtype=${torchDtype(dtype)})`
        : `torch.randint(0, 100, (${dims.join(', ')},), dtype=${torchDtype(dtype)})`;
    }
    return floating ? `np.random.randn(${dims.join(', ')}).astype(np.${dtype})`
      : `np.random.randint(0, 100, size=(${dims.join(', ')},)).astype(np.${dtype})`;
  });
  const initExprs = (input.initArgs ?? []).map((a) => {
    const n = Number(a);
    return Number.isInteger(n) && sizes.some(([, v]) => v === n) ? sizeName(n) : a;
  });
  const imports = importLines(moduleText).filter((l) => !/^from\s+\./.test(l));
  const need = fw === 'torch' ? ['import torch', 'import torch.nn as nn'] : ['import numpy as np'];
  for (const n of need) if (!imports.some((l) => l.replace(/\s+/g, ' ') === n)) imports.push(n);
  const source = moduleText.slice(op.start, op.end).trimEnd();
  const params = op.params.map((p) => p.name).join(', ');
  const model = op.kind === 'function'
    ? (fw === 'torch'
      ? ['class Model(nn.Module):', `    """The reference and the eager baseline: ${op.name} as written in ${moduleFile}."""`, '',
        '    def __init__(self):', '        super().__init__()', '', `    def forward(self, ${params}):`, `        return ${op.name}(${params})`]
      : ['class Model:', `    """The reference and the baseline: ${op.name} as written in ${moduleFile}."""`, '',
        '    def __init__(self):', '        pass', '', `    def forward(self, ${params}):`, `        return ${op.name}(${params})`])
    : [`class Model(${op.name}):`, `    """The reference and the eager baseline: ${op.name} as written in ${moduleFile}."""`];
  const odd = sizes.map(([name, v]) => [name, oddSize(v)] as [string, number]);
  const shapeDict = (pairs: Array<[string, number]>) => `{${pairs.map(([n, v]) => `"${n}": ${v}`).join(', ')}}`;
  const shapes = sizes.length && odd.some(([, v], i) => v !== sizes[i][1]) ? [shapeDict(sizes), shapeDict(odd)] : [shapeDict(sizes)];
  const text = [
    `"""KernelBench-format problem for ${op.name} (${moduleFile}), drafted by KernelEvolve: review the sizes and inputs,`,
    'then evolve it. Model is the reference and the baseline; candidates define ModelNew with the same __init__',
    'arguments and forward inputs (see docs/kernelbench.md)."""',
    `${ORIGIN_MARKER} ${moduleFile}::${op.name} (${op.kind})`,
    ...imports,
    '',
    '# The operator, copied from ' + moduleFile + ' (edit the original; draft again if it changes).',
    source,
    '',
    '',
    '# Sizes (module-level constants that get_inputs() reads); SHAPES lists every size the kernel is judged on.',
    ...sizes.map(([n, v]) => `${n} = ${v}`),
    `SHAPES = [${shapes.join(', ')}]`,
    '',
    '',
    ...model,
    '',
    '',
    'def get_inputs():',
    `    return [${inputExprs.join(', ')}]`,
    '',
    '',
    'def get_init_inputs():',
    `    return [${initExprs.join(', ')}]`,
    '',
  ].join('\n');
  const stem = moduleFile.replace(/\.py$/, '');
  return { fileName: `${stem}_${op.name}_problem.py`, text, sizes };
}
