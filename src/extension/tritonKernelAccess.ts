// How a Triton kernel and the Python launcher that calls it use their arguments, read from the syntax tree:
// which launcher parameters are tensors and their dimensions (`rows, cols = x.shape`, `x.shape[-1]`,
// `x.numel()`), which the kernel stores into, which it reads broadcast (`tl.load(b_ptr + offs % n_cols)` is a
// vector of n_cols), whether it upcasts what it loads (then fp16 and bf16 inputs are its real use), and what it
// computes when that is one element-wise formula (an independent reference in torch, float64).
import type { Node } from 'web-tree-sitter';
import type { DraftedReference } from './cppReference';

export type TensorRole = 'input' | 'output' | 'inplace';

export interface TritonTensorArg { kind: 'tensor'; name: string; dims: string[]; role: TensorRole }
export interface TritonScalarArg { kind: 'scalar'; name: string; /** Python for its value in inputs(); `shape["n"]` for a size. */ value: string }
export type TritonArg = TritonTensorArg | TritonScalarArg;

export interface TritonKernelAccess {
  /** The Python function that launches the kernel (`kernel[grid](...)`), when the file has one. */
  launcher?: string;
  /** What inputs() returns, in the launcher's order (or the kernel's, without a launcher). */
  args: TritonArg[];
  /** The size names SHAPES gives values to. */
  dims: string[];
  /** The kernel converts what it loads to float32: fp16 and bf16 inputs are what it is written for. */
  upcasts: boolean;
  /** The launcher returns a tensor it allocates (launch returns that); else the stored tensor arguments. */
  returnsNew: boolean;
  /** Without a launcher: the grid and the constexpr keywords launch() passes. */
  direct?: { grid: string; constexprs: string[] };
  reference?: DraftedReference;
}

function named(n: Node | null | undefined): Node[] {
  return (n?.namedChildren ?? []).filter((c): c is Node => !!c);
}

function all(n: Node, type: string): Node[] {
  return n.descendantsOfType(type).filter((c): c is Node => !!c);
}

function paramNames(fn: Node): { name: string; defaultValue?: string; annotation?: string }[] {
  return named(fn.childForFieldName('parameters')).map((p) => {
    if (p.type === 'identifier') return { name: p.text };
    const id = p.childForFieldName('name') ?? named(p).find((c) => c.type === 'identifier');
    return { name: id?.text ?? '', defaultValue: p.childForFieldName('value')?.text, annotation: p.childForFieldName('type')?.text };
  }).filter((p) => p.name && !p.name.startsWith('*'));
}

function isTlCall(n: Node | null, fn: string): boolean {
  return n?.type === 'call' && /^tl\.(\w+\.)?/.test(n.childForFieldName('function')?.text ?? '') && (n.childForFieldName('function')?.text ?? '').endsWith(`.${fn}`);
}

/** The pointer parameter at the root of a pointer expression (`x_ptr + row * stride + offs`). */
function pointerRoot(n: Node | null, pointers: Set<string>): string | undefined {
  if (!n) return undefined;
  if (n.type === 'identifier') return pointers.has(n.text) ? n.text : undefined;
  if (n.type === 'parenthesized_expression') return pointerRoot(n.namedChildren[0] ?? null, pointers);
  if (n.type === 'binary_operator' && n.childForFieldName('operator')?.type === '+') {
    return pointerRoot(n.childForFieldName('left'), pointers) ?? pointerRoot(n.childForFieldName('right'), pointers);
  }
  return undefined;
}

interface KernelFacts {
  params: { name: string; constexpr: boolean }[];
  loads: Map<string, Node[]>;
  stores: Set<string>;
  /** Pointer -> the kernel scalar its offsets are taken modulo (a broadcast read). */
  broadcast: Map<string, string>;
  /** Scalars that bound the offsets in masks (`offs < n_elements`). */
  maskBounds: string[];
  upcasts: boolean;
  body: Node;
}

