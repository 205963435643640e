// A line diff of two whole files (the baseline and a candidate), for the panel and for accepting the parts
// of a candidate outside its kernel.

export type DiffOp = { kind: 'ctx' | 'del' | 'add'; oldNo?: number; newNo?: number; text: string };

/** Line-level diff: common prefix/suffix trimmed, the middle by longest common subsequence. */
export function diffLines(a: string, b: string): DiffOp[] {
  const x = a.split('\n');
  const y = b.split('\n');
  let pre = 0;
  while (pre < x.length && pre < y.length && x[pre] === y[pre]) pre++;
  let suf = 0;
  while (suf < x.length - pre && suf < y.length - pre && x[x.length - 1 - suf] === y[y.length - 1 - suf]) suf++;
  const xm = x.slice(pre, x.length - suf);
  const ym = y.slice(pre, y.length - suf);
  const ops: DiffOp[] = [];
  for (let i = 0; i < pre; i++) ops.push({ kind: 'ctx', oldNo: i + 1, newNo: i + 1, text: x[i] });
  const n = xm.length;
  const m = ym.length;
  if (n * m > 4_000_000) {
    // Too large to align line by line: show it as one replacement.
    xm.forEach((t, i) => ops.push({ kind: 'del', oldNo: pre + i + 1, text: t }));
    ym.forEach((t, j) => ops.push({ kind: 'add', newNo: pre + j + 1, text: t }));
  } else {
    const L = Array.from({ length: n + 1 }, () => new Uint32Array(m + 1));
    for (let i = n - 1; i >= 0; i--) for (let j = m - 1; j >= 0; j--) {
      L[i][j] = xm[i] === ym[j] ? L[i + 1][j + 1] + 1 : Math.max(L[i + 1][j], L[i][j + 1]);
    }
    let i = 0;
    let j = 0;
    while (i < n || j < m) {
      if (i < n && j < m && xm[i] === ym[j]) { ops.push({ kind: 'ctx', oldNo: pre + i + 1, newNo: pre + j + 1, text: xm[i] }); i++; j++; }
      else if (i < n && (j >= m || L[i + 1][j] >= L[i][j + 1])) { ops.push({ kind: 'del', oldNo: pre + i + 1, text: xm[i] }); i++; }
      else { ops.push({ kind: 'add', newNo: pre + j + 1, text: ym[j] }); j++; }
    }
  }
  for (let k = 0; k < suf; k++) {
    ops.push({ kind: 'ctx', oldNo: x.length - suf + k + 1, newNo: y.length - suf + k + 1, text: x[x.length - suf + k] });
  }
  return ops;
}

export interface Hunk {
  /** Zero-based line range [oldStart, oldEnd) in the old text replaced by `newLines`. */
  oldStart: number;
  oldEnd: number;
  oldLines: string[];
  newLines: string[];
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
