// What a C/C++ kernel computes, where its syntax says so plainly enough to write an independent reference
// in numpy (float64): a matrix product (`C[..] += A[..] * B[..]` over three sizes, row-major or transposed)
// or an element-wise formula (`y[i] = a * x[i] + y[i]`). Anything else has no drafted reference: the spec
// then compares candidates with the baseline's own outputs, and its header says so.
import type { Node } from 'web-tree-sitter';
import type { CParam, CppKernelAccess } from './cppKernelAccess';

export interface DraftedReference {
  /** One line of what it computes, for the spec's header. */
  what: string;
  /** The body of `def reference(<params>):`, indented by four spaces. */
  body: string[];
}

function named(n: Node | null | undefined): Node[] {
  return (n?.namedChildren ?? []).filter((c): c is Node => !!c);
}

function unwrap(n: Node | null | undefined): Node | null {
  while (n && (n.type === 'parenthesized_expression' || n.type === 'cast_expression')) {
    n = n.type === 'cast_expression' ? n.childForFieldName('value') : n.namedChildren[0] ?? null;
  }
  return n ?? null;
}

function all(n: Node, type: string): Node[] {
  return n.descendantsOfType(type).filter((c): c is Node => !!c);
}

function localDefs(body: Node): Map<string, Node> {
  const defs = new Map<string, Node>();
  for (const d of all(body, 'init_declarator')) {
    const name = d.childForFieldName('declarator')?.text;
    const value = d.childForFieldName('value');
    if (name && value) defs.set(name, value);
  }
  return defs;
}

interface Subscript { param: CParam; index: Node }

function subscriptOf(n: Node | null, params: Map<string, CParam>, defs: Map<string, Node>): Subscript | undefined {
  let e = unwrap(n);
  if (e?.type === 'identifier' && defs.has(e.text)) e = unwrap(defs.get(e.text));
  if (e?.type !== 'subscript_expression') return undefined;
  const param = params.get(e.childForFieldName('argument')?.text ?? '');
  const index = named(e.childForFieldName('indices'))[0] ?? e.childForFieldName('index');
  return param?.pointer && index ? { param, index } : undefined;
}

/** The size symbol that multiplies the row index in `r * S + c` (the row stride), if the index has that form. */
function rowStride(index: Node, sizes: Set<string>): string | undefined {
  const e = unwrap(index);
  if (e?.type !== 'binary_expression' || e.childForFieldName('operator')?.type !== '+') return undefined;
  for (const side of [e.childForFieldName('left'), e.childForFieldName('right')]) {
    const s = unwrap(side);
    if (s?.type !== 'binary_expression' || s.childForFieldName('operator')?.type !== '*') continue;
    const f = [unwrap(s.childForFieldName('left'))?.text, unwrap(s.childForFieldName('right'))?.text].find((t) => t && sizes.has(t));
    if (f) return f;
  }
  return undefined;
}

/** Two distinct size symbols whose product is the extent, e.g. M*K -> [M, K]. */
function twoDims(p: CParam): [string, string] | undefined {
  const s = p.extent?.symbols();
  if (!p.extent || s?.length !== 2) return undefined;
  return p.extent.toString() === `${s[0]}*${s[1]}` ? [s[0], s[1]] : undefined;
}

function matmulReference(access: CppKernelAccess): DraftedReference | undefined {
  const params = new Map(access.params.map((p) => [p.name, p]));
  const sizes = new Set(access.params.filter((p) => p.isSize).map((p) => p.name));
  const defs = localDefs(access.body);
  for (const asg of all(access.body, 'assignment_expression')) {
    if (asg.childForFieldName('operator')?.type !== '+=') continue;
    const target = unwrap(asg.childForFieldName('left'));
    // `acc += A[..] * B[..]` followed by `C[..] = acc` is the same product through a register.
    const stored = target?.type === 'identifier' ? all(access.body, 'assignment_expression')
      .find((w) => unwrap(w.childForFieldName('right'))?.text === target.text && unwrap(w.childForFieldName('left'))?.type === 'subscript_expression') : undefined;
    const c = subscriptOf(stored ? stored.childForFieldName('left') : target, params, defs);
    const prod = unwrap(asg.childForFieldName('right'));
    if (!c || prod?.type !== 'binary_expression' || prod.childForFieldName('operator')?.type !== '*') continue;
    const a = subscriptOf(prod.childForFieldName('left'), params, defs);
    const b = subscriptOf(prod.childForFieldName('right'), params, defs);
    if (!a || !b || a.param === b.param) continue;
    const [da, db, dc] = [twoDims(a.param), twoDims(b.param), twoDims(c.param)];
    if (!da || !db || !dc) continue;
    const inner = da.find((d) => db.includes(d) && !dc.includes(d));
    const rows = da.find((d) => d !== inner);
    const cols = db.find((d) => d !== inner);
    if (!inner || !rows || !cols || !dc.includes(rows) || !dc.includes(cols)) continue;
    // Row-major stores a row of R x S contiguously: its index is r * S + c.
    const operand = (s: Subscript, r: string, k: string) => {
      const stride = rowStride(s.index, sizes);
      return stride === k ? `${s.param.name}.reshape(${r}, ${k})` : stride === r ? `${s.param.name}.reshape(${k}, ${r}).T` : undefined;
    };
    const left = operand(a, rows, inner);
    const right = operand(b, inner, cols);
    const out = rowStride(c.index, sizes);
    if (!left || !right || (out !== cols && out !== rows)) continue;
    const product = `${left}.astype(np.float64) @ ${right}.astype(np.float64)`;
    const arranged = out === cols ? `(${product})` : `(${product}).T`;
    const total = c.param.role === 'inplace' ? `${c.param.name}.astype(np.float64) + ${arranged}.reshape(-1)` : `${arranged}.reshape(-1)`;
    return {
      what: `${c.param.name} = ${a.param.name} @ ${b.param.name} (${rows}x${inner} times ${inner}x${cols}), in float64`,
      body: [`return (${total}).astype(${c.param.name}.dtype)`],
    };
  }
  return undefined;
}

