// Splicing: a variant of one function is put back into the whole original file. Only the function's own
// span changes (plus any helper functions / imports the variant needs that the original lacks); every
// other byte of the original stays as it was.
import { clikeNonCode, languageOf, pythonNonCode, type SourceLanguage } from './sourceText';

export class SpliceError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'SpliceError';
  }
}

/** Where a function definition sits in a file: [start, end) covers decorators / template head to the body's end. */
export interface FunctionSpan {
  name: string;
  start: number;
  end: number;
  /** Leading whitespace of the definition's first line. */
  indent: string;
}

// ---------------------------------------------------------------- Python

interface PyLine {
  start: number;
  /** End of the logical line (before its final newline). */
  end: number;
  indent: number;
  blank: boolean;
}

/** Logical lines of a Python file: a line that starts inside brackets, a string or after `\` continues the previous one. */
function pythonLogicalLines(src: string): PyLine[] {
  const spans = pythonNonCode(src);
  const masked = src.split('');
  const inString = new Uint8Array(src.length + 1);
  for (const s of spans) {
    for (let k = s.start; k < s.end; k++) {
      if (s.kind === 'string') {
        inString[k] = k > s.start ? 1 : 0;
        if (masked[k] !== '\n') masked[k] = 'x';
      } else masked[k] = ' ';
    }
  }
  const text = masked.join('');
  const lines: PyLine[] = [];
  let depth = 0;
  let pos = 0;
  let continued = false;
  while (pos <= text.length) {
    let nl = text.indexOf('\n', pos);
    if (nl < 0) nl = text.length;
    const physical = text.slice(pos, nl);
    const isContinuation = continued || depth > 0 || inString[pos] === 1;
    if (isContinuation && lines.length) {
      lines[lines.length - 1].end = nl;
      if (physical.trim()) lines[lines.length - 1].blank = false;
    } else {
      const indent = /^[ \t]*/.exec(physical)![0].replace(/\t/g, '        ').length;
      lines.push({ start: pos, end: nl, indent, blank: physical.trim() === '' });
    }
    for (const ch of physical) {
      if (ch === '(' || ch === '[' || ch === '{') depth++;
      else if (ch === ')' || ch === ']' || ch === '}') depth = Math.max(0, depth - 1);
    }
    continued = /\\\s*$/.test(physical);
    if (nl >= text.length) break;
    pos = nl + 1;
  }
  return lines;
}

function pythonFunctions(src: string, topLevelOnly: boolean): FunctionSpan[] {
  const lines = pythonLogicalLines(src);
  const out: FunctionSpan[] = [];
  for (let i = 0; i < lines.length; i++) {
    const l = lines[i];
    const head = src.slice(l.start, l.end);
    const m = /^([ \t]*)(?:async[ \t]+)?(def|class)[ \t]+([A-Za-z_]\w*)/.exec(head);
    if (!m || (topLevelOnly && l.indent > 0)) continue;
    let first = i;
    while (first > 0 && !lines[first - 1].blank && lines[first - 1].indent === l.indent
      && /^\s*@/.test(src.slice(lines[first - 1].start, lines[first - 1].end))) first--;
    let last = i;
    for (let j = i + 1; j < lines.length; j++) {
      if (lines[j].blank) continue;
      if (lines[j].indent <= l.indent) break;
      last = j;
    }
    // like C-like spans, the span starts after the first line's indentation
    out.push({ name: m[3], start: lines[first].start + m[1].length, end: lines[last].end, indent: m[1] });
  }
  return out;
}

// ---------------------------------------------------------------- C, C++, CUDA

