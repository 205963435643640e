// Knob detection: the integer literals of a kernel file that the tuner may change without touching its logic.
// C/C++/CUDA: file-scope integer `constexpr` / `const` and `#define NAME 64`. Triton (Python): the
// meta-parameters passed at a launch site (`kernel[grid](..., BLOCK_M=64, num_warps=4)`), the values of
// `@triton.autotune` configs, and module-level BLOCK-like constants.
import { listFunctions } from './splice';
import { languageOf, maskNonCode, pythonNonCode, type SourceLanguage } from './sourceText';

export type KnobKind = 'cpp-constexpr' | 'cpp-define' | 'triton-launch' | 'triton-autotune' | 'py-constant';
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

/** The values a knob may take: powers of two for sizes, 1..16 warps, 1..6 stages, always keeping the current value. */
export function domainOf(role: KnobRole, value: number, backend: 'triton' | 'native'): number[] {
  switch (role) {
    case 'warps':
      return withValue(backend === 'triton' ? [1, 2, 4, 8, 16] : powersOfTwo(1, Math.max(32, value)), value);
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

function lineAt(src: string, offset: number): number {
  let line = 1;
  for (let k = 0; k < offset; k++) if (src.charCodeAt(k) === 10) line++;
  return line;
}

class KnobCollector {
  readonly knobs: Knob[] = [];
  constructor(private readonly src: string, private readonly backend: 'triton' | 'native') {}

  add(name: string, kind: KnobKind, value: number, span: [number, number], role = roleOf(name)): void {
    if (!Number.isSafeInteger(value) || value <= 0) return;
    const same = this.knobs.find((k) => k.name === name);
    if (same && same.value === value) {
      if (!same.spans.some((s) => s[0] === span[0])) same.spans.push(span);
      return;
    }
    const line = lineAt(this.src, span[0]);
    this.knobs.push({ name: same ? `${name}@${line}` : name, kind, role, value, domain: domainOf(role, value, this.backend), spans: [span], line });
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

function matchParen(text: string, open: number): number {
  let depth = 0;
  for (let k = open; k < text.length; k++) {
    if ('([{'.includes(text[k])) depth++;
    else if (')]}'.includes(text[k]) && --depth === 0) return k;
  }
  return -1;
}

/** Top-level `NAME=value` keyword arguments inside the parentheses [open, close]. */
function keywordArgs(text: string, open: number, close: number): Array<{ name: string; value: string; at: number }> {
  const out: Array<{ name: string; value: string; at: number }> = [];
  let depth = 0;
  let argStart = open + 1;
  for (let k = open + 1; k <= close; k++) {
    const ch = text[k];
    if ('([{'.includes(ch)) depth++;
    else if (')]}'.includes(ch) && k < close) depth--;
    if ((ch === ',' && depth === 0) || k === close) {
      const arg = text.slice(argStart, k);
      const m = /^\s*([A-Za-z_]\w*)\s*=\s*([A-Za-z_]\w*|\d+)\s*$/.exec(arg);
      if (m) out.push({ name: m[1], value: m[2], at: argStart + arg.indexOf(m[2], arg.indexOf('=')) });
      argStart = k + 1;
    }
  }
  return out;
}

const TRITON_META = /^(num_warps|num_stages)$|^[A-Z][A-Z0-9_]*$/;

function detectPython(src: string): KnobSet {
  const c = new KnobCollector(src, 'triton');
  const masked = maskNonCode(src, 'python');
  // Launch sites: name[grid](args...)
  for (const m of masked.matchAll(/\b[A-Za-z_]\w*\s*\[/g)) {
    const open = m.index! + m[0].length - 1;
    const close = matchParen(masked, open);
    if (close < 0) continue;
    const after = /^\s*\(/.exec(masked.slice(close + 1));
    if (!after) continue;
    const pOpen = close + 1 + after[0].length - 1;
    const pClose = matchParen(masked, pOpen);
    if (pClose < 0) continue;
    const grid = masked.slice(open, close + 1);
    for (const kw of keywordArgs(masked, pOpen, pClose)) {
      if (!TRITON_META.test(kw.name) || roleOf(kw.name) === 'generic') continue;
      if (/^\d+$/.test(kw.value)) {
        const span: [number, number] = [kw.at, kw.at + kw.value.length];
        c.add(kw.name, 'triton-launch', Number(kw.value), span);
        // a grid written with the same literal (cdiv(n, 1024), n // 1024) must follow the block size
        for (const g of grid.matchAll(new RegExp(String.raw`(?:cdiv\([^,()]*,\s*|//\s*)(${kw.value})\b`, 'g'))) {
          const at = open + g.index! + g[0].length - g[1].length;
          c.add(kw.name, 'triton-launch', Number(kw.value), [at, at + g[1].length]);
        }
      } else {
        // BLOCK_SIZE=BLOCK: the literal is where BLOCK was last assigned before the launch
        let found: { at: number; value: string } | undefined;
        for (const a of masked.slice(0, kw.at).matchAll(new RegExp(String.raw`^[ \t]*${kw.value}[ \t]*=[ \t]*(\d+)[ \t]*$`, 'gm'))) {
          found = { at: a.index! + a[0].lastIndexOf(a[1]), value: a[1] };
        }
        if (found) c.add(kw.value, 'py-constant', Number(found.value), [found.at, found.at + found.value.length], roleOf(kw.name));
      }
    }
  }
  // @triton.autotune(configs=[triton.Config({'BLOCK_M': 128, ...}, num_warps=4, num_stages=3), ...])
  const strings = pythonNonCode(src).filter((s) => s.kind === 'string');
  let cfg = 0;
  for (const m of masked.matchAll(/\b(?:triton\.)?Config\s*\(/g)) {
    const open = m.index! + m[0].length - 1;
    const close = matchParen(masked, open);
    if (close < 0) continue;
    const brace = masked.indexOf('{', open);
    if (brace > 0 && brace < close) {
      const bClose = matchParen(masked, brace);
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
    for (const kw of keywordArgs(masked, open, close)) {
      if ((kw.name === 'num_warps' || kw.name === 'num_stages') && /^\d+$/.test(kw.value)) {
        c.add(`cfg${cfg}.${kw.name}`, 'triton-autotune', Number(kw.value), [kw.at, kw.at + kw.value.length], roleOf(kw.name));
      }
    }
    cfg++;
  }
  // module-level constants such as BLOCK_SIZE = 1024 that a launch uses
  for (const m of masked.matchAll(/^([A-Z][A-Z0-9_]*)[ \t]*(?::[ \t]*int[ \t]*)?=[ \t]*(\d+)[ \t]*$/gm)) {
    if (roleOf(m[1]) === 'generic') continue;
    const at = m.index! + m[0].lastIndexOf(m[2]);
    if (!c.knobs.some((k) => k.spans.some((s) => s[0] === at))) c.add(m[1], 'py-constant', Number(m[2]), [at, at + m[2].length]);
  }
  return { knobs: sortKnobs(c.knobs), constraints: [] };
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

export type KnobValues = Record<string, number>;

export function knobValues(set: KnobSet): KnobValues {
  return Object.fromEntries(set.knobs.map((k) => [k.name, k.value]));
}

export function satisfiesConstraints(set: KnobSet, values: KnobValues): boolean {
  return set.constraints.every((c) => values[c.a] % values[c.b] === 0);
}

/** The source with the knobs set to `values` (knobs not named keep their value); nothing else changes. */
export function applyKnobs(src: string, set: KnobSet, values: KnobValues): string {
  const edits: Array<{ start: number; end: number; text: string }> = [];
  for (const k of set.knobs) {
    const v = values[k.name];
    if (v === undefined || v === k.value) continue;
    for (const [start, end] of k.spans) edits.push({ start, end, text: String(v) });
  }
  edits.sort((a, b) => b.start - a.start);
  let out = src;
  for (const e of edits) out = out.slice(0, e.start) + e.text + out.slice(e.end);
  return out;
}
