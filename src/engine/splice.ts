// Splicing: a variant of one function is put back into the whole original file. Only the function's own
// span changes (plus any helper functions / imports the variant needs that the original lacks); every
// other byte of the original stays as it was.
import { KernelLocator, type FunctionSpan } from './kernelLocator';
import { languageOf, type SourceLanguage } from './sourceText';

export type { FunctionSpan } from './kernelLocator';

export class SpliceError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'SpliceError';
  }
}

/**
 * Every function (Python: def and class) in the file, found by tree-sitter (the grammars must be loaded:
 * `await KernelLocator.get()`); with topLevelOnly, only those at file, namespace or extern "C" scope.
 */
export function listFunctions(src: string, lang: SourceLanguage, topLevelOnly = false): FunctionSpan[] {
  const all = KernelLocator.loaded().functions(src, lang === 'python' ? 'python' : 'cpp');
  return topLevelOnly ? all.filter((f) => f.topLevel) : all;
}

/** The definition of `name` (the outermost one when there are several); undefined when the file has none. */
export function findFunction(src: string, name: string, lang: SourceLanguage): FunctionSpan | undefined {
  const all = listFunctions(src, lang).filter((f) => f.name === name);
  if (!all.length) return undefined;
  const outer = (a: FunctionSpan, b: FunctionSpan) => (a.topLevel !== b.topLevel ? a.topLevel : a.indent.length <= b.indent.length);
  return all.reduce((a, b) => (outer(a, b) ? a : b));
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
