// Plans how a candidate goes into the file as it stands now: the kernel's range replaced by the
// candidate's kernel, plus the candidate's other changes (constants, helpers) where the file still reads
// as it did. All or nothing: when a part cannot be placed, the plan says why and nothing is applied.
import { hunks, type Hunk } from '../engine/sourceDiff';
import type { GrammarName, KernelLocator } from '../engine/kernelLocator';

export interface TextEdit {
  /** Offsets into the current text. */
  start: number;
  end: number;
  text: string;
}

export type AcceptPlan = { ok: true; edits: TextEdit[]; relocated: boolean } | { ok: false; reason: string };

function lineOffsets(text: string): number[] {
  const starts = [0];
  for (let i = 0; i < text.length; i++) if (text[i] === '\n') starts.push(i + 1);
  return starts;
}

function indexOfUnique(haystack: string, needle: string, allowed: (at: number) => boolean): number | 'none' | 'many' {
  const found: number[] = [];
  for (let at = haystack.indexOf(needle); at >= 0; at = haystack.indexOf(needle, at + 1)) if (allowed(at)) found.push(at);
  return found.length === 1 ? found[0] : found.length === 0 ? 'none' : 'many';
}

/** A change of the candidate within the kernel's lines of the baseline (the kernel goes in whole instead). */
function insideKernel(h: Hunk, base: { startLine: number; endLine: number } | undefined): boolean {
  return !!base && h.oldStart <= base.endLine && (h.oldEnd > base.startLine || h.oldStart >= base.startLine);
}

/** Whole lines of `text` at a line start. */
function hasLines(text: string, lines: readonly string[]): boolean {
  const block = lines.join('\n');
  for (let at = text.indexOf(block); at >= 0; at = text.indexOf(block, at + 1)) {
    const end = at + block.length;
    if ((at === 0 || text[at - 1] === '\n') && (end === text.length || text[end] === '\n')) return true;
  }
  return false;
}

/** The candidate is in the text already (accepted and not undone): its kernel as it has it, and each of its other
 *  changes (a tuned constant, a helper) made. A tuned variant often differs from the baseline outside the kernel
 *  only, so the kernel's text alone cannot tell. */
export function isVariantApplied(args: {
  locator: KernelLocator; grammar: GrammarName; kernel: string; baseline: string; candidate: string; current: string;
}): boolean {
  const { locator, grammar, kernel, baseline, candidate, current } = args;
  if (current === candidate) return true;
  const now = locator.byName(current, grammar, kernel);
  const cand = locator.byName(candidate, grammar, kernel);
  if (!now || !cand || current.slice(now.start, now.end) !== candidate.slice(cand.start, cand.end)) return false;
  const base = locator.byName(baseline, grammar, kernel);
  return hunks(baseline, candidate).every((h) => insideKernel(h, base)
    || (h.newLines.length ? hasLines(current, h.newLines) : !hasLines(current, h.oldLines)));
}

export function planAccept(args: {
  locator: KernelLocator; grammar: GrammarName; kernel: string; fileLabel: string;
  baseline: string; candidate: string; current: string;
}): AcceptPlan {
  const { locator, grammar, kernel, fileLabel, baseline, candidate, current } = args;
  if (current === baseline) {
    // The file is as the run saw it: the candidate's own changes, line by line.
    const offs = lineOffsets(current);
    const at = (line: number) => (line < offs.length ? offs[line] : current.length);
    const edits = hunks(baseline, candidate).map((h) => {
      if (h.oldEnd > h.oldStart) {
        // Replace whole lines, their final newline kept.
        const end = h.oldEnd < offs.length ? at(h.oldEnd) - 1 : current.length;
        return { start: at(h.oldStart), end, text: h.newLines.join('\n') };
      }
      // A pure insertion before line oldStart.
      return { start: at(h.oldStart), end: at(h.oldStart), text: h.newLines.map((l) => l + '\n').join('') };
    });
    return { ok: true, edits, relocated: false };
  }

  const now = locator.byName(current, grammar, kernel);
  if (!now) {
    return { ok: false, reason: `The kernel ${kernel} is no longer in ${fileLabel} (renamed or removed since the run started), so the variant cannot be applied. Use Preview to copy what you need.` };
  }
  const cand = locator.byName(candidate, grammar, kernel);
  if (!cand) return { ok: false, reason: `The variant has no function named ${kernel}; it cannot replace the kernel.` };
  const base = locator.byName(baseline, grammar, kernel);
  const edits: TextEdit[] = [{ start: now.start, end: now.end, text: candidate.slice(cand.start, cand.end) }];
  const outsideKernel = (at: number) => at + 1 <= now.start || at >= now.end;

  for (const h of hunks(baseline, candidate)) {
    if (insideKernel(h, base)) continue;
    const where = `line ${h.oldStart + 1} of the original`;
    if (h.oldLines.length) {
      const old = h.oldLines.join('\n');
      const at = indexOfUnique(current, old, (i) => outsideKernel(i) && (i === 0 || current[i - 1] === '\n'));
      if (typeof at !== 'number') {
        return { ok: false, reason: `The variant also changes ${where} ("${h.oldLines[0].trim()}"), which ${at === 'none' ? 'is no longer in' : 'now appears more than once in'} ${fileLabel}; edit the file back or apply the variant by hand from Preview.` };
      }
      edits.push({ start: at, end: at + old.length, text: h.newLines.join('\n') });
    } else {
      const anchorLine = baseline.split('\n')[h.oldStart - 1];
      if (anchorLine === undefined) {
        edits.push({ start: 0, end: 0, text: h.newLines.map((l) => l + '\n').join('') });
        continue;
      }
      const at = indexOfUnique(current, anchorLine + '\n', (i) => outsideKernel(i) && (i === 0 || current[i - 1] === '\n'));
      if (typeof at !== 'number') {
        return { ok: false, reason: `The variant adds lines after "${anchorLine.trim()}" (${where}), which ${at === 'none' ? 'is no longer in' : 'now appears more than once in'} ${fileLabel}; apply the variant by hand from Preview.` };
      }
      const pos = at + anchorLine.length + 1;
      edits.push({ start: pos, end: pos, text: h.newLines.map((l) => l + '\n').join('') });
    }
  }
  edits.sort((a, b) => a.start - b.start);
  for (let i = 1; i < edits.length; i++) {
    if (edits[i].start < edits[i - 1].end) return { ok: false, reason: `The variant's changes overlap the kernel as it now stands in ${fileLabel}; apply it by hand from Preview.` };
  }
  return { ok: true, edits, relocated: true };
}

/** The text after the edits (what the WorkspaceEdit will produce), for tests and previews. */
export function applyEdits(text: string, edits: readonly TextEdit[]): string {
  let out = text;
  for (const e of [...edits].sort((a, b) => b.start - a.start)) out = out.slice(0, e.start) + e.text + out.slice(e.end);
  return out;
}

/** A changed region as it stands in the document once the edits are applied (for the inline diff). */
export interface PendingHunk {
  /** First line of the new lines in the document (where the old ones were, for a pure deletion). */
  start: number;
  newCount: number;
  oldLines: string[];
}

/** The regions by which `expected` differs from `current`, placed in `expected`'s lines. */
export function pendingHunks(current: string, expected: string): PendingHunk[] {
  let shift = 0;
  return hunks(current, expected).map((h) => {
    const p = { start: h.oldStart + shift, newCount: h.newLines.length, oldLines: h.oldLines };
    shift += h.newLines.length - h.oldLines.length;
    return p;
  });
}