const NUMPY_FUNCTIONS: Record<string, string> = {
  exp: 'np.exp', expf: 'np.exp', log: 'np.log', logf: 'np.log', sqrt: 'np.sqrt', sqrtf: 'np.sqrt', tanh: 'np.tanh', tanhf: 'np.tanh',
  fabs: 'np.abs', fabsf: 'np.abs', abs: 'np.abs', fmax: 'np.maximum', fmaxf: 'np.maximum', max: 'np.maximum', fmin: 'np.minimum',
  fminf: 'np.minimum', min: 'np.minimum', sin: 'np.sin', sinf: 'np.sin', cos: 'np.cos', cosf: 'np.cos', pow: 'np.power', powf: 'np.power',
};

/** The C expression as numpy over whole arrays (each read `x[i]` at the written index becomes `x`). */
function numpyOf(n: Node | null, ctx: { params: Map<string, CParam>; defs: Map<string, Node>; index: string; depth: number }): string | undefined {
  const e = unwrap(n);
  if (!e || ctx.depth > 20) return undefined;
  const sub = (m: Node | null) => numpyOf(m, { ...ctx, depth: ctx.depth + 1 });
  switch (e.type) {
    case 'number_literal':
      return e.text.replace(/[fFlLuU]+$/, '');
    case 'identifier': {
      const p = ctx.params.get(e.text);
      if (p && !p.pointer) return p.name;
      return ctx.defs.has(e.text) ? (() => { const v = sub(ctx.defs.get(e.text)!); return v && `(${v})`; })() : undefined;
    }
    case 'subscript_expression': {
      const p = ctx.params.get(e.childForFieldName('argument')?.text ?? '');
      const index = (named(e.childForFieldName('indices'))[0] ?? e.childForFieldName('index'))?.text;
      return p?.pointer && index === ctx.index ? `${p.name}.astype(np.float64)` : undefined;
    }
    case 'binary_expression': {
      const op = e.childForFieldName('operator')?.type ?? '';
      if (!['+', '-', '*', '/', '<', '>', '<=', '>='].includes(op)) return undefined;
      const l = sub(e.childForFieldName('left'));
      const r = sub(e.childForFieldName('right'));
      return l && r ? `${l} ${op} ${r}` : undefined;
    }
    case 'unary_expression': {
      const op = e.childForFieldName('operator')?.type;
      const a = sub(e.childForFieldName('argument'));
      return op === '-' && a ? `-${a}` : undefined;
    }
    case 'call_expression': {
      const fn = NUMPY_FUNCTIONS[(e.childForFieldName('function')?.text ?? '').replace(/^std::/, '')];
      const args = named(e.childForFieldName('arguments')).map(sub);
      return fn && args.every(Boolean) ? `${fn}(${args.join(', ')})` : undefined;
    }
    case 'conditional_expression': {
      const [c, a, b] = [e.childForFieldName('condition'), e.childForFieldName('consequence'), e.childForFieldName('alternative')].map(sub);
      return c && a && b ? `np.where(${c}, ${a}, ${b})` : undefined;
    }
    default:
      return undefined;
  }
}

function elementwiseReference(access: CppKernelAccess): DraftedReference | undefined {
  const written = access.params.filter((p) => p.pointer && p.role !== 'input');
  if (written.length !== 1) return undefined;
  const out = written[0];
  const params = new Map(access.params.map((p) => [p.name, p]));
  const writes = all(access.body, 'assignment_expression').filter((a) => {
    const l = unwrap(a.childForFieldName('left'));
    return l?.type === 'subscript_expression' && l.childForFieldName('argument')?.text === out.name;
  });
  if (writes.length !== 1 || writes[0].childForFieldName('operator')?.type !== '=') return undefined;
  const left = unwrap(writes[0].childForFieldName('left'))!;
  const index = (named(left.childForFieldName('indices'))[0] ?? left.childForFieldName('index'))?.text ?? '';
  const expr = numpyOf(writes[0].childForFieldName('right'), { params, defs: localDefs(access.body), index, depth: 0 });
  if (!expr || !/\.astype\(np\.float64\)/.test(expr)) return undefined;
  return { what: `${out.name}[i] = ${writes[0].childForFieldName('right')!.text.replace(/\s+/g, ' ')}, in float64`, body: [`return (${expr}).astype(${out.name}.dtype)`] };
}

export function cppReference(access: CppKernelAccess): DraftedReference | undefined {
  return matmulReference(access) ?? elementwiseReference(access);
}
