// How a C/C++/CUDA kernel uses its parameters, read from its syntax tree: how far it indexes each pointer
// (`A[i*K + k]` inside `i < M`, `k < K` is M*K elements), which pointers it only writes, reads and writes,
// or only reads, which integer parameters are sizes, and how many innermost iterations one call makes.
// The spec drafter sizes the arrays from this instead of guessing one length for all of them.
import type { Node } from 'web-tree-sitter';
import { SizePolynomial } from './sizePolynomial';

export type ArrayRole = 'input' | 'output' | 'inplace';

export interface CParam {
  index: number;
  name: string;
  /** The declared type without the name, e.g. `const float*`. */
  type: string;
  pointer: boolean;
  /** Pointers: the element type (`float`, `__half`); scalars: the type. */
  element: string;
  /** Pointers: how many elements the kernel reaches (undefined when it could not be read). */
  extent?: SizePolynomial;
  role?: ArrayRole;
  /** Pointers: the extent's sizes in the order the kernel lays them out (`M, K` for `A[i * K + k]`). */
  layout?: string[];
  /** Integer scalars that bound a loop or an index. */
  isSize?: boolean;
}

export interface CppKernelAccess {
  params: CParam[];
  /** Innermost loop iterations per call, when the kernel's loops say (CPU kernels). */
  work?: SizePolynomial;
  /** The function body, for what the kernel computes (cppReference.ts). */
  body: Node;
  /** Resolves an index expression to its largest value (exclusive bounds applied). */
  maxOf(node: Node): SizePolynomial | undefined;
}

/** The values every size symbol takes when two candidate bounds are compared (`min(i0 + 64, M)` is M). */
const SAMPLE_SIZE = 1000;

function sample(p: SizePolynomial): number {
  return p.evaluate(Object.fromEntries(p.symbols().map((s) => [s, SAMPLE_SIZE])));
}

function smallest(ps: (SizePolynomial | undefined)[]): SizePolynomial | undefined {
  return ps.filter((p): p is SizePolynomial => !!p).sort((a, b) => sample(a) - sample(b))[0];
}

function largest(ps: (SizePolynomial | undefined)[]): SizePolynomial | undefined {
  return ps.filter((p): p is SizePolynomial => !!p).sort((a, b) => sample(b) - sample(a))[0];
}

const INTEGER_TYPE = /\b(int|long|short|size_t|ssize_t|unsigned|u?int(8|16|32|64)_t|ptrdiff_t|index_t)\b/;

function named(n: Node | null): Node[] {
  return (n?.namedChildren ?? []).filter((c): c is Node => !!c);
}

function walk(n: Node, visit: (n: Node) => void): void {
  visit(n);
  for (const c of named(n)) walk(c, visit);
}

function unwrap(n: Node | null): Node | null {
  while (n && (n.type === 'parenthesized_expression' || n.type === 'cast_expression')) {
    n = n.type === 'cast_expression' ? n.childForFieldName('value') : n.namedChildren[0] ?? null;
  }
  return n;
}

function operatorOf(n: Node): string {
  return n.childForFieldName('operator')?.type ?? '';
}

function declaredName(d: Node | null): string | undefined {
  while (d && d.type !== 'identifier') d = d.childForFieldName('declarator') ?? null;
  return d?.text;
}

function paramsOf(fn: Node): CParam[] {
  let fd: Node | null = fn.childForFieldName('declarator');
  while (fd && fd.type !== 'function_declarator') fd = fd.childForFieldName('declarator');
  return named(fd?.childForFieldName('parameters') ?? null).filter((p) => p.type === 'parameter_declaration').map((p, index) => {
    const decl = p.childForFieldName('declarator');
    const name = declaredName(decl) ?? `arg${index}`;
    const type = p.text.slice(0, decl ? decl.startIndex - p.startIndex : undefined).trim()
      + (decl?.type === 'pointer_declarator' || decl?.type === 'array_declarator' ? '*' : '');
    const pointer = decl?.type === 'pointer_declarator' || decl?.type === 'array_declarator';
    const element = (p.childForFieldName('type')?.text ?? 'float').trim();
    return { index, name, type: type.replace(/\s+/g, ' ').replace(/\b__restrict__\b|\b__restrict\b|\brestrict\b/g, '').trim(), pointer, element };
  });
}

