// Triton launch sites as people write them: `kernel[grid](args..., NAME=<expr>, num_warps=<expr>)` inside a
// launcher function, where each meta-parameter is a literal, a local variable computed above it
// (`BLOCK_SIZE, num_warps = calculate_settings(n_cols)`, `BLOCK = min(4096, triton.next_power_of_2(n))`) or a call.
// This file reads the text (comments and strings masked) and answers what the knob detection and the dispatch
// writer need: where the sites and their keyword arguments are, which function encloses them, how a name was
// last assigned there, where the grid uses it, how the kernel uses a meta-parameter, and which integer shape
// values the launcher has in hand.
import { listFunctions, type FunctionSpan } from './splice';

export interface KeywordArg {
  name: string;
  /** The value's text and where it lies ([start, end) offsets into the source). */
  value: string;
  start: number;
  end: number;
}

export interface LaunchSite {
  /** The launched name (`_rms_norm_forward_kernel`, or a variable such as `fx`). */
  kernel: string;
  at: number;
  /** The grid's brackets [open, close] and the call's parentheses [open, close]. */
  grid: [number, number];
  call: [number, number];
  keywords: KeywordArg[];
  /** The function the launch is written in (undefined at module level). */
  launcher?: FunctionSpan;
}

export function matchBracket(text: string, open: number): number {
  let depth = 0;
  for (let k = open; k < text.length; k++) {
    if ('([{'.includes(text[k])) depth++;
    else if (')]}'.includes(text[k]) && --depth === 0) return k;
  }
  return -1;
}

/** The opening bracket of the closing one at `close`, or -1. */
export function openingBracket(text: string, close: number): number {
  let depth = 0;
  for (let k = close; k >= 0; k--) {
    if (')]}'.includes(text[k])) depth++;
    else if ('([{'.includes(text[k]) && --depth === 0) return k;
  }
  return -1;
}

/** Top-level `NAME=<expr>` arguments inside the brackets [open, close] (positional and `**` ones skipped). */
export function keywordArguments(text: string, open: number, close: number): KeywordArg[] {
  const out: KeywordArg[] = [];
  for (const a of callArguments(text, open, close)) {
    const m = /^([A-Za-z_]\w*)(\s*=\s*)(?!=)/.exec(a.value);
    const value = m ? a.value.slice(m[0].length) : '';
    if (m && value) out.push({ name: m[1], value, start: a.start + m[0].length, end: a.end });
  }
  return out;
}

/** Every top-level argument inside the brackets [open, close], positional or not, with its span. */
export function callArguments(text: string, open: number, close: number): Array<{ value: string; start: number; end: number; keyword: boolean }> {
  const out: Array<{ value: string; start: number; end: number; keyword: boolean }> = [];
  let depth = 0;
  let argStart = open + 1;
  for (let k = open + 1; k <= close; k++) {
    const ch = text[k];
    if ('([{'.includes(ch)) depth++;
    else if (')]}'.includes(ch) && k < close) depth--;
    if ((ch === ',' && depth === 0) || k === close) {
      const raw = text.slice(argStart, k);
      const value = raw.trim();
      if (value) {
        const start = argStart + raw.indexOf(value);
        out.push({ value, start, end: start + value.length, keyword: /^(?:[A-Za-z_]\w*\s*=(?!=)|\*)/.test(value) });
      }
      argStart = k + 1;
    }
  }
  return out;
}

/**
 * Meta-parameters passed by position (`kernel[grid](a, b, c, BLOCK_M, BLOCK_N)`): each positional argument in the
 * place of a `tl.constexpr` parameter of the launched kernel, as if written `BLOCK_M=BLOCK_M`.
 */