function kernelFacts(fn: Node): KernelFacts {
  const body = fn.childForFieldName('body')!;
  const params = named(fn.childForFieldName('parameters')).map((p) => ({
    name: (p.type === 'identifier' ? p : p.childForFieldName('name') ?? named(p).find((c) => c.type === 'identifier'))?.text ?? '',
    constexpr: /constexpr/.test(p.text),
  }));
  const scalarsAndPointers = new Set(params.filter((p) => !p.constexpr).map((p) => p.name));
  const loads = new Map<string, Node[]>();
  const stores = new Set<string>();
  const broadcast = new Map<string, string>();
  for (const call of all(body, 'call')) {
    const isLoad = isTlCall(call, 'load');
    if (!isLoad && !isTlCall(call, 'store')) continue;
    const ptrExpr = named(call.childForFieldName('arguments'))[0] ?? null;
    const root = pointerRoot(ptrExpr, scalarsAndPointers);
    if (!root) continue;
    if (isLoad) loads.set(root, [...(loads.get(root) ?? []), call]);
    else stores.add(root);
    for (const mod of all(ptrExpr!, 'binary_operator').filter((b) => b.childForFieldName('operator')?.type === '%')) {
      const by = mod.childForFieldName('right')?.text ?? '';
      if (scalarsAndPointers.has(by)) broadcast.set(root, by);
    }
  }
  const maskBounds = all(body, 'comparison_operator').flatMap((c) => named(c).slice(1).map((x) => x.text)).filter((t) => scalarsAndPointers.has(t));
  const upcasts = [...loads.values()].flat().some((l) => /^\.to\(\s*tl\.float32\s*\)/.test(body.text.slice(l.endIndex - body.startIndex).trimStart()));
  return { params, loads, stores, broadcast, maskBounds: [...new Set(maskBounds)], upcasts, body };
}

const TORCH_FUNCTIONS: Record<string, string> = {
  exp: 'torch.exp', exp2: 'torch.exp2', log: 'torch.log', sqrt: 'torch.sqrt', rsqrt: 'torch.rsqrt', erf: 'torch.erf', tanh: 'torch.tanh',
  sigmoid: 'torch.sigmoid', abs: 'torch.abs', maximum: 'torch.maximum', minimum: 'torch.minimum', where: 'torch.where', sin: 'torch.sin', cos: 'torch.cos',
};

/** The stored value as torch over whole tensors: each load becomes its tensor (broadcast as torch does). */
function torchOf(n: Node | null, defs: Map<string, Node>, tensorOf: (ptr: string) => string | undefined, scalars: Map<string, string>, depth = 0): string | undefined {
  if (!n || depth > 30) return undefined;
  const sub = (m: Node | null) => torchOf(m, defs, tensorOf, scalars, depth + 1);
  switch (n.type) {
    case 'integer':
    case 'float':
      return n.text;
    case 'identifier':
      if (scalars.has(n.text)) return scalars.get(n.text);
      return defs.has(n.text) ? (() => { const v = sub(defs.get(n.text)!); return v && `(${v})`; })() : undefined;
    case 'parenthesized_expression':
      return (() => { const v = sub(n.namedChildren[0] ?? null); return v && `(${v})`; })();
    case 'unary_operator': {
      const v = sub(n.childForFieldName('argument'));
      return v && n.child(0)?.type === '-' ? `-${v}` : undefined;
    }
    case 'binary_operator': {
      const op = n.childForFieldName('operator')?.type ?? '';
      if (!['+', '-', '*', '/'].includes(op)) return undefined;
      const l = sub(n.childForFieldName('left'));
      const r = sub(n.childForFieldName('right'));
      return l && r ? `${l} ${op} ${r}` : undefined;
    }
    case 'comparison_operator': {
      const parts = named(n);
      const op = n.children.find((c) => c && !c.isNamed)?.type;
      const [l, r] = [sub(parts[0]), sub(parts[1])];
      return parts.length === 2 && op && l && r ? `(${l} ${op} ${r})` : undefined;
    }
    case 'call': {
      const fn = n.childForFieldName('function');
      const args = named(n.childForFieldName('arguments')).filter((a) => a.type !== 'keyword_argument');
      if (fn?.type === 'attribute' && fn.childForFieldName('attribute')?.text === 'to') return sub(fn.childForFieldName('object'));
      if (isTlCall(n, 'load')) {
        const ptr = pointerRoot(args[0] ?? null, new Set([...defs.keys(), ...collectPointers(args[0] ?? null)]));
        return ptr ? tensorOf(ptr) : undefined;
      }
      const name = (fn?.text ?? '').replace(/^tl\.(math\.|extra\.\w+\.libdevice\.)?/, '');
      const torchFn = /^tl\./.test(fn?.text ?? '') ? TORCH_FUNCTIONS[name] : undefined;
      const vals = args.map(sub);
      return torchFn && vals.every(Boolean) ? `${torchFn}(${vals.join(', ')})` : undefined;
    }
    default:
      return undefined;
  }
}

