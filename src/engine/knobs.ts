// Knob detection: the integer literals of a kernel file that the tuner may change without touching its logic.
// C/C++/CUDA: file-scope integer `constexpr` / `const` and `#define NAME 64`. Triton (Python): the
// meta-parameters passed at a launch site (`kernel[grid](..., BLOCK_M=64, num_warps=4)`), the values of
// `@triton.autotune` configs, and module-level BLOCK-like constants.
import { listFunctions } from './splice';
import { gridSpans, kernelUse, type Assignment, keywordArguments, lastAssignment, launchedKernels, launchSites, matchBracket, openingBracket, parameterDefault, positionalMetaArguments, wordOffsets, callArguments } from './tritonLaunch';
import { languageOf, maskNonCode, pythonNonCode, type SourceLanguage } from './sourceText';

// Detection finds functions with tree-sitter, whose grammars load asynchronously: a caller outside a run (the
// tuner benchmark, which bundles this file alone) awaits `KernelLocator.get()` first.
export { KernelLocator } from './kernelLocator';

export type KnobKind = 'cpp-constexpr' | 'cpp-define' | 'triton-launch' | 'triton-autotune' | 'py-constant' | 'triton-computed'
  | 'triton-heuristic' | 'triton-launch-option';
/** What a knob means for its domain: block sizes move by powers of two, warps and stages have fixed ranges. */
export type KnobRole = 'block' | 'unroll' | 'group' | 'warps' | 'stages' | 'generic';

export interface Knob {
  /** Unique within the file: the constant's name, or `cfg2.BLOCK_M` for an autotune config entry. */
  name: string;
  kind: KnobKind;
  role: KnobRole;
  value: number;
  /** Values the tuner may give it, ascending; includes the current value. */
  domain: number[];
  /** Where the literal is ([start, end) offsets); a knob tied to several literals changes them together. */
  spans: Array<[number, number]>;
  /** 1-based line of the first literal. */
  line: number;
  /** A knob the code computes (value 0: as computed): the original expression at its spans. */
  expression?: string;
  /** The statement that computes it (`BLOCK_SIZE, num_warps = calculate_settings(n_cols)`), for display. */
  origin?: string;
  /** `covers`: the kernel needs a block covering the whole extent in one pass, so a value v is written as
   *  `max(v, <expression>)` and never shrinks the block below what the code computed. */
  guard?: 'covers';
  /** A launch option the call does not pass yet: a value is written as `, NAME=v` at the (empty) span. */
  insert?: string;
  /** The launcher function a computed knob belongs to (its local variables are in scope at the spans). */
  scope?: string;
  /** The kernels launched where the knob is used (Triton launch sites); absent when not known. */
  kernels?: string[];
  /** The kernels' meta-parameter the knob is passed as (`BLOCK_SIZE=block`: BLOCK_SIZE). */
  param?: string;
  /** A block the kernel takes a `tl.arange` of: it sizes what one program's threads share (a block of rows
   *  that a program walks in a loop does not). */
  lanes?: boolean;
  /** False for knobs the tuner leaves alone (a covering block: larger only wastes lanes). */
  searched?: boolean;
  /** A computed knob's literal in the statement that assigns it last (`BLOCK_M, BLOCK_N, BLOCK_K = 64, 128, 128`
   *  before the launch): where the search reckons its moves from. */
  typical?: number;
}

/** `a % b == 0` must hold (from a static_assert in the file). */
export interface DivisibilityConstraint {
  a: string;
  b: string;
}

export interface KnobSet {
  knobs: Knob[];
  constraints: DivisibilityConstraint[];
}

const ROLE_ORDER: KnobRole[] = ['block', 'unroll', 'group', 'warps', 'stages', 'generic'];

/** The role a name suggests. Block-like names cover the usual spellings: BLOCK_M, TILE, BM, KC, NR, MB, TR, CHUNK. */
export function roleOf(name: string): KnobRole {
  const n = name.replace(/^cfg\d+\./, '');
  if (/^num_warps$|WARPS/i.test(n)) return 'warps';
  if (/^num_stages$|STAGES/i.test(n)) return 'stages';
  if (/GROUP/i.test(n)) return 'group';
  if (/UNROLL|VEC|LANES|SIMD|WIDTH/i.test(n)) return 'unroll';
  if (/BLOCK|TILE|CHUNK|PANEL|STRIP|BLK|STEP/i.test(n)) return 'block';
  if (/^(?:B|T|BLK|TILE)_?[MNKXYZIJRC]{1,2}$|^[MNKIJ]_?[BCRT]$|^[MNKIJ]{1,2}_?(?:BLOCK|TILE)$/i.test(n)) return 'block';
  return 'generic';
}

