// Turns a model's answer into a whole candidate file, or into a reason why it cannot be one. Accepted
// forms: SEARCH/REPLACE blocks applied to the parent; a fenced code block holding the whole file or the
// kernel function (spliced back into the parent); an unfenced answer that is the function itself. Models
// wander (prose around the code, several blocks, wrong language tags, reasoning in <think> tags, cut-off
// answers), so each rule below picks the likeliest reading and everything else is a reason, never a throw.
import { maskNonCode, type SourceLanguage } from '../sourceText';
import { findFunction, listFunctions, spliceFunction } from '../splice';

/** Puts a new version of one function back into the whole file (the engine's splice by default). */
export type SpliceFunction = (fileSource: string, functionName: string, newFunctionSource: string, language: SourceLanguage) => string;

const engineSplice: SpliceFunction = (file, name, fn, lang) => spliceFunction(file, name, fn, { lang });

export interface AnswerInput {
  answer: string;
  /** The file the answer modifies (the parent's source, or the baseline for a draft). */
  parentSource: string;
  kernel: string;
  language: SourceLanguage;
  splice?: SpliceFunction;
  /** `length` means the model ran out of tokens: an unclosed block is certainly cut off. */
  finishReason?: string;
}

/** `launcher`: a Triton answer that rewrites the launcher function(s) around the kernel (a per-shape dispatch,
 *  its table beside it) and leaves the kernel as it is. */
export type AnswerForm = 'search-replace' | 'file' | 'function' | 'launcher';

export type ParsedAnswer =
  | { ok: true; source: string; form: AnswerForm; rationale: string }
  | { ok: false; reason: string; rationale: string };

interface CodeBlock {
  tag: string;
  code: string;
  closed: boolean;
}

export function parseAnswer(input: AnswerInput): ParsedAnswer {
  const raw = input.answer.replace(/\r\n?/g, '\n');
  const { text, thinkingCutOff } = stripThinking(raw);
  let rationale = extractRationale(text);
  const fail = (reason: string): ParsedAnswer => ({ ok: false, reason, rationale });
  if (thinkingCutOff) return fail('the answer stopped inside its <think> reasoning, before any code');
  if (!text.trim()) return fail('the answer is empty');
  const json = jsonAnswer(text);
  if (json) {
    const inner = parseAnswer({ ...input, answer: json.code });
    return json.rationale ? { ...inner, rationale: extractRationale(json.rationale) } : inner;
  }

  let result: { source: string; form: AnswerForm; code?: string } | string;
  if (SR_START.test(text)) result = applySearchReplace(text, input.parentSource);
  else {
    const blocks = codeBlocks(text);
    result = blocks.length ? fromBlocks(blocks, input) : fromUnfenced(text, input);
  }
  if (typeof result === 'string') return fail(result);
  // Unfenced code: the rationale is the prose around it.
  if (result.code) rationale = extractRationale(text.replace(result.code, '\n\n'));
  result = {
    ...result,
    source: input.language === 'clike'
      ? keepCLinkage(result.source, input.parentSource, input.kernel)
      : keepDecorators(result.source, input.parentSource, input.kernel),
  };
  if (sameText(result.source, input.parentSource)) return fail('the answer repeats the parent unchanged');
  if (input.language === 'clike') {
    const balance = braceBalance(result.source);
    if (balance !== 0) return fail(unbalanced(balance));
  }
  return { ok: true, source: result.source, form: result.form, rationale };
}

// ---------------------------------------------------------------------------------------------------------
// <think> blocks (DeepSeek-R1, Qwen and others) may hold drafts of code that are not the answer.