function collectPointers(n: Node | null): string[] {
  return n ? [n, ...all(n, 'identifier')].filter((x) => x.type === 'identifier').map((x) => x.text) : [];
}

function localDefs(body: Node): Map<string, Node> {
  const defs = new Map<string, Node>();
  const counts = new Map<string, number>();
  for (const a of all(body, 'assignment')) {
    const l = a.childForFieldName('left');
    const r = a.childForFieldName('right');
    if (l?.type === 'identifier' && r) {
      defs.set(l.text, r);
      counts.set(l.text, (counts.get(l.text) ?? 0) + 1);
    }
  }
  // A name assigned twice (a loop's accumulator) is not one value: the formula cannot be read from it.
  for (const [k, c] of counts) if (c > 1) defs.delete(k);
  return defs;
}

/** The analysis of the Triton kernel `name` and its launcher in a parsed Python file. */
export function tritonKernelAccess(root: Node, name: string): TritonKernelAccess | undefined {
  const fns = all(root, 'function_definition');
  const kernelFn = fns.find((f) => f.childForFieldName('name')?.text === name);
  if (!kernelFn) return undefined;
  const k = kernelFacts(kernelFn);
  const launcherFn = fns.find((f) => f !== kernelFn && all(f, 'call').some((c) => c.childForFieldName('function')?.type === 'subscript'
    && c.childForFieldName('function')?.childForFieldName('value')?.text === name));
  return launcherFn ? withLauncher(k, launcherFn, name) : direct(k);
}

function pointerParams(k: KernelFacts): Set<string> {
  return new Set([...k.loads.keys(), ...k.stores]);
}

function roleOf(k: KernelFacts, ptr: string): TensorRole {
  return !k.stores.has(ptr) ? 'input' : k.loads.has(ptr) ? 'inplace' : 'output';
}

function direct(k: KernelFacts): TritonKernelAccess {
  const pointers = pointerParams(k);
  const n = k.maskBounds[0] ?? 'n';
  const args: TritonArg[] = k.params.filter((p) => !p.constexpr).map((p) => pointers.has(p.name)
    ? { kind: 'tensor', name: p.name, dims: [k.broadcast.get(p.name) ?? n], role: roleOf(k, p.name) }
    : { kind: 'scalar', name: p.name, value: p.name === n || k.maskBounds.includes(p.name) ? `shape["${p.name}"]` : '1' });
  const dims = [...new Set(args.flatMap((a) => (a.kind === 'tensor' ? a.dims : [])))];
  const block = k.params.filter((p) => p.constexpr).map((p) => p.name);
  return {
    args, dims, upcasts: k.upcasts, returnsNew: false,
    direct: { grid: `(triton.cdiv(shape_n, 1024),)`.replace('shape_n', `args[${args.findIndex((a) => a.kind === 'tensor')}].numel()`), constexprs: block.map((b) => `${b}=1024`) },
    reference: elementwiseReference(k, (ptr) => (args.some((a) => a.name === ptr) ? ptr : undefined), new Map(args.filter((a) => a.kind === 'scalar').map((a) => [a.name, a.name]))),
  };
}

