// Lexical helpers shared by splicing, knob detection and hashing: which language a kernel file is, and a
// scanner that tells code from comments and strings, so no brace or `=` inside a string is taken for code.
import { createHash } from 'node:crypto';

export type SourceLanguage = 'python' | 'clike';

export function languageOf(fileName: string): SourceLanguage {
  return /\.(py|pyi)$/i.test(fileName) ? 'python' : 'clike';
}

/** A span of the file that is not code: a comment or a string/char literal (quotes included). */
export interface NonCodeSpan {
  start: number;
  end: number;
  kind: 'comment' | 'string';
}

/** Comments and literals of a C/C++/CUDA file, in order. Raw strings R"d(...)d" are handled. */
export function clikeNonCode(src: string): NonCodeSpan[] {
  const spans: NonCodeSpan[] = [];
  let i = 0;
  const n = src.length;
  while (i < n) {
    const c = src[i];
    if (c === '/' && src[i + 1] === '/') {
      let j = i + 2;
      // a backslash at the end of a line continues a // comment
      while (j < n && src[j] !== '\n') j += src[j] === '\\' && src[j + 1] === '\n' ? 2 : 1;
      spans.push({ start: i, end: j, kind: 'comment' });
      i = j;
    } else if (c === '/' && src[i + 1] === '*') {
      const j = src.indexOf('*/', i + 2);
      const end = j < 0 ? n : j + 2;
      spans.push({ start: i, end, kind: 'comment' });
      i = end;
    } else if (c === 'R' && src[i + 1] === '"' && !/[A-Za-z0-9_]/.test(src[i - 1] ?? '')) {
      const open = src.indexOf('(', i + 2);
      const delim = open > 0 ? src.slice(i + 2, open) : '';
      const close = open > 0 ? src.indexOf(`)${delim}"`, open) : -1;
      const end = close < 0 ? n : close + delim.length + 2;
      spans.push({ start: i, end, kind: 'string' });
      i = end;
    } else if (c === '"' || (c === "'" && !/[0-9A-Fa-f]/.test(src[i - 1] ?? ''))) {
      // a ' right after a hex digit is a C++14 digit separator (1'000), not a char literal
      let j = i + 1;
      while (j < n && src[j] !== c && src[j] !== '\n') j += src[j] === '\\' ? 2 : 1;
      const end = Math.min(n, j + 1);
      spans.push({ start: i, end, kind: 'string' });
      i = end;
    } else {
      i++;
    }
  }
  return spans;
}

/** Comments and literals of a Python file (triple-quoted, prefixed and plain strings). */
export function pythonNonCode(src: string): NonCodeSpan[] {
  const spans: NonCodeSpan[] = [];
  let i = 0;
  const n = src.length;
  while (i < n) {
    const c = src[i];
    if (c === '#') {
      let j = src.indexOf('\n', i);
      if (j < 0) j = n;
      spans.push({ start: i, end: j, kind: 'comment' });
      i = j;
    } else if (c === '"' || c === "'") {
      let start = i;
      // include a string prefix such as r, b, f, rb
      while (start > 0 && /[rRbBuUfF]/.test(src[start - 1]) && i - start < 2) start--;
      if (start < i && /[A-Za-z0-9_]/.test(src[start - 1] ?? '')) start = i;
      const triple = src.startsWith(c.repeat(3), i);
      const q = triple ? c.repeat(3) : c;
      let j = i + q.length;
      while (j < n && !src.startsWith(q, j)) {
        if (!triple && src[j] === '\n') break;
        j += src[j] === '\\' ? 2 : 1;
      }
      const end = Math.min(n, j + (src.startsWith(q, j) ? q.length : 0));
      spans.push({ start, end, kind: 'string' });
      i = end;
    } else {
      i++;
    }
  }
  return spans;
}

export function nonCodeSpans(src: string, lang: SourceLanguage): NonCodeSpan[] {
  return lang === 'python' ? pythonNonCode(src) : clikeNonCode(src);
}

/** The source with every comment and literal blanked to spaces (newlines kept): offsets stay valid. */
export function maskNonCode(src: string, lang: SourceLanguage, opts: { keepStrings?: boolean } = {}): string {
  const out = src.split('');
  for (const s of nonCodeSpans(src, lang)) {
    if (opts.keepStrings && s.kind === 'string') continue;
    for (let k = s.start; k < s.end; k++) if (out[k] !== '\n') out[k] = ' ';
  }
  return out.join('');
}

/**
 * The text that decides whether two candidates are the same program: comments dropped, trailing blanks
 * and blank lines dropped, and (in C-like files, where layout means nothing) runs of whitespace collapsed.
 */
export function normalizeSource(src: string, lang: SourceLanguage): string {
  const text = src.replace(/\r\n?/g, '\n');
  let out = '';
  let last = 0;
  for (const s of nonCodeSpans(text, lang)) {
    out += text.slice(last, s.start);
    if (s.kind === 'string') out += text.slice(s.start, s.end);
    last = s.end;
  }
  out += text.slice(last);
  if (lang === 'clike') return out.replace(/\s+/g, ' ').trim();
  return out.split('\n').map((l) => l.replace(/\s+$/, '')).filter((l) => l.length > 0).join('\n');
}

/** Hash of the normalized source: candidates with the same hash are evaluated once. */
export function sourceHash(src: string, lang: SourceLanguage): string {
  return createHash('sha256').update(normalizeSource(src, lang)).digest('hex').slice(0, 16);
}
