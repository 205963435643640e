// Line diffs of two versions of a source file (the baseline and a candidate), by the `diff` package (jsdiff,
// Myers' algorithm): the unified text the CLI prints and the run store keeps (best.diff), the line operations
// the panel shows, and the changed regions that accepting a candidate applies.
import { createTwoFilesPatch, diffArrays, FILE_HEADERS_ONLY } from 'diff';

export type DiffOp = { kind: 'ctx' | 'del' | 'add'; oldNo?: number; newNo?: number; text: string };

export interface Hunk {
  /** Zero-based line range [oldStart, oldEnd) in the old text replaced by `newLines`. */
  oldStart: number;
  oldEnd: number;
  oldLines: string[];
  newLines: string[];
}

/** `diff -u` text; empty when the texts are equal. */
export function unifiedDiff(before: string, after: string, names: { from?: string; to?: string } = {}, context = 3): string {
  if (before === after) return '';
  return createTwoFilesPatch(names.from ?? 'a', names.to ?? 'b', before, after, undefined, undefined, { context, headerOptions: FILE_HEADERS_ONLY });
}

/** Every line of both texts as kept, deleted or added, with its line numbers (1-based). */
export function diffLines(a: string, b: string): DiffOp[] {
  const x = a.split('\n');
  const y = b.split('\n');
  // Past a few seconds of work the texts are too different to align usefully: one replacement.
  const changes = diffArrays(x, y, { timeout: 2000 }) ?? [{ value: x, removed: true, added: false }, { value: y, added: true, removed: false }];
  const ops: DiffOp[] = [];
  let oldNo = 1;
  let newNo = 1;
  for (const c of changes) {
    for (const text of c.value) {
      if (c.removed) ops.push({ kind: 'del', oldNo: oldNo++, text });
      else if (c.added) ops.push({ kind: 'add', newNo: newNo++, text });
      else ops.push({ kind: 'ctx', oldNo: oldNo++, newNo: newNo++, text });
    }
  }
  return ops;
}

/** The changed regions, each a replacement of old lines by new lines. */
export function hunks(a: string, b: string): Hunk[] {
  const out: Hunk[] = [];
  let cur: Hunk | undefined;
  let oldLine = 0;
  for (const op of diffLines(a, b)) {
    if (op.kind === 'ctx') {
      if (cur) { out.push(cur); cur = undefined; }
      oldLine++;
      continue;
    }
    cur ??= { oldStart: oldLine, oldEnd: oldLine, oldLines: [], newLines: [] };
    if (op.kind === 'del') { cur.oldLines.push(op.text); cur.oldEnd = ++oldLine; }
    else cur.newLines.push(op.text);
  }
  if (cur) out.push(cur);
  return out;
}

/** Keeps `context` unchanged lines around each change; longer unchanged runs become one `skip` marker. */
export function withContext(ops: DiffOp[], context = 3): (DiffOp | { kind: 'skip'; count: number })[] {
  const keep = ops.map(() => false);
  ops.forEach((op, i) => {
    if (op.kind !== 'ctx') for (let k = Math.max(0, i - context); k <= Math.min(ops.length - 1, i + context); k++) keep[k] = true;
  });
  const out: (DiffOp | { kind: 'skip'; count: number })[] = [];
  let skipped = 0;
  ops.forEach((op, i) => {
    if (keep[i]) {
      if (skipped) { out.push({ kind: 'skip', count: skipped }); skipped = 0; }
      out.push(op);
    } else skipped++;
  });
  if (skipped) out.push({ kind: 'skip', count: skipped });
  return out;
}