/** The file with comments, literals and preprocessor lines blanked (offsets kept). */
function clikeMask(src: string): string {
  const out = src.split('');
  for (const s of clikeNonCode(src)) {
    for (let k = s.start; k < s.end; k++) if (out[k] !== '\n') out[k] = s.kind === 'string' ? 'x' : ' ';
  }
  const text = out.join('');
  // preprocessor directives (with their `\` continuations) are not code for brace matching
  return text.replace(/^[ \t]*#(?:[^\n\\]|\\\n?)*/gm, (m) => m.replace(/[^\n]/g, ' '));
}

function matchClose(text: string, open: number): number {
  const pairs: Record<string, string> = { '(': ')', '{': '}', '[': ']' };
  const want = pairs[text[open]];
  let depth = 0;
  for (let k = open; k < text.length; k++) {
    const ch = text[k];
    if (ch === text[open]) depth++;
    else if (ch === want && --depth === 0) return k;
  }
  return -1;
}

/** Brace kinds: a scope ({ of namespace, class, struct, extern "C") may hold definitions; a body may not. */
function clikeBraceScopes(src: string, text: string): Map<number, 'scope' | 'body'> {
  const kinds = new Map<number, 'scope' | 'body'>();
  let lastStop = 0;
  for (let k = 0; k < text.length; k++) {
    const ch = text[k];
    if (ch === '{') {
      const header = text.slice(lastStop, k).trim();
      const isScope = (/\b(namespace|class|struct|union)\b/.test(header) && !/\)\s*(const\s*)?$/.test(header))
        || /\bextern\s*"C(\+\+)?"$/.test(src.slice(lastStop, k).trim());
      kinds.set(k, isScope ? 'scope' : 'body');
      lastStop = k + 1;
    } else if (ch === '}' || ch === ';') {
      lastStop = k + 1;
    }
  }
  return kinds;
}

function clikeFunctions(src: string): FunctionSpan[] {
  const text = clikeMask(src);
  const kinds = clikeBraceScopes(src, text);
  const out: FunctionSpan[] = [];
  // walk the file keeping a stack of open braces; a definition is `name(...) ... {` where every enclosing brace is a scope
  const stack: Array<'scope' | 'body'> = [];
  let lastStop = 0;
  for (let k = 0; k < text.length; k++) {
    const ch = text[k];
    if (ch === '{') {
      const kind = kinds.get(k)!;
      // C-like definitions are only ever at file, namespace or class scope, so topLevelOnly changes nothing here
      if (kind === 'body' && stack.every((s) => s === 'scope')) {
        const header = text.slice(lastStop, k);
        const fn = definitionHeader(header);
        if (fn) {
          const close = matchClose(text, k);
          if (close > 0) {
            const start = lastStop + (header.length - header.trimStart().length);
            const lineStart = src.lastIndexOf('\n', start - 1) + 1;
            out.push({ name: fn, start, end: close + 1, indent: /^[ \t]*/.exec(src.slice(lineStart, start))![0] });
            k = close;
            lastStop = close + 1;
            continue;
          }
        }
      }
      stack.push(kind);
      lastStop = k + 1;
    } else if (ch === '}') {
      stack.pop();
      lastStop = k + 1;
    } else if (ch === ';') {
      lastStop = k + 1;
    }
  }
  return out;
}

/** The function name when a header (text between the previous `;`/`{`/`}` and a `{`) declares a function. */
function definitionHeader(header: string): string | undefined {
  // drop a constructor's member-initializer list and trailing qualifiers: find the parameter list's `(`
  let depth = 0;
  let paramsOpen = -1;
  for (let k = 0; k < header.length; k++) {
    const ch = header[k];
    if (ch === '(') {
      if (depth === 0 && paramsOpen < 0) {
        const before = header.slice(0, k).trimEnd();
        const m = /([A-Za-z_~]\w*|operator\s*\S+)$/.exec(before);
        const word = m?.[1] ?? '';
        if (m && !/^(if|for|while|switch|return|sizeof|alignas|decltype|__attribute__|__launch_bounds__|__declspec)$/.test(word)) paramsOpen = k;
      }
      depth++;
    } else if (ch === ')') depth--;
  }
  if (paramsOpen < 0) return undefined;
  if (/=\s*$/.test(header.trimEnd())) return undefined; // a brace initializer, not a body
  if (/\b(namespace|class|struct|union|enum)\b/.test(header.slice(0, paramsOpen))) return undefined;
  const before = header.slice(0, paramsOpen).trimEnd();
  const name = /([A-Za-z_~]\w*)$/.exec(before)?.[1];
  return name;
}

