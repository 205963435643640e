// A unified diff of two versions of a file (what `diff -u` prints), for the CLI's report and the store.
// Line-based LCS via Myers' O(ND) algorithm, so kernels of thousands of lines with small changes are quick.

type Op = { kind: ' ' | '-' | '+'; line: string };

function myers(a: string[], b: string[]): Op[] {
  const n = a.length;
  const m = b.length;
  const max = n + m;
  const v = new Map<number, number>([[1, 0]]);
  const trace: Array<Map<number, number>> = [];
  outer: for (let d = 0; d <= max; d++) {
    trace.push(new Map(v));
    for (let k = -d; k <= d; k += 2) {
      let x = k === -d || (k !== d && (v.get(k - 1) ?? -1) < (v.get(k + 1) ?? -1)) ? v.get(k + 1)! : v.get(k - 1)! + 1;
      let y = x - k;
      while (x < n && y < m && a[x] === b[y]) {
        x++;
        y++;
      }
      v.set(k, x);
      if (x >= n && y >= m) break outer;
    }
  }
  // walk the trace back from (n, m)
  const ops: Op[] = [];
  let x = n;
  let y = m;
  for (let d = trace.length - 1; d >= 0; d--) {
    const vd = trace[d];
    const k = x - y;
    const prevK = k === -d || (k !== d && (vd.get(k - 1) ?? -1) < (vd.get(k + 1) ?? -1)) ? k + 1 : k - 1;
    const prevX = vd.get(prevK) ?? 0;
    const prevY = prevX - prevK;
    while (x > prevX && y > prevY) {
      ops.push({ kind: ' ', line: a[--x] });
      y--;
    }
    if (d > 0) {
      if (x === prevX) ops.push({ kind: '+', line: b[--y] });
      else ops.push({ kind: '-', line: a[--x] });
    }
  }
  return ops.reverse();
}

function splitLines(text: string): string[] {
  const lines = text.split('\n');
  if (lines[lines.length - 1] === '') lines.pop();
  return lines;
}

/** `diff -u` style text; empty when the texts are equal. */
export function unifiedDiff(before: string, after: string, names: { from?: string; to?: string } = {}, context = 3): string {
  if (before === after) return '';
  const a = splitLines(before);
  const b = splitLines(after);
  const ops = myers(a, b);
  const out: string[] = [`--- ${names.from ?? 'a'}`, `+++ ${names.to ?? 'b'}`];
  let i = 0;
  while (i < ops.length) {
    while (i < ops.length && ops[i].kind === ' ') i++;
    if (i >= ops.length) break;
    let start = Math.max(0, i - context);
    let end = i;
    // extend the hunk while changes are closer than 2*context lines apart
    for (;;) {
      while (end < ops.length && ops[end].kind !== ' ') end++;
      let next = end;
      while (next < ops.length && ops[next].kind === ' ') next++;
      if (next < ops.length && next - end <= 2 * context) end = next;
      else break;
    }
    end = Math.min(ops.length, end + context);
    let aLine = 1;
    let bLine = 1;
    for (let k = 0; k < start; k++) {
      if (ops[k].kind !== '+') aLine++;
      if (ops[k].kind !== '-') bLine++;
    }
    const hunk = ops.slice(start, end);
    const aCount = hunk.filter((o) => o.kind !== '+').length;
    const bCount = hunk.filter((o) => o.kind !== '-').length;
    out.push(`@@ -${aCount ? aLine : aLine - 1},${aCount} +${bCount ? bLine : bLine - 1},${bCount} @@`);
    for (const o of hunk) out.push(`${o.kind}${o.line}`);
    i = end;
    start = end;
  }
  return out.join('\n') + '\n';
}