export function positionalMetaArguments(src: string, masked: string, site: LaunchSite, kernels: string[]): KeywordArg[] {
  const fn = listFunctions(src, 'python').find((f) => f.name === kernels[0]);
  if (!fn) return [];
  const def = new RegExp(String.raw`\bdef\s+${kernels[0]}\s*\(`).exec(masked.slice(fn.start, fn.end));
  if (!def) return [];
  const open = fn.start + def.index + def[0].length - 1;
  const params = callArguments(masked, open, matchBracket(masked, open)).map((p) => p.value);
  const args = callArguments(masked, site.call[0], site.call[1]);
  const out: KeywordArg[] = [];
  for (const [i, a] of args.entries()) {
    if (a.keyword) break;
    const param = /^([A-Za-z_]\w*)\s*:\s*(?:tl\.|triton\.language\.)?constexpr\b/.exec(params[i] ?? '');
    if (param) out.push({ name: param[1], value: a.value, start: a.start, end: a.end });
  }
  return out;
}

/** The default of the launcher's own parameter `name` (`def matmul(a, b, BLOCK_M=128)`), when an integer. */
export function parameterDefault(masked: string, launcher: FunctionSpan | undefined, name: string): Assignment | undefined {
  if (!launcher) return undefined;
  const def = /\bdef\s+[A-Za-z_]\w*\s*\(/.exec(masked.slice(launcher.start, launcher.end));
  if (!def) return undefined;
  const open = launcher.start + def.index + def[0].length - 1;
  for (const p of callArguments(masked, open, matchBracket(masked, open))) {
    const m = new RegExp(String.raw`^${name}\s*(?::[^=]*)?=\s*(\d+)$`).exec(p.value);
    if (m) {
      const start = p.start + p.value.length - m[1].length;
      return { start, end: start + m[1].length, value: m[1], statement: `def ${launcher.name}(..., ${p.value}, ...)`, tuple: false };
    }
  }
  return undefined;
}

/** Every `name[grid](...)` call in the masked text. */
export function launchSites(src: string, masked: string): LaunchSite[] {
  const functions = listFunctions(src, 'python');
  const sites: LaunchSite[] = [];
  for (const m of masked.matchAll(/\b([A-Za-z_][\w.]*)\s*\[/g)) {
    const open = m.index! + m[0].length - 1;
    const close = matchBracket(masked, open);
    if (close < 0) continue;
    const after = /^\s*\(/.exec(masked.slice(close + 1));
    if (!after) continue;
    const callOpen = close + 1 + after[0].length - 1;
    const callClose = matchBracket(masked, callOpen);
    if (callClose < 0) continue;
    const launcher = functions.filter((f) => f.start < m.index! && m.index! < f.end).sort((a, b) => b.start - a.start)[0];
    sites.push({ kernel: m[1].split('.').pop()!, at: m.index!, grid: [open, close], call: [callOpen, callClose],
      keywords: keywordArguments(masked, callOpen, callClose), launcher });
  }
  return sites;
}

export interface Assignment {
  /** Where the right-hand side lies. */
  start: number;
  end: number;
  value: string;
  /** The whole statement, for showing where a computed knob comes from. */
  statement: string;
  /** The name is one target of several (`BLOCK_SIZE, num_warps = f(n)`): the right-hand side is not its own. */
  tuple: boolean;
}

/** The last assignment to `name` in [from, before) of the masked text: `name = expr`, `name: int = expr`, or a tuple target. */
export function lastAssignment(masked: string, name: string, from: number, before: number): Assignment | undefined {
  const text = masked.slice(from, before);
  let found: Assignment | undefined;
  const re = new RegExp(String.raw`^([ \t]*)((?:[A-Za-z_*][\w.]*\s*(?::\s*[\w.\[\], ]+)?\s*,\s*)*${name}\b(?:\s*:\s*[\w.\[\]]+)?(?:\s*,\s*[A-Za-z_*][\w.]*)*)\s*=(?!=)`, 'gm');
  for (const m of text.matchAll(re)) {
    // a keyword argument on a line of its own inside a call (`    BLOCK_SIZE=small_block_size,`) is no assignment
    if (bracketDepth(text, m.index!) > 0) continue;
    const rhsStart = from + m.index! + m[0].length;
    // the statement ends at the first newline outside brackets
    let k = rhsStart;
    let depth = 0;
    for (; k < masked.length; k++) {
      const ch = masked[k];
      if ('([{'.includes(ch)) depth++;
      else if (')]}'.includes(ch)) depth--;
      else if (ch === '\n' && depth <= 0 && masked[k - 1] !== '\\') break;
    }
    const value = masked.slice(rhsStart, k).trim();
    const start = rhsStart + masked.slice(rhsStart, k).indexOf(value);
    const targets = m[2].split(',').map((t) => t.trim()).filter(Boolean);
    found = { start, end: start + value.length, value, statement: masked.slice(from + m.index! + m[1].length, k).trim(), tuple: targets.length > 1 };
  }
  return found;
}

/** How many brackets are open at `at` in the masked text (counted from its start). */
function bracketDepth(masked: string, at: number): number {
  let depth = 0;
  for (let k = 0; k < at; k++) {
    const ch = masked[k];
    if (ch === '(' || ch === '[' || ch === '{') depth++;
    else if (ch === ')' || ch === ']' || ch === '}') depth--;
  }
  return depth;
}

/** Offsets of `name` as a whole word in [start, end) of the masked text. */
export function wordOffsets(masked: string, name: string, start: number, end: number): number[] {
  const out: number[] = [];
  for (const m of masked.slice(start, end).matchAll(new RegExp(String.raw`(?<![\w.'"])${name}(?![\w'"])`, 'g'))) out.push(start + m.index!);
  return out;
}

/** The grid's text span: the brackets themselves, or the right-hand side of the `grid = ...` they name. */
export function gridSpans(site: LaunchSite, masked: string): Array<[number, number]> {
  const inner = masked.slice(site.grid[0] + 1, site.grid[1]).trim();
  const spans: Array<[number, number]> = [[site.grid[0], site.grid[1] + 1]];
  if (/^[A-Za-z_]\w*$/.test(inner) && site.launcher) {
    const a = lastAssignment(masked, inner, site.launcher.start, site.at);
    if (a && !a.tuple) spans.push([a.start, a.end]);
  }
  return spans;
}

export type KernelUse = 'covers' | 'tiles' | 'other';

/**
 * How the launched kernel(s) use a meta-parameter: `covers` when a block of that size must cover a whole
 * extent in one pass (`tl.arange(0, NAME)` with no loop stepping by it and no program tiling by it: a
 * smaller value silently drops elements), `tiles` when programs or a loop step by it (any power of two keeps
 * the result), `other` when it is not an arange size. Also whether any kernel loops (num_stages matters then).
 */
export function kernelUse(src: string, masked: string, kernels: string[], name: string): { use: KernelUse; arange: boolean; loops: boolean } {
  const functions = listFunctions(src, 'python');
  const bodies = functions.filter((f) => kernels.includes(f.name)).map((f) => masked.slice(f.start, f.end));
  if (!bodies.length) return { use: 'other', arange: false, loops: false };
  const arange = new RegExp(String.raw`\barange\(\s*0\s*,\s*${name}\s*\)`);
  const loops = bodies.some((b) => /\bfor\b[^\n]*\brange\(|\bwhile\b/.test(b));
  const usesArange = bodies.some((b) => arange.test(b));
  if (!usesArange) return { use: 'other', arange: false, loops };
  // programs may be tiled by it in a helper the kernel calls (`m_idx = pid_m * BLOCK_M` in a `_pid_to_block`)
  const uses = kernels.flatMap((k) => passedTo(masked, functions, k, name, 3));
  if (uses.some(([b, n]) => steps(n).test(b))) return { use: 'tiles', arange: true, loops };
  return { use: 'covers', arange: true, loops };
}

/** Programs or a loop stepping by `name`: `range(0, n, NAME)`, `+= NAME`, `pid * NAME`. */
const steps = (name: string) =>
  new RegExp(String.raw`\brange\([^()]*(?:\([^()]*\)[^()]*)*,\s*${name}\s*[,)]|\+=\s*${name}\b|\*\s*${name}\b|\b${name}\s*\*`);

/**
 * The masked body of function `fn` with `name`, and of each function of the file it passes `name` to (by position
 * or keyword: `_pid_to_block(pid, M, BLOCK_M)`) with the name of that function's parameter there, `depth` calls deep.
 */
function passedTo(masked: string, functions: readonly FunctionSpan[], fn: string, name: string, depth: number): Array<[string, string]> {
  const f = functions.find((x) => x.name === fn);
  if (!f) return [];
  const body = masked.slice(f.start, f.end);
  const out: Array<[string, string]> = [[body, name]];
  if (depth === 0) return out;
  for (const callee of functions) {
    if (callee === f || !body.includes(callee.name)) continue;
    const calls = [...body.matchAll(new RegExp(String.raw`(?<![\w.])${callee.name}\s*\(`, 'g'))];
    const def = calls.length ? new RegExp(String.raw`\bdef\s+${callee.name}\s*\(`).exec(masked.slice(callee.start, callee.end)) : null;
    if (!def) continue;
    const open = callee.start + def.index + def[0].length - 1;
    const params = callArguments(masked, open, matchBracket(masked, open)).map((p) => /^\*{0,2}([A-Za-z_]\w*)/.exec(p.value)?.[1] ?? '');
    for (const call of calls) {
      const at = f.start + call.index! + call[0].length - 1;
      for (const [i, a] of callArguments(masked, at, matchBracket(masked, at)).entries()) {
        const kw = /^([A-Za-z_]\w*)\s*=(?!=)\s*([\s\S]+)$/.exec(a.value);
        const param = kw ? kw[1] : params[i];
        if (param && (kw ? kw[2] : a.value).trim() === name) out.push(...passedTo(masked, functions, callee.name, param, depth - 1));
      }
    }
  }
  return out;
}

/** The kernels a launch may run: the named function, or the functions a variable is assigned from (`fx = a if g else b`). */
export function launchedKernels(src: string, masked: string, site: LaunchSite): string[] {
  const names = new Set(listFunctions(src, 'python').map((f) => f.name));
  if (names.has(site.kernel)) return [site.kernel];
  if (!site.launcher) return [];
  const a = lastAssignment(masked, site.kernel, site.launcher.start, site.at);
  return a ? [...a.value.matchAll(/[A-Za-z_]\w*/g)].map((m) => m[0]).filter((n) => names.has(n)) : [];
}

/**
 * The launcher's integer shape values in scope at a launch: names assigned from a tensor's `.shape` (tuple
 * targets of `x.shape` or of a slice of it, `M, K = x.shape[-2:]`; `x.shape[i]`, `x.size(i)`, `x.numel()`, alone
 * or as the first branch of a conditional, `b = x.size(0) if x.ndim == 3 else 1`), in order of assignment; a
 * starred target is skipped.
 */
export function shapeVariables(masked: string, launcher: FunctionSpan, before: number): string[] {
  const text = masked.slice(launcher.start, before);
  const out: string[] = [];
  const add = (n: string) => {
    if (!out.includes(n)) out.push(n);
  };
  for (const m of text.matchAll(/^[ \t]*([A-Za-z_*][\w, *]*?)\s*(?::\s*int\s*)?=\s*([^\n]+)$/gm)) {
    const targets = m[1].split(',').map((t) => t.trim()).filter(Boolean);
    const rhs = m[2].trim();
    if (/\.shape\s*(?:\[\s*-?\d*\s*:\s*-?\d*\s*\]\s*)?$/.test(rhs) && targets.length > 1) targets.filter((t) => !t.startsWith('*') && /^[A-Za-z_]\w*$/.test(t)).forEach(add);
    else if (targets.length === 1 && /^[A-Za-z_]\w*$/.test(targets[0])
      && /(?:\.shape\s*\[\s*-?\d+\s*\]|\.size\(\s*-?\d+\s*\)|\.numel\(\s*\))\s*(?:\bif\b[^\n]*\belse\b[^\n]*)?$/.test(rhs)) add(targets[0]);
  }
  return out;
}