/** File-scope integer constants (`constexpr int BLOCK = 64;`, `#define BLOCK 64`). */
function fileConstants(root: Node): Map<string, number> {
  const out = new Map<string, number>();
  walk(root, (n) => {
    if (n.type === 'preproc_def') {
      const v = Number.parseInt(n.childForFieldName('value')?.text.trim() ?? '', 10);
      const name = n.childForFieldName('name')?.text;
      if (name && Number.isFinite(v)) out.set(name, v);
    } else if (n.type === 'declaration' && (n.parent?.type === 'translation_unit' || n.parent?.type === 'declaration_list')) {
      for (const d of named(n).filter((c) => c.type === 'init_declarator')) {
        const v = integerLiteral(d.childForFieldName('value'));
        const name = d.childForFieldName('declarator')?.text;
        if (name && v !== undefined) out.set(name, v);
      }
    }
  });
  return out;
}

function integerLiteral(n: Node | null): number | undefined {
  if (n?.type !== 'number_literal') return undefined;
  const t = n.text.replace(/[uUlL]+$/, '');
  if (/[.eEfF]/.test(t) && !/^0[xX]/.test(t)) return undefined;
  const v = Number(t);
  return Number.isInteger(v) ? v : undefined;
}

const MIN_FUNCTIONS = /^(std::)?(min|fminf?|MIN)$/;
const MAX_FUNCTIONS = /^(std::)?(max|fmaxf?|MAX)$/;

/** The bounds analysis of one function body. */
class BoundScope {
  readonly defs = new Map<string, Node>();
  readonly loops = new Map<string, Node[]>();
  readonly guards = new Map<string, { bound: Node; inclusive: boolean }[]>();
  private readonly resolving = new Set<string>();