// ---------------------------------------------------------------- API

/** Every function (Python: def and class) in the file; with topLevelOnly, only those at file/namespace scope. */
export function listFunctions(src: string, lang: SourceLanguage, topLevelOnly = false): FunctionSpan[] {
  return lang === 'python' ? pythonFunctions(src, topLevelOnly) : clikeFunctions(src);
}

/** The definition of `name` (the outermost one when there are several); undefined when the file has none. */
export function findFunction(src: string, name: string, lang: SourceLanguage): FunctionSpan | undefined {
  const all = listFunctions(src, lang).filter((f) => f.name === name);
  if (!all.length) return undefined;
  return all.reduce((a, b) => (b.indent.length < a.indent.length ? b : a));
}

function reindent(text: string, from: string, to: string): string {
  if (from === to) return text;
  return text.split('\n').map((line, i) => {
    if (i === 0) return line; // the first line's indentation comes from the original file
    if (line.startsWith(from)) return to + line.slice(from.length);
    return line;
  }).join('\n');
}

function importLines(src: string, lang: SourceLanguage): string[] {
  const re = lang === 'python' ? /^(?:import\s+\S.*|from\s+\S+\s+import\s+.*)$/gm : /^[ \t]*#[ \t]*include\b.*$/gm;
  return (src.match(re) ?? []).map((l) => l.trim());
}

export interface SpliceOptions {
  /** Language of both texts; by default from fileName, else C-like. */
  lang?: SourceLanguage;
  fileName?: string;
  /** Bring over functions the variant defines that the original lacks, and missing imports/#includes. */
  bringHelpers?: boolean;
}

/**
 * Puts the variant's definition of `name` in place of the original's. `variant` may be the function alone or a
 * whole file. Throws SpliceError (a sentence saying which side lacks the function) when either has none.
 */
export function spliceFunction(original: string, name: string, variant: string, opts: SpliceOptions = {}): string {
  const lang = opts.lang ?? (opts.fileName ? languageOf(opts.fileName) : 'clike');
  const target = findFunction(original, name, lang);
  if (!target) throw new SpliceError(`The original file has no definition of ${name}, so a variant of it cannot be spliced in.`);
  const fromVariant = findFunction(variant, name, lang);
  if (!fromVariant) throw new SpliceError(`The proposed code does not define ${name}; it must contain the whole function.`);
  let body = variant.slice(fromVariant.start, fromVariant.end);
  body = reindent(body, fromVariant.indent, target.indent);

  let helpers = '';
  let before = original.slice(0, target.start);
  if (opts.bringHelpers ?? true) {
    const known = new Set(listFunctions(original, lang).map((f) => f.name));
    for (const f of listFunctions(variant, lang, true)) {
      if (f.name === name || known.has(f.name) || f.start >= fromVariant.start && f.end <= fromVariant.end) continue;
      helpers += reindent(variant.slice(f.start, f.end), f.indent, target.indent) + '\n\n' + target.indent;
    }
    const have = new Set(importLines(original, lang));
    const missing = importLines(variant, lang).filter((l) => !have.has(l));
    if (missing.length) {
      const re = lang === 'python' ? /^(?:import\s+\S.*|from\s+\S+\s+import\s+.*)$/gm : /^[ \t]*#[ \t]*include\b.*$/gm;
      let at = -1;
      for (const m of before.matchAll(re)) at = m.index! + m[0].length;
      const block = missing.join('\n');
      before = at < 0 ? `${block}\n${before}` : `${before.slice(0, at)}\n${block}${before.slice(at)}`;
    }
  }
  return before + helpers + body + original.slice(target.end);
}