function powersOfTwo(lo: number, hi: number): number[] {
  const out: number[] = [];
  for (let p = 1; p <= hi; p *= 2) if (p >= lo) out.push(p);
  return out;
}

function withValue(values: number[], v: number): number[] {
  return [...new Set([...values, v])].sort((a, b) => a - b);
}

/** The values a knob may take: powers of two for sizes, 1..32 warps (a thread block of 1024 threads), 1..6 stages
 *  (1..8 for native code), always keeping the current value. */
export function domainOf(role: KnobRole, value: number, backend: 'triton' | 'native'): number[] {
  switch (role) {
    case 'warps':
      return withValue(powersOfTwo(1, Math.max(32, value)), value);
    case 'stages':
      return withValue(backend === 'triton' ? [1, 2, 3, 4, 5, 6] : [1, 2, 3, 4, 5, 6, 7, 8], value);
    case 'group':
      return withValue(powersOfTwo(1, Math.max(16, 2 * value)), value);
    case 'unroll':
      return withValue(powersOfTwo(1, Math.max(64, 2 * value)), value);
    case 'block':
      // Triton's tl.arange and tl.dot want powers of two of at least 16
      return backend === 'triton'
        ? withValue(powersOfTwo(Math.min(16, value), Math.max(256, 4 * value)), value)
        : withValue(powersOfTwo(1, Math.max(1024, 4 * value)), value);
    default:
      return withValue(powersOfTwo(1, Math.max(1024, 4 * value)), value);
  }
}

/** A name's literal in a tuple assignment of literals (`BLOCK_M, BLOCK_N = 64, 128`: BLOCK_N's is 128). */
function tupleLiteral(statement: string, name: string): { typical?: number } {
  const m = /^([\w\s,]+?)\s*=\s*\(?([\d\s,]+?)\)?\s*$/.exec(statement.split('\n').pop()!.trim());
  if (!m) return {};
  const targets = m[1].split(',').map((t) => t.trim());
  const values = m[2].split(',').map((v) => v.trim()).filter(Boolean);
  const i = targets.indexOf(name);
  return targets.length === values.length && i >= 0 && Number(values[i]) > 0 ? { typical: Number(values[i]) } : {};
}

function lineAt(src: string, offset: number): number {
  let line = 1;
  for (let k = 0; k < offset; k++) if (src.charCodeAt(k) === 10) line++;
  return line;
}

class KnobCollector {
  readonly knobs: Knob[] = [];
  /** The kernels launched where a launch's knob was found (`launches` of add). */
  private readonly launchesOf = new Map<Knob, string>();
  constructor(private readonly src: string, private readonly backend: 'triton' | 'native') {}

  /** `launches`: for a knob of a launch, the kernels that launch runs. Literals of one name and value are one knob
   *  (a block size and the grid's `cdiv(n, 1024)`, a kernel launched alike in two branches) only where they launch
   *  the same kernels: a tuned `num_warps=4` must not move another kernel's `num_warps=4` in the same file. */
  add(name: string, kind: KnobKind, value: number, span: [number, number], role = roleOf(name), launches?: string): void {
    if (!Number.isSafeInteger(value) || value <= 0) return;
    // the same place reached again (a module constant that several launches pass): one knob
    if (this.knobs.some((k) => k.value === value && k.spans.some((s) => s[0] === span[0]))) return;
    // (the knob of that name, or one named apart by its line: a third kernel launched alike twice after another's)
    const alike = this.knobs.find((k) => k.name.replace(/@\d+$/, '') === name && k.value === value && this.launchesOf.get(k) === launches);
    if (alike) {
      if (!alike.spans.some((s) => s[0] === span[0])) alike.spans.push(span);
      return;
    }
    const line = lineAt(this.src, span[0]);
    const taken = this.knobs.some((k) => k.name === name);
    const knob: Knob = { name: taken ? `${name}@${line}` : name, kind, role, value, domain: domainOf(role, value, this.backend), spans: [span], line };
    this.knobs.push(knob);
    if (launches !== undefined) this.launchesOf.set(knob, launches);
  }
}

const INT_TYPE = String.raw`(?:(?:unsigned|signed)\s+)?(?:long\s+long|long|short|int|unsigned|size_t|std::size_t|ptrdiff_t|std::ptrdiff_t|index_t|auto|(?:std::)?u?int(?:8|16|32|64)_t)(?:\s+int)?`;