function withLauncher(k: KernelFacts, fn: Node, kernel: string): TritonKernelAccess {
  const params = paramNames(fn);
  const body = fn.childForFieldName('body')!;
  const call = all(fn, 'call').find((c) => c.childForFieldName('function')?.type === 'subscript' && c.childForFieldName('function')?.childForFieldName('value')?.text === kernel)!;
  const positional = named(call.childForFieldName('arguments')).filter((a) => a.type !== 'keyword_argument');
  const kernelParams = k.params.filter((p) => !p.constexpr);
  // Kernel parameter -> the launcher's expression passed for it.
  const passed = new Map(kernelParams.map((p, i) => [p.name, positional[i]?.text ?? '']));
  const pointers = pointerParams(k);
  const launcherNames = new Set(params.map((p) => p.name));
  // Launcher tensors: passed for a kernel pointer (possibly as `x.contiguous()`), or asked for a shape.
  const tensorFor = (expr: string) => /^([A-Za-z_]\w*)/.exec(expr)?.[1];
  const tensors = new Map<string, { dims: (string | undefined)[]; numel?: string; ptr?: string; fromStrides?: boolean }>();
  for (const [kp, expr] of passed) {
    const t = tensorFor(expr);
    if (pointers.has(kp) && t && launcherNames.has(t)) tensors.set(t, { dims: [], ptr: kp });
  }
  for (const p of params) if (new RegExp(`\\b${p.name}\\s*\\.\\s*(shape|numel|stride|size)\\b`).test(body.text) && !tensors.has(p.name)) tensors.set(p.name, { dims: [] });
  // What the launcher reads of each tensor's shape.
  for (const a of all(body, 'assignment')) {
    const l = a.childForFieldName('left');
    const r = a.childForFieldName('right')?.text.replace(/\s+/g, '') ?? '';
    const m = /^([A-Za-z_]\w*)\.(shape|size\(\))$/.exec(r);
    if (m && tensors.has(m[1]) && (l?.type === 'pattern_list' || l?.type === 'tuple_pattern')) {
      tensors.get(m[1])!.dims = named(l).map((x) => (x.type === 'identifier' ? x.text : undefined));
      continue;
    }
    const one = /^([A-Za-z_]\w*)\.(?:shape\[|size\()(-?\d+)[\])]$/.exec(r);
    if (one && tensors.has(one[1]) && l?.type === 'identifier') {
      const t = tensors.get(one[1])!;
      const i = Number(one[2]);
      if (i < 0) t.dims = [...(t.dims.length ? t.dims.slice(0, -1) : [undefined]), l.text];
      else { while (t.dims.length <= i) t.dims.push(undefined); t.dims[i] = l.text; }
      continue;
    }
    const numel = /^([A-Za-z_]\w*)\.numel\(\)$/.exec(r);
    if (numel && tensors.has(numel[1]) && l?.type === 'identifier') tensors.get(numel[1])!.numel = l.text;
  }
  // A dimension the launcher does not name is read from the kernel: the stride passed as `b.stride(0)` scales an
  // offset (`kk[:, None] * sbk`) whose mask bounds it by a size (`kk[:, None] < K`): b's dimension 0 is K.
  const kernelText = k.body.text;
  for (const [kp, expr] of passed) {
    const m = /^([A-Za-z_]\w*)\.stride\((\d+)\)$/.exec(expr.replace(/\s+/g, ''));
    const t = m && tensors.get(m[1]);
    if (!m || !t) continue;
    const offset = new RegExp(`(\\w+)(?:\\[[^\\]]*\\])?\\s*\\*\\s*${kp}\\b`).exec(kernelText)?.[1];
    const bound = offset && new RegExp(`\\b${offset}(?:\\[[^\\]]*\\])?\\s*<\\s*(\\w+)`).exec(kernelText)?.[1];
    const name = bound && passed.get(bound);
    const i = Number(m[2]);
    if (name && /^[A-Za-z_]\w*$/.test(name) && !t.dims[i]) {
      if (!t.dims.length) t.fromStrides = true;
      while (t.dims.length <= i) t.dims.push(undefined);
      t.dims[i] = name;
    }
  }
  // Names the kernel's scalars go by in the launcher: `n_cols` passed as `x.shape[-1]` or as a local `n_cols`.
  const sizeName = (kp: string) => {
    const expr = passed.get(kp) ?? '';
    return /^[A-Za-z_]\w*$/.test(expr) ? expr : undefined;
  };
  const used = new Set<string>();
  let fresh = 0;
  const dimsOf = (t: string): string[] => {
    const info = tensors.get(t)!;
    const bcast = info.ptr ? k.broadcast.get(info.ptr) : undefined;
    if (bcast) return [sizeName(bcast) ?? bcast];
    if (info.dims.length) return info.dims.map((d, i) => d ?? (i === 0 ? 'rows' : `d${++fresh}`));
    if (info.numel) return [info.numel];
    return [];
  };
  const named0 = new Set([...tensors].filter(([, v]) => v.dims.length && !v.fromStrides).map(([t]) => t));
  let shaped = [...tensors.keys()].map((t) => [t, dimsOf(t)] as const);
  const like = shaped.find(([t, d]) => d.length && named0.has(t))?.[1] ?? shaped.find(([, d]) => d.length)?.[1] ?? ['n'];
  // A row stride alone (`y.stride(0)`, the rows contiguous) names only the first dimension: the rest as `like`.
  shaped = shaped.map(([t, d]) => [t, tensors.get(t)!.fromStrides && d.length < like.length && d.every((x, i) => x === like[i]) ? like : d] as const);
  const args: TritonArg[] = params.map((p) => {
    if (tensors.has(p.name)) {
      const dims = shaped.find(([t]) => t === p.name)![1];
      dims.forEach((d) => used.add(d));
      const ptr = tensors.get(p.name)!.ptr;
      return { kind: 'tensor', name: p.name, dims: dims.length ? dims : like, role: ptr ? roleOf(k, ptr) : 'input' };
    }
    return { kind: 'scalar', name: p.name, value: p.defaultValue ?? (/float/.test(p.annotation ?? '') ? '0.5' : '1') };
  });
  like.forEach((d) => used.add(d));
  // A launcher that allocates what the kernel stores into returns it.
  const returned = all(body, 'return_statement')[0]?.namedChildren[0]?.text;
  const returnsNew = !!returned && !launcherNames.has(returned);
  // The launcher's expression for each kernel scalar, as the reference sees it (shape names are in scope there).
  const scalars = new Map<string, string>();
  for (const [kp, expr] of passed) {
    if (pointers.has(kp)) continue;
    if (launcherNames.has(expr)) scalars.set(kp, expr);
  }
  const tensorOf = (ptr: string) => [...tensors].find(([, v]) => v.ptr === ptr)?.[0];
  return { launcher: fn.childForFieldName('name')?.text, args, dims: [...used], upcasts: k.upcasts, returnsNew, reference: elementwiseReference(k, tensorOf, scalars) };
}

