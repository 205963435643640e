// PyTorch (or numpy) operators in a Python file that have no kernel yet: top-level functions and nn.Module
// classes whose code computes with torch, torch.nn.functional or numpy. What "Write a kernel for this"
// offers, and what its problem draft copies (the operator's source and the module's imports). A kernel (a
// `@triton.jit` function, a numba one) is not an operator, nor is a launcher of a kernel of the same file: both
// have a kernel already, which Evolve improves.

export type Framework = 'torch' | 'numpy';

export interface OperatorParam {
  name: string;
  /** The annotation as written (`torch.Tensor`, `np.ndarray`, `int`, `float`), if any. */
  annotation?: string;
  /** The default as written, if any. */
  defaultText?: string;
}

export interface PythonOperator {
  /** The function's name, or the class's (whose forward is the operator). */
  name: string;
  kind: 'function' | 'module';
  framework: Framework;
  /** 0-based line of the `def`/`class` (its first decorator, when decorated). */
  startLine: number;
  /** Character offsets of the whole definition in the file. */
  start: number;
  end: number;
  /** The function's parameters, or forward's without self. */
  params: OperatorParam[];
  /** __init__'s parameters without self (modules only). */
  initParams: OperatorParam[];
}

const TORCH_USE = /\b(?:torch\.|F\.|nn\.functional\.)\w+|\.(?:matmul|softmax|sum|mean|exp|relu|sigmoid|tanh|pow|sqrt|rsqrt|amax|max|norm)\(/;
const NUMPY_USE = /\bnp\.\w+\(|\bnumpy\.\w+\(/;

/** Top-level statements of a Python file as [start, end) character ranges with their first line. */
function topLevelBlocks(text: string): Array<{ start: number; end: number; line: number; head: string }> {
  const lines = text.split('\n');
  const blocks: Array<{ start: number; end: number; line: number; head: string }> = [];
  let offset = 0;
  let pendingDecorators: { start: number; line: number } | undefined;
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i];
    const at = offset;
    offset += line.length + 1;
    // an indented line, a comment, or the closing bracket of a statement spread over lines continues it
    if (!/^\S/.test(line) || /^[#)\]}]/.test(line)) continue;
    if (/^@/.test(line)) {
      pendingDecorators ??= { start: at, line: i };
      continue;
    }
    if (blocks.length) blocks[blocks.length - 1].end = pendingDecorators?.start ?? at;
    blocks.push({ start: pendingDecorators?.start ?? at, end: text.length, line: pendingDecorators?.line ?? i, head: line });
    pendingDecorators = undefined;
  }
  // a block ends before the blank lines and comments that follow it
  for (const b of blocks) b.end = b.start + text.slice(b.start, b.end).replace(/(?:\n[ \t]*(?:#[^\n]*)?)*\s*$/, '').length;
  return blocks;
}

/** The parameters of a `def` whose header starts at `from` (the parenthesised list, nested brackets and all). */
export function parseParams(text: string, from: number): OperatorParam[] {
  const open = text.indexOf('(', from);
  if (open < 0) return [];
  let depth = 0;
  let close = open;
  for (let i = open; i < text.length; i++) {
    const ch = text[i];
    if (ch === '(' || ch === '[' || ch === '{') depth++;
    else if (ch === ')' || ch === ']' || ch === '}') {
      depth--;
      if (depth === 0) {
        close = i;
        break;
      }
    }
  }
  const inner = text.slice(open + 1, close);
  const parts: string[] = [];
  let cur = '';
  depth = 0;
  for (const ch of inner) {
    if ('([{'.includes(ch)) depth++;
    if (')]}'.includes(ch)) depth--;
    if (ch === ',' && depth === 0) {
      parts.push(cur);
      cur = '';
    } else cur += ch;
  }
  parts.push(cur);
  return parts.map((p) => p.trim()).filter((p) => p && p !== '/' && p !== '*' && !p.startsWith('*')).map((p) => {
    const m = /^(\w+)\s*(?::\s*([^=]+?))?\s*(?:=\s*(.+))?$/s.exec(p);
    return m ? { name: m[1], annotation: m[2]?.trim(), defaultText: m[3]?.trim() } : { name: p };
  });
}

function methodStart(block: string, name: string): number {
  const m = new RegExp(`^[ \\t]+def[ \\t]+${name}[ \\t]*\\(`, 'm').exec(block);
  return m ? m.index : -1;
}

function frameworkOf(code: string, fileText: string): Framework | undefined {
  const importsTorch = /^\s*(?:import\s+torch\b|from\s+torch\b)/m.test(fileText);
  const importsNumpy = /^\s*(?:import\s+numpy\b|from\s+numpy\b)/m.test(fileText);
  if (importsTorch && TORCH_USE.test(code)) return 'torch';
  if (importsNumpy && NUMPY_USE.test(code)) return 'numpy';
  return undefined;
}

/** A decorator that makes the function a kernel: `@triton.jit`, `@triton.autotune(...)`, `@jit`, `@numba.njit`,
 *  `@cuda.jit` (not `@torch.jit.script`, which leaves an operator in PyTorch). */
const KERNEL_DECORATOR = /^@\s*(?:triton\.(?:jit|autotune|heuristics)|(?:[\w.]+\.)?n?jit|(?:numba\.)?cuda\.jit)\s*(?:\(|$)/m;

/** The file's top-level kernels (Triton or numba JIT functions), by name, in file order. */
export function pythonKernelNames(text: string): string[] {
  return topLevelBlocks(text).flatMap((b) => {
    const fn = /^(?:async\s+)?def\s+(\w+)\s*\(/.exec(b.head);
    const decorators = text.slice(b.start, b.start + text.slice(b.start, b.end).indexOf(b.head));
    return fn && KERNEL_DECORATOR.test(decorators) ? [fn[1]] : [];
  });
}

/** Every operator of the file that computes with torch or numpy, in file order. */
export function findOperators(text: string): PythonOperator[] {
  const out: PythonOperator[] = [];
  const kernels = pythonKernelNames(text);
  // `kernel[grid](...)`: the code launches one of the file's kernels
  const launch = kernels.length ? new RegExp(`\\b(?:${kernels.join('|')})\\s*\\[`) : undefined;
  for (const b of topLevelBlocks(text)) {
    const code = text.slice(b.start, b.end);
    const fn = /^(?:async\s+)?def\s+(\w+)\s*\(/.exec(b.head);
    const cls = /^class\s+(\w+)\s*\(([^)]*)\)/.exec(b.head);
    if (launch?.test(code) || (fn && kernels.includes(fn[1]))) continue;
    if (fn) {
      if (fn[1].startsWith('_') && fn[1] !== '__call__') continue;
      const framework = frameworkOf(code, text);
      if (!framework) continue;
      const defAt = b.start + code.indexOf(b.head);
      out.push({ name: fn[1], kind: 'function', framework, startLine: b.line, start: b.start, end: b.end,
        params: parseParams(text, defAt), initParams: [] });
    } else if (cls && /\bModule\b/.test(cls[2])) {
      const fwd = methodStart(code, 'forward');
      if (fwd < 0) continue;
      const framework = frameworkOf(code, text);
      if (!framework) continue;
      const init = methodStart(code, '__init__');
      const drop = (ps: OperatorParam[]) => ps.filter((p, i) => !(i === 0 && p.name === 'self'));
      out.push({ name: cls[1], kind: 'module', framework, startLine: b.line, start: b.start, end: b.end,
        params: drop(parseParams(text, b.start + fwd)), initParams: init >= 0 ? drop(parseParams(text, b.start + init)) : [] });
    }
  }
  return out;
}

/** The file's top-level import lines, as written. */
export function importLines(text: string): string[] {
  return text.split('\n').filter((l) => /^(?:import\s+\S|from\s+\S+\s+import\s)/.test(l));
}