  constructor(private readonly body: Node, private readonly sizes: Set<string>, private readonly constants: Map<string, number>) {
    walk(body, (n) => {
      if (n.type === 'init_declarator') {
        const name = declaredName(n.childForFieldName('declarator'));
        const value = n.childForFieldName('value');
        if (name && value) this.defs.set(name, value);
      }
      if (n.type === 'for_statement') {
        const name = loopVariable(n);
        if (name) this.loops.set(name, [...(this.loops.get(name) ?? []), n]);
      }
      if (n.type === 'if_statement' || n.type === 'while_statement') {
        const cond = n.childForFieldName('condition');
        const exits = n.type === 'if_statement' && /^\{?\s*return\b/.test(n.childForFieldName('consequence')?.text.trim() ?? '');
        if (cond) for (const cmp of comparisons(cond)) this.addGuard(cmp, exits);
      }
    });
  }

  private addGuard(cmp: Node, exits: boolean): void {
    const op = operatorOf(cmp);
    const l = unwrap(cmp.childForFieldName('left'));
    const r = unwrap(cmp.childForFieldName('right'));
    if (!l || !r) return;
    // `v < E` (inside the if) or `v >= E` (return when out of range) bound v by E.
    const within = op === '<' || op === '<=' ? [l, r, op === '<='] : op === '>' || op === '>=' ? [r, l, op === '>='] : undefined;
    const outside = op === '>=' || op === '>' ? [l, r, op === '>'] : op === '<=' || op === '<' ? [r, l, op === '<'] : undefined;
    const pick = exits ? outside : within;
    if (!pick) return;
    const [v, bound, inclusive] = pick as [Node, Node, boolean];
    if (v.type !== 'identifier') return;
    this.guards.set(v.text, [...(this.guards.get(v.text) ?? []), { bound, inclusive }]);
  }

  /** The exclusive upper bound of a loop or guarded variable. */
  upper(name: string, only?: Node): SizePolynomial | undefined {
    // A variable that several loops reuse reaches the furthest of their bounds.
    const loops = only ? [only] : this.loops.get(name) ?? [];
    const perLoop = loops.map((loop) => smallest(comparisons(loop.childForFieldName('condition')).map((cmp) => this.boundFrom(cmp, name))));
    const fromLoops = largest(perLoop);
    if (only) return fromLoops;
    const guards = (this.guards.get(name) ?? []).map((g) => this.bumped(this.maxOf(g.bound), g.inclusive));
    return smallest([fromLoops, ...guards]);
  }

  /** The exclusive bound a comparison puts on `name` (`c < n`, `c + 4 <= n`, `n > c`). */
  private boundFrom(cmp: Node, name: string): SizePolynomial | undefined {
    let op = operatorOf(cmp);
    let l = unwrap(cmp.childForFieldName('left'));
    let r = unwrap(cmp.childForFieldName('right'));
    if (op === '>' || op === '>=') [l, r, op] = [r, l, op === '>' ? '<' : '<='];
    if (!l || !r || !(op === '<' || op === '<=' || op === '!=')) return undefined;
    let slack: SizePolynomial | undefined = SizePolynomial.constant(0);
    if (l.type === 'binary_expression' && operatorOf(l) === '+' && unwrap(l.childForFieldName('left'))?.text === name) {
      slack = this.minOf(l.childForFieldName('right'));
      l = unwrap(l.childForFieldName('left'));
    }
    if (l?.text !== name || !slack) return undefined;
    return this.bumped(this.maxOf(r), op === '<=')?.sub(slack);
  }

  private bumped(p: SizePolynomial | undefined, inclusive: boolean): SizePolynomial | undefined {
    return p && inclusive ? p.add(SizePolynomial.constant(1)) : p;
  }

  private resolve(name: string, fn: () => SizePolynomial | undefined): SizePolynomial | undefined {
    if (this.resolving.has(name)) return undefined;
    this.resolving.add(name);
    try {
      return fn();
    } finally {
      this.resolving.delete(name);
    }
  }

  /** The largest value the expression takes, as a polynomial of the size parameters. */
  maxOf(node: Node | null): SizePolynomial | undefined {
    const n = unwrap(node);
    if (!n) return undefined;
    switch (n.type) {
      case 'number_literal': {
        const v = integerLiteral(n);
        return v === undefined ? undefined : SizePolynomial.constant(v);
      }
      case 'identifier': {
        const name = n.text;
        if (this.sizes.has(name)) return SizePolynomial.symbol(name);
        if (this.constants.has(name)) return SizePolynomial.constant(this.constants.get(name)!);
        return this.resolve(name, () => {
          // The loop that binds the name here (names are reused by sibling loops), else every loop and guard.
          let binding: Node | undefined;
          for (let p = n.parent; p && !binding; p = p.parent) if (p.type === 'for_statement' && loopVariable(p) === name) binding = p;
          const up = binding ? this.upper(name, binding) : this.loops.has(name) || this.guards.has(name) ? this.upper(name) : undefined;
          if (up) return up.sub(SizePolynomial.constant(1));
          const def = this.defs.get(name);
          return def ? this.maxOf(def) : undefined;
        });
      }
      case 'binary_expression': {
        const op = operatorOf(n);
        const l = n.childForFieldName('left');
        const r = n.childForFieldName('right');
        if (op === '+') return both(this.maxOf(l), this.maxOf(r), (a, b) => a.add(b));
        if (op === '-') return both(this.maxOf(l), this.minOf(r), (a, b) => a.sub(b));
        if (op === '*') return both(this.maxOf(l), this.maxOf(r), (a, b) => a.mul(b));
        if (op === '%') return this.maxOf(r)?.sub(SizePolynomial.constant(1));
        if (op === '<<') {
          const shift = this.maxOf(r)?.constantValue;
          return shift === undefined ? undefined : this.maxOf(l)?.mul(SizePolynomial.constant(2 ** shift));
        }
        return undefined;
      }
      case 'call_expression': {
        const fn = n.childForFieldName('function')?.text ?? '';
        if (/^(static_cast|reinterpret_cast)\b/.test(fn)) return this.maxOf(named(n.childForFieldName('arguments'))[0] ?? null);
        const args = named(n.childForFieldName('arguments')).map((a) => this.maxOf(a));
        if (MIN_FUNCTIONS.test(fn)) return smallest(args);
        if (MAX_FUNCTIONS.test(fn)) return args.every(Boolean) ? largest(args) : undefined;
        return undefined;
      }
      case 'conditional_expression':
        return largest([this.maxOf(n.childForFieldName('consequence')), this.maxOf(n.childForFieldName('alternative'))]);
      default:
        return undefined;
    }
  }

  /** The smallest value (indices are taken to start at 0 where the kernel does not say). */
  minOf(node: Node | null): SizePolynomial | undefined {
    const n = unwrap(node);
    if (!n) return undefined;
    if (n.type === 'number_literal') {
      const v = integerLiteral(n);
      return v === undefined ? undefined : SizePolynomial.constant(v);
    }
    if (n.type === 'identifier') {
      if (this.sizes.has(n.text)) return SizePolynomial.symbol(n.text);
      if (this.constants.has(n.text)) return SizePolynomial.constant(this.constants.get(n.text)!);
      return SizePolynomial.constant(0);
    }
    if (n.type === 'binary_expression' && (operatorOf(n) === '+' || operatorOf(n) === '*')) {
      return both(this.minOf(n.childForFieldName('left')), this.minOf(n.childForFieldName('right')), (a, b) => operatorOf(n) === '+' ? a.add(b) : a.mul(b));
    }
    return SizePolynomial.constant(0);
  }
}

function both(a: SizePolynomial | undefined, b: SizePolynomial | undefined, f: (a: SizePolynomial, b: SizePolynomial) => SizePolynomial): SizePolynomial | undefined {
  return a && b ? f(a, b) : undefined;
}

/** The variable a for loop steps: declared or assigned in its initializer, else the one its update changes. */
function loopVariable(loop: Node): string | undefined {
  const init = loop.childForFieldName('initializer');
  if (init?.type === 'declaration') return declaredName(named(init).find((c) => c.type === 'init_declarator') ?? null);
  if (init?.type === 'assignment_expression') return init.childForFieldName('left')?.text;
  const update = loop.childForFieldName('update');
  const target = update?.type === 'update_expression' ? update.childForFieldName('argument') : update?.type === 'assignment_expression' ? update.childForFieldName('left') : undefined;
  return target?.type === 'identifier' ? target.text : undefined;
}

/** The comparisons of a condition, through `&&` and parentheses. */
function comparisons(cond: Node | null): Node[] {
  const n = unwrap(cond?.type === 'condition_clause' ? cond.childForFieldName('value') ?? cond.namedChildren[0] ?? null : cond);
  if (!n || n.type !== 'binary_expression') return [];
  const op = operatorOf(n);
  if (op === '&&') return [...comparisons(n.childForFieldName('left')), ...comparisons(n.childForFieldName('right'))];
  return ['<', '<=', '>', '>=', '!='].includes(op) ? [n] : [];
}

interface Access { param: number; index: Node | null; offset?: Node; write: 'plain' | 'compound' | undefined }

/** Every element access to a pointer parameter (directly, through `*(p + e)`, or through `T* q = p + e`). */
function accesses(body: Node, params: CParam[]): Access[] {
  const byName = new Map(params.filter((p) => p.pointer).map((p) => [p.name, p.index]));
  const aliases = new Map<string, { param: number; offset: Node }>();
  walk(body, (n) => {
    if (n.type !== 'init_declarator' || n.childForFieldName('declarator')?.type !== 'pointer_declarator') return;
    const v = unwrap(n.childForFieldName('value'));
    const name = declaredName(n.childForFieldName('declarator'));
    if (!v || !name) return;
    if (v.type === 'binary_expression' && operatorOf(v) === '+') {
      const l = unwrap(v.childForFieldName('left'));
      const r = v.childForFieldName('right');
      if (l && r && byName.has(l.text)) aliases.set(name, { param: byName.get(l.text)!, offset: r });
    } else if (v.type === 'pointer_expression' && unwrap(v.childForFieldName('argument'))?.type === 'subscript_expression') {
      const s = unwrap(v.childForFieldName('argument'))!;
      const base = s.childForFieldName('argument')?.text ?? '';
      const idx = named(s.childForFieldName('indices'))[0] ?? s.childForFieldName('index');
      if (byName.has(base) && idx) aliases.set(name, { param: byName.get(base)!, offset: idx });
    }
  });
  const out: Access[] = [];
  const visit = (n: Node, write: Access['write']): void => {
    if (n.type === 'assignment_expression') {
      visit(n.childForFieldName('right')!, undefined);
      const l = n.childForFieldName('left');
      if (l) visit(l, operatorOf(n) === '=' ? 'plain' : 'compound');
      return;
    }
    if (n.type === 'update_expression') {
      const a = n.childForFieldName('argument');
      if (a) visit(a, 'compound');
      return;
    }
    if (n.type === 'subscript_expression') {
      const base = n.childForFieldName('argument')?.text ?? '';
      const index = named(n.childForFieldName('indices'))[0] ?? n.childForFieldName('index');
      for (const c of named(n.childForFieldName('indices'))) visit(c, undefined);
      if (byName.has(base)) out.push({ param: byName.get(base)!, index, write });
      else if (aliases.has(base)) out.push({ param: aliases.get(base)!.param, index, offset: aliases.get(base)!.offset, write });
      return;
    }
    if (n.type === 'pointer_expression' && n.child(0)?.type === '*') {
      const arg = unwrap(n.childForFieldName('argument'));
      if (arg?.type === 'binary_expression' && operatorOf(arg) === '+') {
        const base = unwrap(arg.childForFieldName('left'))?.text ?? '';
        const index = arg.childForFieldName('right');
        visit(index!, undefined);
        if (byName.has(base)) out.push({ param: byName.get(base)!, index, write });
        return;
      }
      if (arg && byName.has(arg.text)) {
        out.push({ param: byName.get(arg.text)!, index: null, write });
        return;
      }
    }
    for (const c of named(n)) visit(c, undefined);
  };
  visit(body, undefined);
  return out;
}

/** Innermost iterations per call: for each statement, the product of its enclosing loops' trip counts
 *  (a blocking loop whose variable bounds an inner loop counts once, through the inner loop). */
function loopWork(body: Node, scope: BoundScope): SizePolynomial | undefined {
  const works: (SizePolynomial | undefined)[] = [];
  walk(body, (n) => {
    if (n.type !== 'expression_statement') return;
    const loops: Node[] = [];
    for (let p = n.parent; p && p !== body.parent; p = p.parent) if (p.type === 'for_statement') loops.push(p);
    if (!loops.length) return;
    let work: SizePolynomial | undefined = SizePolynomial.constant(1);
    for (const loop of loops) {
      const v = loopVariable(loop);
      if (!v || !work) { work = undefined; break; }
      const blocking = loops.some((inner) => inner.startIndex > loop.startIndex
        && new RegExp(`\\b${v}\\b`).test(`${inner.childForFieldName('initializer')?.text ?? ''} ${boundText(inner, scope)}`));
      if (blocking) continue;
      const up = scope.upper(v, loop);
      const init = loop.childForFieldName('initializer');
      const start = init?.type === 'declaration' ? named(init).find((c) => c.type === 'init_declarator')?.childForFieldName('value') : init?.childForFieldName('right');
      const lo = start ? scope.minOf(start) : init ? undefined : SizePolynomial.constant(0);
      work = up && lo ? work.mul(up.sub(lo)) : undefined;
    }
    works.push(work);
  });
  return largest(works);
}

/** An inner loop's condition with its bound variables' definitions spelled out (`i < i1`, `i1 = min(i0 + B, M)`). */
function boundText(loop: Node, scope: BoundScope): string {
  const cond = loop.childForFieldName('condition')?.text ?? '';
  return cond + ' ' + [...cond.matchAll(/[A-Za-z_]\w*/g)].map((m) => scope.defs.get(m[0])?.text ?? '').join(' ');
}

/** The analysis of the kernel `name` in a parsed C/C++/CUDA file. */
export function cppKernelAccess(root: Node, name: string): CppKernelAccess | undefined {
  const fn = root.descendantsOfType('function_definition').find((f) => {
    let d: Node | null = f?.childForFieldName('declarator') ?? null;
    while (d && d.type !== 'function_declarator') d = d.childForFieldName('declarator');
    return d?.childForFieldName('declarator')?.text === name;
  });
  const body = fn?.childForFieldName('body');
  if (!fn || !body) return undefined;
  const params = paramsOf(fn);
  const ints = new Set(params.filter((p) => !p.pointer && INTEGER_TYPE.test(p.type)).map((p) => p.name));
  const scope = new BoundScope(body, ints, fileConstants(root));
  const found = accesses(body, params);
  const order = params.map((p) => p.name);
  for (const p of params.filter((q) => q.pointer)) {
    const mine = found.filter((a) => a.param === p.index);
    const extents = mine.map((a) => {
      const top = a.index ? scope.maxOf(a.index) : SizePolynomial.constant(0);
      const off = a.offset ? scope.maxOf(a.offset) : SizePolynomial.constant(0);
      return top && off ? top.add(off).add(SizePolynomial.constant(1)) : undefined;
    }).filter((e) => e && e.symbols().every((s) => ints.has(s)));
    p.extent = largest(extents);
    // Row-major reading order: a size that multiplies an index (`i * K + k`) is the row length, named last.
    const strides = mine.map((a) => `${a.offset?.text ?? ''} ${a.index?.text ?? ''}`).join(' ');
    p.layout = p.extent?.symbols().sort((x, y) => Number(new RegExp(`\\b${x}\\b`).test(strides)) - Number(new RegExp(`\\b${y}\\b`).test(strides)) || order.indexOf(x) - order.indexOf(y));
    const first = mine[0]; // in evaluation order: a plain write before any read makes it a pure output
    const written = mine.some((a) => a.write);
    p.role = !written ? 'input' : first?.write === 'plain' ? 'output' : 'inplace';
  }
  const used = new Set(params.flatMap((p) => p.extent?.symbols() ?? []));
  const work = loopWork(body, scope);
  for (const s of work?.symbols() ?? []) used.add(s);
  for (const p of params) if (!p.pointer && ints.has(p.name)) p.isSize = used.has(p.name) || !used.size;
  return { params, work: work && work.symbols().every((s) => ints.has(s)) ? work : undefined, body, maxOf: (n) => scope.maxOf(n) };
}
