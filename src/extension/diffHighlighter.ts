// Highlights a candidate's diff against the baseline with shiki, on the extension host, so the webview
// bundle carries no grammars. Only the two grammars and two themes we need are loaded, with shiki's
// JavaScript regex engine (no oniguruma wasm).
import type { HighlighterCore } from 'shiki/core';
import type { DiffLine, DiffToken } from '../protocol';
import { diffLines, withContext } from '../engine/sourceDiff';

let highlighter: Promise<HighlighterCore> | undefined;

async function load(): Promise<HighlighterCore> {
  const [{ createHighlighterCore }, { createJavaScriptRegexEngine }] = await Promise.all([
    import('shiki/core'), import('shiki/engine/javascript'),
  ]);
  return createHighlighterCore({
    themes: [import('@shikijs/themes/light-plus'), import('@shikijs/themes/dark-plus')],
    langs: [import('@shikijs/langs/cpp'), import('@shikijs/langs/python')],
    engine: createJavaScriptRegexEngine({ forgiving: true }),
  });
}

export function shikiLanguage(fileName: string): 'python' | 'cpp' {
  return fileName.endsWith('.py') ? 'python' : 'cpp';
}

async function tokenLines(code: string, lang: 'python' | 'cpp'): Promise<DiffToken[][]> {
  highlighter ??= load();
  const hl = await highlighter;
  const { tokens } = hl.codeToTokens(code, { lang, themes: { light: 'light-plus', dark: 'dark-plus' }, defaultColor: false });
  return tokens.map((line) => line.map((t) => ({
    text: t.content,
    light: t.htmlStyle?.['--shiki-light'],
    dark: t.htmlStyle?.['--shiki-dark'],
  })));
}

/** The diff of baseline -> candidate with context, each line split into coloured tokens. */
export async function highlightedDiff(baseline: string, candidate: string, fileName: string, context = 3): Promise<DiffLine[]> {
  const lang = shikiLanguage(fileName);
  const [oldTok, newTok] = await Promise.all([tokenLines(baseline, lang), tokenLines(candidate, lang)]);
  return withContext(diffLines(baseline, candidate), context).map((op) => {
    if (op.kind === 'skip') return { kind: 'skip', tokens: [{ text: `… ${op.count} unchanged lines` }] };
    const tokens = op.kind === 'add' ? newTok[op.newNo! - 1] : oldTok[op.oldNo! - 1];
    return { kind: op.kind, oldNo: op.oldNo, newNo: op.newNo, tokens: tokens ?? [{ text: op.text }] };
  });
}