/** One `tl.store` of a formula of loads and scalars, no loop and no reduction: the reference is that formula. */
function elementwiseReference(k: KernelFacts, tensorOf: (ptr: string) => string | undefined, scalars: Map<string, string>): DraftedReference | undefined {
  if (k.stores.size !== 1 || all(k.body, 'for_statement').length || all(k.body, 'while_statement').length) return undefined;
  if (/\btl\.(sum|max|min|reduce|dot|cumsum|atomic_\w+)\s*\(/.test(k.body.text)) return undefined;
  const stores = all(k.body, 'call').filter((c) => isTlCall(c, 'store'));
  if (stores.length !== 1) return undefined;
  const value = named(stores[0].childForFieldName('arguments')).filter((a) => a.type !== 'keyword_argument')[1] ?? null;
  const out = [...k.stores][0];
  const outTensor = tensorOf(out);
  const expr = torchOf(value, localDefs(k.body), (ptr) => { const t = tensorOf(ptr); return t && `${t}.double()`; }, scalars);
  if (!expr || !/\.double\(\)/.test(expr)) return undefined;
  const dtypeOf = outTensor ?? [...k.loads.keys()].map(tensorOf).find(Boolean);
  if (!dtypeOf) return undefined;
  return { what: `the kernel's formula for ${out}, evaluated by torch in float64`, body: [`return (${expr}).to(${dtypeOf}.dtype)`] };
}