function stripThinking(text: string): { text: string; thinkingCutOff: boolean } {
  let out = text.replace(/<think(?:ing)?>[\s\S]*?<\/think(?:ing)?>/gi, '');
  const open = /<think(?:ing)?>/i.exec(out);
  if (open) {
    const before = out.slice(0, open.index);
    if (!/```|<<<<<<<\s*SEARCH/.test(before)) return { text: before, thinkingCutOff: true };
    out = before;
  }
  return { text: out, thinkingCutOff: false };
}

/** Models in a JSON output mode answer `{"rationale": "...", "code": "..."}` (or similar names). */
function jsonAnswer(text: string): { code: string; rationale?: string } | undefined {
  const t = text.trim().replace(/^```(?:json)?\s*\n([\s\S]*?)\n```$/, '$1').trim();
  if (!t.startsWith('{') || !t.endsWith('}')) return undefined;
  let obj: Record<string, unknown>;
  try {
    obj = JSON.parse(t) as Record<string, unknown>;
  } catch {
    return undefined;
  }
  const pick = (names: string[]) => names.map((n) => obj[n]).find((v): v is string => typeof v === 'string' && v.trim() !== '');
  const code = pick(['code', 'source', 'kernel', 'file', 'content', 'answer']);
  return code ? { code, rationale: pick(['rationale', 'explanation', 'reasoning', 'idea', 'summary']) } : undefined;
}

// ---------------------------------------------------------------------------------------------------------
// SEARCH/REPLACE blocks, as aider popularised them.

const SR_START = /^[ \t]*<{5,9}[ \t]*SEARCH[ \t]*$/m;

function applySearchReplace(text: string, parent: string): { source: string; form: AnswerForm } | string {
  const lines = text.split('\n');
  const edits: Array<{ search: string[]; replace: string[] }> = [];
  let i = 0;
  while (i < lines.length) {
    if (!/^\s*<{5,9}\s*SEARCH\s*$/.test(lines[i])) {
      i++;
      continue;
    }
    const search: string[] = [];
    const replace: string[] = [];
    i++;
    while (i < lines.length && !/^\s*={5,9}\s*$/.test(lines[i])) search.push(lines[i++]);
    if (i >= lines.length) return `SEARCH/REPLACE block ${edits.length + 1} is cut off before its ======= line`;
    i++;
    while (i < lines.length && !/^\s*>{5,9}\s*REPLACE\s*$/.test(lines[i])) {
      if (/^\s*<{5,9}\s*SEARCH\s*$/.test(lines[i])) return `SEARCH/REPLACE block ${edits.length + 1} has no >>>>>>> REPLACE line`;
      replace.push(lines[i++]);
    }
    if (i >= lines.length) return `SEARCH/REPLACE block ${edits.length + 1} is cut off before its >>>>>>> REPLACE line`;
    i++;
    edits.push({ search, replace });
  }
  let source = parent;
  for (const [k, e] of edits.entries()) {
    const where = `SEARCH/REPLACE block ${k + 1} of ${edits.length}`;
    if (!e.search.some((l) => l.trim())) return `${where} has an empty SEARCH part; it must quote lines of the parent`;
    const next = replaceOnce(source, e.search, e.replace);
    if (next === undefined) {
      const first = e.search.find((l) => l.trim())!.trim();
      return `${where} does not match the parent (its SEARCH part, starting "${first.slice(0, 80)}", is not in the file)`;
    }
    source = next;
  }
  return { source, form: 'search-replace' };
}

/** Exact match first; then line by line ignoring indentation and trailing blanks (models re-indent). */
function replaceOnce(source: string, search: string[], replace: string[]): string | undefined {
  const exact = search.join('\n');
  const atLineStart = (at: number) => at === 0 || source[at - 1] === '\n';
  let at = source.indexOf(exact);
  while (at >= 0 && !atLineStart(at)) at = source.indexOf(exact, at + 1);
  if (at >= 0) return source.slice(0, at) + replace.join('\n') + source.slice(at + exact.length);
  const trimEnds = (ls: string[]) => {
    let a = 0;
    let b = ls.length;
    while (a < b && !ls[a].trim()) a++;
    while (b > a && !ls[b - 1].trim()) b--;
    return ls.slice(a, b);
  };
  const want = trimEnds(search).map((l) => l.trim());
  const src = source.split('\n');
  for (let s = 0; s + want.length <= src.length; s++) {
    if (want.every((w, j) => src[s + j].trim() === w)) {
      const indent = (l: string) => /^\s*/.exec(l)![0];
      // Re-indent the replacement by the difference between the file's and the answer's indentation.
      const fileIndent = indent(src[s]);
      const answerIndent = indent(trimEnds(search)[0]);
      const rep = trimEnds(replace).map((l) => (l.startsWith(answerIndent) ? fileIndent + l.slice(answerIndent.length) : l));
      return [...src.slice(0, s), ...rep, ...src.slice(s + want.length)].join('\n');
    }
  }
  // Last resort: the SEARCH text is part of a line (a model quoting only the statement it changes).
  const inner = source.indexOf(exact);
  return inner >= 0 && exact.trim() ? source.slice(0, inner) + replace.join('\n') + source.slice(inner + exact.length) : undefined;
}

// ---------------------------------------------------------------------------------------------------------
// Fenced code blocks.

function codeBlocks(text: string): CodeBlock[] {
  const lines = text.split('\n');
  const blocks: CodeBlock[] = [];
  let open: { fence: string; tag: string; body: string[] } | undefined;
  for (const line of lines) {
    if (!open) {
      const m = /^\s*(`{3,}|~{3,})\s*([\w+#.-]*)/.exec(line);
      if (m) open = { fence: m[1], tag: m[2].toLowerCase(), body: [] };
      continue;
    }
    const close = /^\s*(`{3,}|~{3,})\s*$/.exec(line);
    if (close && close[1][0] === open.fence[0] && close[1].length >= open.fence.length) {
      blocks.push({ tag: open.tag, code: open.body.join('\n'), closed: true });
      open = undefined;
    } else open.body.push(line);
  }
  if (open) blocks.push({ tag: open.tag, code: open.body.join('\n'), closed: false });
  return blocks;
}

/** A definition of the kernel (a function, or in Python also a class such as KernelBench's ModelNew), not a call or a declaration. */
function defines(code: string, kernel: string, language: SourceLanguage): boolean {
  return findFunction(code, kernel, language) !== undefined;
}

function fromBlocks(blocks: CodeBlock[], input: AnswerInput): { source: string; form: AnswerForm } | string {
  const defining = blocks.filter((b) => defines(b.code, input.kernel, input.language));
  if (!defining.length && input.language === 'python') {
    const launcher = fromLauncherBlocks(blocks, input);
    if (launcher) return launcher;
  }
  if (!defining.length) {
    if (blocks.some((b) => b.tag === 'diff' || b.tag === 'patch' || /^@@ /m.test(b.code))) {
      return `the answer is a unified diff, which is not applied; answer with the whole ${input.kernel} function or SEARCH/REPLACE blocks`;
    }
    return `none of the answer's ${blocks.length} code block(s) defines ${input.kernel}`;
  }
  // The last complete block that defines the kernel: models often show the old code first, then the new.
  const complete = defining.filter((b) => b.closed || (input.finishReason !== 'length' && looksComplete(b.code, input)));
  if (!complete.length) return `the answer was cut off inside its code block (the model ran out of tokens or the fence was never closed)`;
  const block = complete[complete.length - 1];
  return toWholeFile(block.code, input);
}

/**
 * A Python answer that leaves the kernel alone and rewrites the function(s) that launch it (a launcher choosing
 * its configuration per shape from a table, the original computation as the fallback): each function of the
 * parent the block defines is spliced in, and the block's module-level assignments (the table) go in too, a new
 * one before the file's first definition, one the file has in place of it. Undefined when the block defines no
 * function of the parent.
 */
function fromLauncherBlocks(blocks: CodeBlock[], input: AnswerInput): { source: string; form: AnswerForm } | string | undefined {
  const functions = topLevelFunctions(input.parentSource, 'python').filter((f) => f !== input.kernel);
  const complete = blocks.filter((b) => b.closed || input.finishReason !== 'length');
  const block = [...complete].reverse().find((b) => functions.some((f) => defines(b.code, f, 'python')));
  if (!block) return undefined;
  let source = input.parentSource;
  for (const f of functions.filter((name) => defines(block.code, name, 'python'))) {
    try {
      source = spliceFunction(source, f, block.code, { lang: 'python' });
    } catch (e) {
      return `the answer's ${f} could not be spliced into the file: ${(e as Error).message}`;
    }
  }
  const mine = new Map(moduleAssignments(source).map((a) => [a.name, a]));
  const fresh: string[] = [];
  for (const a of moduleAssignments(block.code)) {
    const held = mine.get(a.name);
    if (!held) fresh.push(a.text);
    else if (held.text !== a.text) source = source.slice(0, held.start) + a.text + source.slice(held.end);
  }
  if (fresh.length) {
    const at = listFunctions(source, 'python', true).find((f) => f.indent === '')?.start ?? source.length;
    source = source.slice(0, at) + fresh.join('\n\n') + '\n\n\n' + source.slice(at);
  }
  return { source, form: 'launcher' };
}

/** Python statements `NAME = ...` at column 0 (a dict spread over lines included), with their extents. */
function moduleAssignments(code: string): Array<{ name: string; start: number; end: number; text: string }> {
  const masked = maskNonCode(code, 'python', { keepStrings: false });
  const out: Array<{ name: string; start: number; end: number; text: string }> = [];
  const re = /^([A-Za-z_]\w*)[ \t]*(?::[^=\n]*)?=(?!=)/gm;
  for (let m = re.exec(masked); m; m = re.exec(masked)) {
    let depth = 0;
    let k = m.index;
    for (; k < masked.length; k++) {
      const ch = masked[k];
      if ('([{'.includes(ch)) depth++;
      else if (')]}'.includes(ch)) depth--;
      else if (ch === '\n' && depth <= 0 && masked[k - 1] !== '\\') break;
    }
    out.push({ name: m[1], start: m.index, end: k, text: code.slice(m.index, k) });
    re.lastIndex = k;
  }
  return out;
}

/** An unclosed fence is still usable when its code is whole (a model that forgot the closing fence). */
function looksComplete(code: string, input: AnswerInput): boolean {
  if (input.language === 'python') return true;
  return braceBalance(code) === 0 && /\}\s*$/.test(maskNonCode(code, 'clike').trimEnd() + '\n');
}

/**
 * Whole file or one function? A block that brings the parent's #include/import lines, or that defines
 * every other top-level function of the parent, is the whole file; otherwise it replaces the kernel only.
 */
function toWholeFile(code: string, input: AnswerInput): { source: string; form: AnswerForm } | string {
  const text = code.replace(/\s+$/, '') + '\n';
  const balance = input.language === 'clike' ? braceBalance(text) : 0;
  if (balance !== 0) return unbalanced(balance);
  if (isWholeFile(text, input)) return { source: text, form: 'file' };
  let spliced: string;
  try {
    spliced = (input.splice ?? engineSplice)(input.parentSource, input.kernel, text, input.language);
  } catch (e) {
    return `the answer's ${input.kernel} could not be spliced into the file: ${(e as Error).message}`;
  }
  return { source: input.language === 'clike' ? withNewDeclarations(spliced, text, input) : spliced, form: 'function' };
}

/**
 * The splice brings new helper functions and #includes; a function-only answer may also declare
 * file-scope constants, macros or type aliases next to the kernel (`constexpr int UNROLL = 8;`). Those the
 * file lacks go right before the kernel, and a constant the file has takes the answer's value, so the
 * candidate is what the model wrote.
 */
function withNewDeclarations(file: string, block: string, input: AnswerInput): string {
  let spliced = file;
  const known = new Set(fileConstants(spliced, 'clike'));
  const masked = maskNonCode(block, 'clike', { keepStrings: true });
  const lines = block.split('\n');
  const maskedLines = masked.split('\n');
  const found: string[] = [];
  let depth = 0;
  for (let i = 0; i < lines.length; i++) {
    const m = maskedLines[i];
    if (depth === 0) {
      const def = /^\s*#\s*define\s+([A-Za-z_]\w*)/.exec(m);
      const decl = /^(?:static\s+|inline\s+)*(?:constexpr|const)\b[^;=(]*?\b([A-Za-z_]\w*)\s*(?:\[[^\]]*\]\s*)?=/.exec(m)
        ?? /^(?:using\s+([A-Za-z_]\w*)\s*=|typedef\b[^;]*?\b([A-Za-z_]\w*)\s*;)/.exec(m);
      const name = def?.[1] ?? decl?.[1] ?? decl?.[2];
      if (name && known.has(name) && (def || /;\s*$/.test(m))) {
        // A constant the file has, with a new value: the answer's value wins (a one-line statement).
        const old = new RegExp(`^(?:#\\s*define\\s+${name}\\b|(?:static\\s+|inline\\s+)*(?:constexpr|const)\\b[^;=(\\n]*?\\b${name}\\s*=)[^\\n]*$`, 'm');
        const hit = old.exec(spliced);
        if (hit && !/\\$/.test(hit[0]) && /;\s*$|define/.test(hit[0]) && hit[0].trim() !== lines[i].trim() && !(def && /\\\s*$/.test(lines[i]))) {
          spliced = spliced.slice(0, hit.index) + lines[i] + spliced.slice(hit.index + hit[0].length);
        }
        continue;
      }
      if (name && !known.has(name) && !new RegExp(`\\b${name}\\b\\s*=|define\\s+${name}\\b|using\\s+${name}\\b|typedef\\b[^;]*\\b${name}\\s*;`).test(spliced)) {
        // the whole statement: a macro with its continuation lines, a declaration up to its `;`
        let j = i;
        if (def) while (j < lines.length - 1 && /\\\s*$/.test(lines[j])) j++;
        else {
          let d = 0;
          for (; j < lines.length; j++) {
            for (const ch of maskedLines[j]) d += ch === '{' ? 1 : ch === '}' ? -1 : 0;
            if (d <= 0 && /;\s*$/.test(maskedLines[j])) break;
          }
        }
        found.push(lines.slice(i, j + 1).join('\n'));
        i = j;
        continue;
      }
    }
    for (const ch of m) depth += ch === '{' ? 1 : ch === '}' ? -1 : 0;
  }
  if (!found.length) return spliced;
  const fn = findFunction(spliced, input.kernel, 'clike');
  if (!fn) return spliced;
  // before `extern "C"` / template heads that belong to the kernel's line
  const lineStart = spliced.lastIndexOf('\n', fn.start - 1) + 1;
  return spliced.slice(0, lineStart) + found.join('\n') + '\n\n' + spliced.slice(lineStart);
}

function isWholeFile(code: string, input: AnswerInput): boolean {
  const headerRe = input.language === 'python' ? /^(?:import|from)\s+\S+/gm : /^\s*#\s*include\s*[<"][^>"]+[>"]/gm;
  const parentHeaders = new Set((input.parentSource.match(headerRe) ?? []).map((h) => h.replace(/\s+/g, ' ').trim()));
  const codeHeaders = (code.match(headerRe) ?? []).map((h) => h.replace(/\s+/g, ' ').trim());
  if (codeHeaders.length && (parentHeaders.size === 0 || codeHeaders.some((h) => parentHeaders.has(h)))) return true;
  // Every other top-level name of the parent (functions, file-scope constants) defined again: a whole file
  // that left out the includes, say.
  const functions = topLevelFunctions(input.parentSource, input.language).filter((f) => f !== input.kernel);
  const constants = fileConstants(input.parentSource, input.language);
  if (!functions.length && !constants.length) return false;
  const codeConstants = new Set(fileConstants(code, input.language));
  return functions.every((f) => defines(code, f, input.language)) && constants.every((c) => codeConstants.has(c));
}

/** Names of file-scope constants: #define and (constexpr) const at column 0 in C-like files, NAME = in Python. */
function fileConstants(source: string, language: SourceLanguage): string[] {
  const masked = maskNonCode(source, language, { keepStrings: true });
  const names = new Set<string>();
  const res = language === 'python'
    ? [/^([A-Za-z_]\w*)\s*(?::[^=\n]*)?=(?!=)/gm]
    : [/^#\s*define\s+([A-Za-z_]\w*)/gm, /^(?:static\s+|inline\s+)*(?:constexpr|const)\b[^;=(\n]*?\b([A-Za-z_]\w*)\s*(?:\[[^\]]*\]\s*)?=/gm];
  for (const re of res) for (const m of masked.matchAll(re)) names.add(m[1]);
  return [...names];
}

function topLevelFunctions(source: string, language: SourceLanguage): string[] {
  // a Python file's classes are not among the names a whole file must define again
  return [...new Set(listFunctions(source, language, true).filter((f) => !f.isClass).map((f) => f.name))];
}

// ---------------------------------------------------------------------------------------------------------
// No fence at all: the answer may still be just the function, or the whole file.

function fromUnfenced(text: string, input: AnswerInput): { source: string; form: AnswerForm; code?: string } | string {
  const fn = extractFunction(text, input.kernel, input.language);
  if (!fn) return `the answer has no code block and does not define ${input.kernel}`;
  const lines = text.split('\n');
  const firstCode = lines.findIndex((l) => l.trim() !== '');
  const startsAsCode = input.language === 'python'
    ? /^\s*(import|from|@|def|#)/.test(lines[firstCode])
    : /^\s*(#|\/\/|\/\*|template|extern|static|inline|void|int|float|double|__global__|namespace|using|typedef|struct|constexpr)/.test(lines[firstCode]);
  if (startsAsCode && isWholeFile(text, input)) return { source: text.replace(/\s+$/, '') + '\n', form: 'file', code: text };
  const r = toWholeFile(fn, input);
  return typeof r === 'string' ? r : { ...r, code: fn };
}

/** The kernel's definition (with its decorators or leading specifiers) and body, cut out of prose. */
function extractFunction(text: string, kernel: string, language: SourceLanguage): string | undefined {
  // Prose before the code can read as the start of a statement that swallows the kernel's head (a sentence
  // taken for a declaration's type, `Here:` eating a decorator): blank the leading lines one by one until
  // the kernel parses whole, offsets unchanged.
  let fn = findFunction(text, kernel, language);
  for (let from = 0; from >= 0 && !fn?.wellFormed; from = text.indexOf('\n', from + 1)) {
    const found = findFunction(text.slice(0, from).replace(/[^\n]/g, ' ') + text.slice(from), kernel, language);
    if (found?.wellFormed && found.start >= from) fn = found;
  }
  if (!fn) return undefined;
  // from the start of its line, so a method keeps the indentation its body is written against
  const lineStart = text.lastIndexOf('\n', fn.start - 1) + 1;
  return text.slice(text.slice(lineStart, fn.start).trim() ? fn.start : lineStart, fn.end);
}

// ---------------------------------------------------------------------------------------------------------

/** True when `kernel` is defined with C linkage: `extern "C"` before it, or inside an `extern "C" { ... }` block. */
function hasCLinkage(source: string, kernel: string): boolean | undefined {
  return findFunction(source, kernel, 'clike')?.cLinkage;
}

/**
 * Models often drop `extern "C"` when they rewrite the function; the spec's launch() finds the kernel by its
 * C name, so the candidate keeps the parent's linkage.
 */
function keepCLinkage(source: string, parentSource: string, kernel: string): string {
  if (!hasCLinkage(parentSource, kernel) || hasCLinkage(source, kernel) !== false) return source;
  const fn = findFunction(source, kernel, 'clike')!;
  return source.slice(0, fn.start) + 'extern "C" ' + source.slice(fn.start);
}

/** A rewritten Triton kernel that lost its `@triton.jit` (or autotune) decorators gets the parent's back. */
function keepDecorators(source: string, parentSource: string, kernel: string): string {
  const parent = findFunction(parentSource, kernel, 'python');
  const mine = findFunction(source, kernel, 'python');
  if (!parent || !mine) return source;
  const decorators = /^(?:[ \t]*@[^\n]*\n)+/.exec(parentSource.slice(parent.start, parent.end))?.[0];
  if (!decorators || /^\s*@/.test(source.slice(mine.start, mine.end))) return source;
  return source.slice(0, mine.start) + decorators.replace(/^[ \t]*/gm, mine.indent) + source.slice(mine.start);
}

function unbalanced(balance: number): string {
  return `the code's braces do not balance (${balance > 0 ? `${balance} more {` : `${-balance} more }`}); it is incomplete`;
}

/** `{` minus `}` outside comments and literals. */
export function braceBalance(code: string): number {
  const masked = maskNonCode(code, 'clike');
  let n = 0;
  for (const c of masked) {
    if (c === '{') n++;
    else if (c === '}') n--;
  }
  return n;
}

function sameText(a: string, b: string): boolean {
  const norm = (s: string) => s.replace(/\r\n?/g, '\n').split('\n').map((l) => l.trimEnd()).join('\n').trim();
  return norm(a) === norm(b);
}

/**
 * One paragraph that says what the answer changed and why: a paragraph labelled Rationale/Idea/Approach
 * when there is one, else the first paragraph of prose outside the code.
 */
export function extractRationale(answer: string, maxChars = 600): string {
  const { text } = stripThinking(answer.replace(/\r\n?/g, '\n'));
  const prose = text
    .replace(/^[ \t]*(`{3,}|~{3,})[^\n]*\n[\s\S]*?(?:^[ \t]*\1[ \t]*$|(?![\s\S]))/gm, '\n\n')
    .replace(/^[ \t]*<{5,9}[ \t]*SEARCH[\s\S]*?(?:^[ \t]*>{5,9}[ \t]*REPLACE[ \t]*$|(?![\s\S]))/gm, '\n\n');
  const paragraphs = prose.split(/\n\s*\n/).map((p) => p.trim()).filter(Boolean);
  const label = /^(?:#+\s*|\*\*)?(rationale|idea|approach|why|summary|strategy)\b\s*:?\**\s*:?\s*/i;
  let chosen = paragraphs.find((p) => label.test(p));
  if (chosen) {
    const rest = chosen.replace(label, '').trim();
    // "## Rationale" alone on its line labels the next paragraph.
    chosen = rest || paragraphs[paragraphs.indexOf(chosen) + 1] || '';
  } else {
    // Skip headings and lead-ins such as "Here is the faster kernel:".
    const prose = paragraphs.filter((p) => !/^#+\s/.test(p) || p.includes('\n'));
    chosen = prose.find((p) => !/:\s*$/.test(p)) ?? prose[0] ?? '';
  }
  const flat = chosen.replace(/^#+\s*/gm, '').replace(/\s+/g, ' ').trim();
  if (flat.length <= maxChars) return flat;
  const cut = flat.slice(0, maxChars);
  const stop = cut.lastIndexOf('. ');
  return (stop > maxChars / 2 ? cut.slice(0, stop + 1) : cut.trimEnd() + '…');
}