function detectClike(src: string): KnobSet {
  const c = new KnobCollector(src, 'native');
  const masked = maskNonCode(src, 'clike');
  const bodies = listFunctions(src, 'clike').map((f) => [f.start, f.end] as const);
  const inBody = (at: number) => bodies.some(([s, e]) => at > s && at < e);

  // constexpr / const integer declarations, possibly several declarators: constexpr int BM = 64, BN = 32;
  const decl = new RegExp(String.raw`^[ \t]*((?:(?:static|inline|constexpr|const|__device__|__constant__)\s+)+)(${INT_TYPE})\s+([^;{}()]*?(?:\{\s*\d+[uUlL]*\s*\}[^;{}()]*?)*);`, 'dgm');
  for (const m of masked.matchAll(decl)) {
    if (!/\b(constexpr|const)\b/.test(m[1]) || inBody(m.index!)) continue;
    const listStart = m.indices![3][0];
    const item = /([A-Za-z_]\w*)\s*(?:=\s*\(?\s*|\{\s*)(\d+)[uUlL]*\s*\)?\s*\}?\s*(?=,|$)/dg;
    for (const d of m[3].matchAll(item)) {
      const [s, e] = d.indices![2];
      c.add(d[1], 'cpp-constexpr', Number(d[2]), [listStart + s, listStart + e]);
    }
  }
  // enum { BM = 64, BN = 32 }; (the pre-constexpr way to name integer constants)
  for (const m of masked.matchAll(/\benum\b(?:\s+(?:class|struct))?(?:\s+\w+)?(?:\s*:\s*[\w:]+)?\s*\{([^{}]*)\}/dg)) {
    if (inBody(m.index!)) continue;
    const listStart = m.indices![1][0];
    for (const d of m[1].matchAll(/([A-Za-z_]\w*)\s*=\s*(\d+)[uUlL]*\s*(?=,|$)/dg)) {
      const [s, e] = d.indices![2];
      c.add(d[1], 'cpp-constexpr', Number(d[2]), [listStart + s, listStart + e]);
    }
  }
  // #define NAME 64 (object-like macros with a plain integer; include guards and function-like macros are not knobs)
  const def = /^[ \t]*#[ \t]*define[ \t]+([A-Za-z_]\w*)[ \t]+\(?[ \t]*(\d+)[uUlL]*[ \t]*\)?[ \t]*$/dgm;
  for (const m of masked.matchAll(def)) c.add(m[1], 'cpp-define', Number(m[2]), m.indices![2]);
  const constraints: DivisibilityConstraint[] = [];
  const names = new Set(c.knobs.map((k) => k.name));
  for (const m of masked.matchAll(/static_assert\s*\(\s*\(?\s*([A-Za-z_]\w*)\s*%\s*([A-Za-z_]\w*)\s*\)?\s*==\s*0/g)) {
    if (names.has(m[1]) && names.has(m[2])) constraints.push({ a: m[1], b: m[2] });
  }
  return { knobs: sortKnobs(c.knobs), constraints };
}

const TRITON_META = /^(num_warps|num_stages)$|^[A-Z][A-Z0-9_]*$/;
/** The warps Triton launches a kernel with when the launch does not say (NVIDIA and AMD alike). */
const TRITON_DEFAULT_WARPS = 4;
const INT = /^\d+$/;

/** Domains of knobs computed by the code: no current literal to keep, so the role's full range. */
function computedDomain(role: KnobRole): number[] {
  switch (role) {
    case 'warps':
      return [1, 2, 4, 8, 16, 32];
    case 'stages':
      return [1, 2, 3, 4, 5, 6];
    case 'group':
      return [1, 2, 4, 8, 16, 32];
    case 'block':
      return powersOfTwo(16, 4096);
    default:
      return powersOfTwo(1, 1024);
  }
}

class PythonKnobs {
  readonly c: KnobCollector;
  readonly masked: string;
  constructor(private readonly src: string) {
    this.c = new KnobCollector(src, 'triton');
    this.masked = maskNonCode(src, 'python');
  }

  /** A knob whose value the code computes: value 0 means "as computed"; any number written replaces it. Launches
   *  that pass the same name are one knob where the statement that computes it is the same: `num_warps=num_warps`
   *  after `calculate_settings(n_cols)` in one branch and after a Blackwell tile's settings in another are two
   *  quantities (Liger's SwiGLU), and one knob of both made the search write the other branch's launch too. */
  computed(name: string, kind: KnobKind, expression: string, spans: Array<[number, number]>, extra: Partial<Knob> = {}): void {
    const role = extra.role ?? roleOf(name);
    const same = this.c.knobs.find((k) => k.name === name);
    // the value a computed knob stands at: 0 (as computed), or a launch option's default (Triton's warps)
    const value = extra.value ?? 0;
    const alike = (k: Knob) => k.value === value && k.expression === expression && k.scope === extra.scope && k.guard === extra.guard
      && k.origin === extra.origin;
    const twin = this.c.knobs.find((k) => alike(k) && (k.name === name || k.name.startsWith(`${name}@`)));
    if (twin) {
      for (const s of spans) if (!twin.spans.some((x) => x[0] === s[0])) twin.spans.push(s);
      return;
    }
    if (same && alike(same)) {
      for (const s of spans) if (!same.spans.some((x) => x[0] === s[0])) same.spans.push(s);
      return;
    }
    const line = lineAt(this.src, spans[0][0]);
    this.c.knobs.push({ name: same ? `${name}@${line}` : name, kind, role, value: 0, domain: computedDomain(role), spans, line, expression, ...extra });
  }

  /** Records that the knob with a span at `at` is used where `kernels` are launched. */
  private tag(at: number, kernels: string[], param: string): void {
    // launch options inserted at one place share the span's start: the option of that name
    const atSpan = this.c.knobs.filter((x) => x.spans.some((s) => s[0] === at));
    const k = atSpan.find((x) => x.insert === param) ?? atSpan.find((x) => !x.insert) ?? atSpan[0];
    if (k && kernels.length) k.kernels = [...new Set([...(k.kernels ?? []), ...kernels])];
    if (k && !k.insert) k.param ??= param;
    if (k && k.role === 'block' && kernels.length) k.lanes ||= kernelUse(this.src, this.masked, kernels, param).arange;
  }

  launches(): void {
    const { src, masked, c } = this;
    for (const site of launchSites(src, masked)) {
      const kernels = launchedKernels(src, masked, site);
      const launched = [...kernels].sort().join(',');
      const tagged: Array<[number, string]> = [];
      const grids = gridSpans(site, masked);
      const inGrid = (word: string) => grids.flatMap(([s, e]) => wordOffsets(masked, word, s, e)).map((at) => [at, at + word.length] as [number, number]);
      let anyLoop = false;
      const keywords = [...positionalMetaArguments(src, masked, site, kernels), ...site.keywords];
      for (const kw of keywords) {
        if (!TRITON_META.test(kw.name) || roleOf(kw.name) === 'generic') continue;
        const role = roleOf(kw.name);
        const use = kernelUse(src, masked, kernels, kw.name);
        anyLoop ||= use.loops;
        // a block that must cover a whole row in one pass keeps the computed size as its lower bound
        const covers = role === 'block' && use.use === 'covers';
        const guarded = /^max\(\s*(\d+)\s*,\s*([\s\S]+)\)$/.exec(kw.value);
        if (INT.test(kw.value)) {
          const span: [number, number] = [kw.start, kw.end];
          c.add(kw.name, 'triton-launch', Number(kw.value), span, role, launched);
          tagged.push([kw.start, kw.name]);
          // a grid written with the same literal (cdiv(n, 1024), n // 1024) must follow the block size
          for (const g of masked.slice(site.grid[0], site.grid[1] + 1).matchAll(new RegExp(String.raw`(?:cdiv\([^,()]*,\s*|//\s*)(${kw.value})\b`, 'g'))) {
            const at = site.grid[0] + g.index! + g[0].length - g[1].length;
            c.add(kw.name, 'triton-launch', Number(kw.value), [at, at + g[1].length], role, launched);
          }
        } else if (guarded) {
          // a computed size raised to a tuned lower bound (what the tuner writes for a covering block)
          const spans: Array<[number, number]> = [[kw.start, kw.end]];
          for (const g of grids) for (const at of indexAll(masked, kw.value, g[0], g[1])) spans.push([at, at + kw.value.length]);
          c.add(kw.name, 'triton-launch', Number(guarded[1]), spans[0], role, launched);
          const k = c.knobs.find((x) => x.spans.some((s) => s[0] === kw.start))!;
          k.spans = spans;
          k.expression = guarded[2].trim();
          k.guard = 'covers';
          k.searched = false;
          tagged.push([kw.start, kw.name]);
        } else {
          const name = /^[A-Za-z_]\w*$/.test(kw.value) ? kw.value : undefined;
          const from = site.launcher?.start ?? 0;
          // the name's value: assigned in the launcher above the launch, else a module-level constant
          const local = name ? lastAssignment(masked, name, from, site.at) : undefined;
          const global = name && !local ? moduleAssignment(masked, name, from) : undefined;
          // or the default of the launcher's own parameter (`def matmul(a, b, BLOCK_M=128)`)
          const a = local ?? global ?? (name ? parameterDefault(masked, site.launcher, name) : undefined);
          if (name && a && !a.tuple && INT.test(a.value)) {
            // BLOCK_SIZE=BLOCK where BLOCK = 512 above: the literal is the knob
            c.add(name, 'py-constant', Number(a.value), [a.start, a.end], role, launched);
            tagged.push([a.start, kw.name]);
            continue;
          }
          const spans: Array<[number, number]> = [[kw.start, kw.end], ...(name ? inGrid(name) : [])];
          this.computed(kw.name, 'triton-computed', kw.value, spans, {
            role,
            scope: site.launcher?.name,
            origin: a?.statement ?? kw.value,
            ...(name && a?.tuple ? tupleLiteral(a.statement, name) : {}),
            ...(covers ? { guard: 'covers' as const, searched: false } : {}),
          });
          tagged.push([kw.start, kw.name]);
        }
      }
      // num_stages pipelines loads across loop iterations; a looping kernel launched without it gets it as a knob
      const names = keywords.map((k) => k.name);
      // launch options go after the call's last argument, positional or not
      const args = callArguments(masked, site.call[0], site.call[1]);
      const last = args[args.length - 1];
      if (anyLoop === false) anyLoop = kernels.length > 0 && kernelUse(src, masked, kernels, '__none__').loops;
      // an autotuned kernel takes its launch options from its configs: a launch option added at the call conflicts
      const options = kernels.length > 0 && !kernels.some((k) => this.launchOptionsFromDecorators(k));
      if (options && anyLoop && last && !names.includes('num_stages')) {
        this.computed('num_stages', 'triton-launch-option', '', [[last.end, last.end]], { role: 'stages', insert: 'num_stages', scope: site.launcher?.name });
        tagged.push([last.end, 'num_stages']);
      }
      // a launch that leaves num_warps to Triton still has its warps to tune: its value is Triton's default, 4
      // (written only when the search moves it)
      if (options && last && !names.includes('num_warps')) {
        this.computed('num_warps', 'triton-launch-option', '', [[last.end, last.end]], { role: 'warps', insert: 'num_warps', scope: site.launcher?.name, value: TRITON_DEFAULT_WARPS });
        tagged.push([last.end, 'num_warps']);
      }
      // local literals a launch uses through its grid or a kwargs dict (BLOCK_ROW = 16; kernel_args["BLOCK_ROW"] = BLOCK_ROW)
      if (site.launcher) {
        const body = masked.slice(site.launcher.start, site.at);
        for (const m of body.matchAll(/^([ \t]+)([A-Z][A-Z0-9_]*)[ \t]*=[ \t]*(\d+)[ \t]*$/gm)) {
          // a name that says nothing is still a block size when the kernel takes an arange of it
          const role = roleOf(m[2]) !== 'generic' ? roleOf(m[2]) : kernelUse(src, masked, kernels, m[2]).arange ? 'block' : undefined;
          if (!role) continue;
          const at = site.launcher.start + m.index! + m[0].lastIndexOf(m[3]);
          const used = wordOffsets(masked, m[2], at, site.call[1]).length > 0;
          if (used && !c.knobs.some((k) => k.spans.some((s) => s[0] === at))) c.add(m[2], 'py-constant', Number(m[3]), [at, at + m[3].length], role);
          if (used && wordOffsets(masked, m[2], site.grid[0], site.call[1]).length) tagged.push([at, m[2]]);
        }
      }
      for (const [at, param] of tagged) this.tag(at, kernels, param);
    }
  }

  /**
   * A block that is the length of a 1-D vector (no tl.dot in the kernels it sizes) may go far beyond the
   * 256 a matmul tile stops at: elementwise and row kernels like 1024-8192 elements per program. A computed tile
   * of a matmul gets a literal tile's 16-256 (with its written literal) instead of a computed block's 16-4096.
   */
  fitBlockDomains(): void {
    const bodies = new Map(listFunctions(this.src, 'python').map((f) => [f.name, this.masked.slice(f.start, f.end)]));
    for (const k of this.c.knobs) {
      if (k.role !== 'block' || !k.kernels?.length || k.guard) continue;
      const texts = k.kernels.map((n) => bodies.get(n) ?? '');
      if (texts.some((b) => /\bdot\s*\(/.test(b))) {
        if (!k.value) k.domain = k.typical ? withValue(powersOfTwo(16, Math.max(256, k.typical)), k.typical) : powersOfTwo(16, 256);
        continue;
      }
      if (!k.param || !kernelUse(this.src, this.masked, k.kernels, k.param).arange) continue;
      const values = powersOfTwo(Math.min(16, k.value || 16), Math.max(8192, 4 * k.value));
      k.domain = k.value ? withValue(values, k.value) : values;
    }
  }

  /**
   * Whether the decorators of `kernel` (@triton.autotune, or @triton.heuristics naming num_warps / num_stages) set
   * its launch options: a launch that adds one of its own fails ("Conflicting meta-parameters").
   */
  launchOptionsFromDecorators(kernel: string): boolean {
    const { src, masked } = this;
    const def = new RegExp(String.raw`^[ \t]*def\s+${kernel}\s*\(`, 'm').exec(masked);
    if (!def) return false;
    // walk up over the decorators written right above the def (each may span lines: configs, dicts)
    let end = def.index;
    for (;;) {
      const before = masked.slice(0, end).replace(/\s+$/, '');
      if (!before.endsWith(')') && !/@[\w.]+$/.test(before)) return false;
      let start: number;
      if (before.endsWith(')')) {
        const open = openingBracket(masked, before.length - 1);
        if (open < 0) return false;
        const name = /@([\w.]+)\s*$/.exec(masked.slice(0, open));
        if (!name) return false;
        start = open - name[0].length;
        const text = src.slice(start, before.length);
        if (/autotune$/.test(name[1]) || (/heuristics$/.test(name[1]) && /['"]num_(?:warps|stages)['"]/.test(text))) return true;
      } else {
        start = before.lastIndexOf('@');
        if (/autotune$/.test(before.slice(start + 1))) return true;
      }
      end = start;
    }
  }

  /** @triton.autotune(configs=[triton.Config({'BLOCK_M': 128, ...}, num_warps=4, num_stages=3), ...]) */
  autotuneConfigs(): void {
    const { src, masked, c } = this;
    const strings = pythonNonCode(src).filter((s) => s.kind === 'string');
    let cfg = 0;
    for (const m of masked.matchAll(/\b(?:triton\.)?Config\s*\(/g)) {
      const open = m.index! + m[0].length - 1;
      const close = matchBracket(masked, open);
      if (close < 0) continue;
      const brace = masked.indexOf('{', open);
      if (brace > 0 && brace < close) {
        const bClose = matchBracket(masked, brace);
        // dict entries: 'NAME': 64 (the key is a string literal, so look in the original text)
        for (const s of strings) {
          if (s.start < brace || s.end > bClose) continue;
          const key = src.slice(s.start + 1, s.end - 1);
          const val = /^\s*:\s*(\d+)\b/.exec(src.slice(s.end, bClose));
          if (val && /^\w+$/.test(key)) {
            const at = s.end + val[0].lastIndexOf(val[1]);
            c.add(`cfg${cfg}.${key}`, 'triton-autotune', Number(val[1]), [at, at + val[1].length], roleOf(key));
          }
        }
      }
      for (const kw of keywordArguments(masked, open, close)) {
        if ((kw.name === 'num_warps' || kw.name === 'num_stages') && INT.test(kw.value)) {
          c.add(`cfg${cfg}.${kw.name}`, 'triton-autotune', Number(kw.value), [kw.start, kw.end], roleOf(kw.name));
        }
      }
      cfg++;
    }
  }

  /**
   * Autotune configs built by a comprehension or a loop: `for BM in [64, 128]` whose variable feeds a Config
   * (`'BLOCK_M': BM`, `num_warps=w`). Each listed value is a knob named for the config key it feeds.
   */
  configLoops(): void {
    const { src, masked, c } = this;
    for (const m of masked.matchAll(/\bfor\s+([A-Za-z_]\w*)\s+in\s+([[(])/g)) {
      const open = m.index! + m[0].length - 1;
      const close = matchBracket(masked, open);
      if (close < 0) continue;
      const items = [...masked.slice(open + 1, close).matchAll(/[^,\s][^,]*/g)];
      if (!items.length || !items.every((i) => INT.test(i[0].trim()))) continue;
      // the config the variable feeds: within the enclosing comprehension, or the loop's body
      const window = src.slice(Math.max(0, m.index! - 400), Math.min(src.length, close + 600));
      const v = m[1];
      const key = new RegExp(String.raw`['"](\w+)['"]\s*:\s*${v}\b`).exec(window)?.[1]
        ?? new RegExp(String.raw`\b(num_warps|num_stages)\s*=\s*${v}\b`).exec(window)?.[1];
      if (!key || !/Config\s*\(/.test(window)) continue;
      for (const [i, item] of items.entries()) {
        const text = item[0].trim();
        const at = open + 1 + item.index! + item[0].indexOf(text);
        c.add(`${key}[${i}]`, 'triton-autotune', Number(text), [at, at + text.length], roleOf(key));
      }
    }
  }

  /** @triton.heuristics({'BLOCK_SIZE': lambda args: triton.next_power_of_2(args['N']), ...}): each value's body is a knob. */
  heuristics(): void {
    const { src, masked, c } = this;
    const strings = pythonNonCode(src).filter((s) => s.kind === 'string');
    for (const m of masked.matchAll(/\bheuristics\s*\(\s*\{/g)) {
      const brace = m.index! + m[0].length - 1;
      const bClose = matchBracket(masked, brace);
      if (bClose < 0) continue;
      const after = masked.slice(bClose);
      const def = /^\}\s*\)\s*(?:@[^\n]*\n\s*)*def\s+([A-Za-z_]\w*)|^\}\s*\)\s*\(\s*([A-Za-z_]\w*)\s*\)/.exec(after);
      const kernel = def?.[1] ?? def?.[2];
      for (const s of strings) {
        if (s.start < brace || s.end > bClose) continue;
        const key = src.slice(s.start + 1, s.end - 1);
        const lam = /^\s*:\s*lambda\s+[A-Za-z_]\w*\s*:\s*/.exec(masked.slice(s.end, bClose));
        if (!lam || !/^\w+$/.test(key) || !TRITON_META.test(key) || roleOf(key) === 'generic') continue;
        const bodyStart = s.end + lam[0].length;
        let k = bodyStart;
        for (let depth = 0; k < bClose; k++) {
          const ch = masked[k];
          if ('([{'.includes(ch)) depth++;
          else if (')]}'.includes(ch)) depth--;
          else if (ch === ',' && depth === 0) break;
        }
        const body = src.slice(bodyStart, k).trimEnd();
        const role = roleOf(key);
        if (INT.test(body)) {
          c.add(`heuristic.${key}`, 'triton-heuristic', Number(body), [bodyStart, bodyStart + body.length], role);
          continue;
        }
        const use = kernel ? kernelUse(src, masked, [kernel], key) : undefined;
        const covers = role === 'block' && use?.use === 'covers';
        this.computed(`heuristic.${key}`, 'triton-heuristic', body, [[bodyStart, bodyStart + body.length]], {
          role, origin: `'${key}': lambda: ${body}`, ...(covers ? { guard: 'covers' as const, searched: false } : {}),
        });
      }
    }
  }

  /** Module-level constants such as BLOCK_SIZE = 1024 that a launch uses. */
  moduleConstants(): void {
    const { masked, c } = this;
    for (const m of masked.matchAll(/^([A-Z][A-Z0-9_]*)[ \t]*(?::[ \t]*int[ \t]*)?=[ \t]*(\d+)[ \t]*$/gm)) {
      if (roleOf(m[1]) === 'generic') continue;
      const at = m.index! + m[0].lastIndexOf(m[2]);
      if (!c.knobs.some((k) => k.spans.some((s) => s[0] === at))) c.add(m[1], 'py-constant', Number(m[2]), [at, at + m[2].length]);
    }
  }
}

/** `NAME = <int>` at column 0 before `before`. */
function moduleAssignment(masked: string, name: string, before: number): Assignment | undefined {
  let found: Assignment | undefined;
  for (const m of masked.slice(0, before).matchAll(new RegExp(String.raw`^${name}[ \t]*(?::[ \t]*int[ \t]*)?=[ \t]*(\d+)[ \t]*$`, 'gm'))) {
    const start = m.index! + m[0].lastIndexOf(m[1]);
    found = { start, end: start + m[1].length, value: m[1], statement: m[0], tuple: false };
  }
  return found;
}

function indexAll(text: string, needle: string, start: number, end: number): number[] {
  const out: number[] = [];
  for (let k = text.indexOf(needle, start); k >= 0 && k + needle.length <= end; k = text.indexOf(needle, k + 1)) out.push(k);
  return out;
}

function detectPython(src: string): KnobSet {
  const p = new PythonKnobs(src);
  p.launches();
  p.fitBlockDomains();
  p.autotuneConfigs();
  p.configLoops();
  p.heuristics();
  p.moduleConstants();
  return { knobs: sortKnobs(p.c.knobs), constraints: [] };
}

/** Knobs most likely to matter first: block sizes, then unrolling, grouping, warps, stages, the rest. */
function sortKnobs(knobs: Knob[]): Knob[] {
  return knobs
    .map((k, i) => ({ k, i }))
    .sort((x, y) => ROLE_ORDER.indexOf(x.k.role) - ROLE_ORDER.indexOf(y.k.role) || x.i - y.i)
    .map((x) => x.k);
}

export function detectKnobs(src: string, langOrFile: SourceLanguage | string): KnobSet {
  const lang = langOrFile === 'python' || langOrFile === 'clike' ? langOrFile : languageOf(langOrFile);
  return lang === 'python' ? detectPython(src) : detectClike(src);
}

/**
 * A tuned file's knobs tied as the baseline's are. Where one knob of the baseline stood at several launches (one
 * statement's `num_warps` passed to a row kernel and to a kernel of blocks of rows, Liger's RMSNorm and softmax), a
 * file that wrote one number at each of them reads as a knob per launch (literals are told apart by the kernels they
 * launch); they are one knob again here, so the search moves them together, as the drafts wrote them. Before, a
 * draft's children moved the spec's kernel's launch alone: children of different drafts that differed only at a
 * launch that never runs (Liger's softmax launches its multi-block kernel for no row a block covers) were judged as
 * different settings, and on Liger's RMSNorm the kernel of blocks of rows, which runs on the short rows, kept each
 * draft's warps whatever the search did. Python sources only; a part written apart (a per-shape table) stays apart.
 */
export function tiedAsIn(src: string, set: KnobSet, baselineSrc: string, baseline: KnobSet): KnobSet {
  const stem = (n: string) => n.replace(/@\d+$/, '');
  const linesOf = (text: string, k: Knob) => new Set(k.spans.map(([at]) => lineAt(text, at)));
  let knobs = set.knobs;
  for (const b of baseline.knobs) {
    const at = linesOf(baselineSrc, b);
    if (at.size < 2) continue;
    // its parts: at its lines, launching its kernels (a file whose lines moved, an LLM's, ties nothing else)
    const parts = knobs.filter((k) => stem(k.name) === stem(b.name) && k.role === b.role && [...linesOf(src, k)].every((l) => at.has(l))
      && (!k.kernels || !b.kernels || k.kernels.every((x) => b.kernels!.includes(x))));
    if (parts.length < 2 || parts.some((k) => k.value !== parts[0].value)) continue;
    if (knobs.some((k) => k.name === b.name && !parts.includes(k))) continue;
    const first = parts.reduce((a, k) => (k.line < a.line ? k : a));
    const kernels = [...new Set(parts.flatMap((k) => k.kernels ?? []))];
    const tied: Knob = { ...first, name: b.name, spans: parts.flatMap((k) => k.spans).sort((x, y) => x[0] - y[0]), ...(kernels.length ? { kernels } : {}) };
    knobs = knobs.flatMap((k) => (k === first ? [tied] : parts.includes(k) ? [] : [k]));
  }
  return knobs === set.knobs ? set : { ...set, knobs };
}

export type KnobValues = Record<string, number>;

/**
 * The knobs a search moves: not those it must leave alone (a block that covers a row), and when the file
 * launches several kernels, those of the launches that run the spec's kernel (a backward pass or another
 * device's branch in the same file is not what the spec times).
 */
export function searchableKnobs(set: KnobSet, kernel: string): KnobSet {
  let knobs = set.knobs.filter((k) => k.searched !== false);
  // decided on every knob: where the spec's kernel has only knobs the search leaves alone, another kernel's are
  // not its to move
  if (set.knobs.some((k) => k.kernels?.includes(kernel))) knobs = knobs.filter((k) => !k.kernels || k.kernels.includes(kernel));
  return { ...set, knobs };
}

export function knobValues(set: KnobSet): KnobValues {
  return Object.fromEntries(set.knobs.map((k) => [k.name, k.value]));
}

export function satisfiesConstraints(set: KnobSet, values: KnobValues): boolean {
  return set.constraints.every((c) => values[c.a] % values[c.b] === 0);
}

/** The text written for a knob's value: the number, or the guarded / inserted form. */
export function renderKnob(k: Knob, v: number | string): string {
  if (k.insert) return `, ${k.insert}=${v}`;
  if (k.guard === 'covers' && k.expression) return `max(${v}, ${k.expression})`;
  return String(v);
}

/** The source with the knobs set to `values` (knobs not named keep their value); nothing else changes. */
export function applyKnobs(src: string, set: KnobSet, values: KnobValues): string {
  const edits: Array<{ start: number; end: number; text: string }> = [];
  for (const k of set.knobs) {
    const v = values[k.name];
    if (v === undefined || v === k.value) continue;
    for (const [start, end] of k.spans) edits.push({ start, end, text: renderKnob(k, v) });
  }
  edits.sort((a, b) => b.start - a.start);
  let out = src;
  for (const e of edits) out = out.slice(0, e.start) + e.text + out.slice(e.end);
  return out;
}
