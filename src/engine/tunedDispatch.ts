// A dispatching launcher: one candidate whose launch parameters come from a small table keyed on the launch's
// shape values (and/or the device's compute capability), with the original computation as the fallback for
// anything not in the table. Written into the original file as plain Python: a module-level dict per launcher, right
// above the launcher's definition, and, at each place a tuned knob is written,
// `TABLE.get(key, {}).get("knob", <original text>)`, so every other line is the file's own and a shape the table does
// not list runs exactly as before. A knob that is a default of the launcher's own parameter (`BLOCK_M=128`) becomes
// `BLOCK_M=None`, and where the body first reads it, `BLOCK_M = TABLE...get("BLOCK_M", 128) if BLOCK_M is None else
// BLOCK_M`: a caller's own value is kept.
import type { Knob, KnobSet, KnobValues } from './knobs';
import { maskNonCode } from './sourceText';
import { listFunctions, type FunctionSpan } from './splice';
import { shapeVariables } from './tritonLaunch';

export interface DispatchEntry {
  /** The spec's shape (its dict), when the entry is per shape. */
  shape?: Record<string, unknown>;
  /** CUDA compute capability, when the entry is per device. */
  capability?: [number, number];
  /** The knob values chosen for it (0 or the baseline's value: as the original computes it). */
  values: KnobValues;
}

export interface DispatchTable {
  launcher: string;
  /** The Python name of the table. */
  name: string;
  /** The launcher's variables the shape key is made of, in order (empty: keyed on the device only). */
  keyNames: string[];
  byDevice: boolean;
  rows: Array<{ key?: number[]; capability?: [number, number]; values: KnobValues }>;
}

export type DispatchResult = { source: string; tables: DispatchTable[] } | { error: string };

/** CUDA compute capability of a host's `hardware` name (`nvidia-h200`: 9.0); undefined when not known. */
export function cudaCapabilityOf(hardware: string | undefined): [number, number] | undefined {
  const hw = (hardware ?? '').toLowerCase();
  const table: Array<[RegExp, [number, number]]> = [
    [/\b(b200|b100|gb200|blackwell|sm_?100)\b/, [10, 0]],
    [/\b(h100|h200|h800|h20|gh200|hopper|sm_?90a?)\b/, [9, 0]],
    [/\b(l4|l40s?|rtx-?40\d0|ada|sm_?89)\b/, [8, 9]],
    [/\b(a10g?|a40|a6000|rtx-?30\d0|sm_?86)\b/, [8, 6]],
    [/\b(a100|a800|a30|sm_?80)\b/, [8, 0]],
    [/\b(t4|turing|sm_?75)\b/, [7, 5]],
    [/\b(v100|volta|sm_?70)\b/, [7, 0]],
  ];
  return table.find(([re]) => re.test(hw))?.[1];
}

/** The launcher variable a spec shape's key stands for: the same name, or `n_cols` for `cols`, `M` for `m`. */
function shapeKeyFor(variable: string, shape: Record<string, unknown>): string | undefined {
  const v = variable.toLowerCase();
  const keys = Object.keys(shape).filter((k) => typeof shape[k] === 'number');
  const forms = (k: string) => [`n_${k}`, `num_${k}`, `n${k}`, `${k}_size`].includes(v) || v.endsWith(`_${k}`);
  return keys.find((k) => k.toLowerCase() === v) ?? keys.find((k) => forms(k.toLowerCase()));
}

function pyValue(v: number): string {
  return String(v);
}

/** A launcher's name: a method's with its class's (`_TritonSoftmaxFn.forward`) where another function of the file
 *  has its name, else its own. */
function launcherName(fn: FunctionSpan, functions: readonly FunctionSpan[]): string {
  const cls = functions.filter((f) => f.isClass && fn.start > f.start && fn.start <= f.end).sort((a, b) => b.start - a.start)[0];
  const twin = functions.some((f) => f !== fn && !f.isClass && f.name === fn.name);
  return cls && twin ? `${cls.name}.${fn.name}` : fn.name;
}

function tableName(launcher: string, byShape: boolean, byDevice: boolean): string {
  const base = launcher.replace(/^_+/, '').replace(/\W+/g, '_').toUpperCase();
  return `KERNELEVOLVE_${base}_BY_${[byDevice ? 'DEVICE' : '', byShape ? 'SHAPE' : ''].filter(Boolean).join('_AND_')}`;
}

/**
 * The baseline with a dispatch on the knobs the entries change. Every changed knob must be written inside a
 * launcher function (its values are looked up where the launch happens) or as a default of its parameters (looked
 * up where the body first reads it), and a per-shape entry must map onto variables that launcher assigns from
 * tensor shapes before the first tuned place.
 */
export function writeDispatch(baseline: string, given: KnobSet, asked: DispatchEntry[]): DispatchResult {
  const { set, entries } = splitByLine(baseline, given, asked);
  const masked = maskNonCode(baseline, 'python');
  const functions = listFunctions(baseline, 'python');
  const changed = set.knobs.filter((k) => entries.some((e) => e.values[k.name] !== undefined && e.values[k.name] !== 0 && e.values[k.name] !== k.value));
  if (!changed.length) return { error: 'the entries change no knob' };
  const byShape = entries.some((e) => e.shape);
  const byDevice = entries.some((e) => e.capability);
  // each knob's places grouped by the launcher they are in (a literal shared by a forward and a backward
  // launcher has a place in each); a place outside any function keeps its text
  // (keyed by the function itself: two methods of one name, the `forward` of a softmax's and of a log-softmax's
  // autograd function, are two launchers, each with its own shape variables and table)
  const groups = new Map<FunctionSpan, { launcher: string; knobs: Knob[] }>();
  for (const k of changed) {
    const byFn = new Map<FunctionSpan, Array<[number, number]>>();
    for (const span of k.spans) {
      const fn = functions.filter((f) => span[0] > f.start && span[0] <= f.end).sort((a, b) => b.start - a.start)[0];
      if (fn) byFn.set(fn, [...(byFn.get(fn) ?? []), span]);
    }
    if (!byFn.size) return { error: `${k.name} is not set inside a launcher function, so it cannot be chosen per ${byShape ? 'shape' : 'device'}` };
    for (const [fn, spans] of byFn) {
      const g = groups.get(fn) ?? { launcher: launcherName(fn, functions), knobs: [] };
      g.knobs.push({ ...k, spans });
      groups.set(fn, g);
    }
  }
  const tables: Array<DispatchTable & { fn: FunctionSpan }> = [];
  const unkeyed: string[] = [];
  const edits: Array<{ start: number; end: number; text: string }> = [];
  for (const [fn, { launcher, knobs }] of groups) {
    // a knob written as a default of the launcher's own parameter (`def matmul(a, b, BLOCK_M=128)`) is looked up
    // where the body first reads it, after the shape is known; its other places, where they are
    const params = parameterKnobs(baseline, masked, fn, knobs);
    if ('error' in params) {
      unkeyed.push(params.error);
      continue;
    }
    const first = Math.min(...knobs.flatMap((k) => k.spans.filter((s) => !params.spans.has(s)).map(([s]) => s)), params.firstRead ?? Infinity);
    let keyNames: string[] = [];
    let keys: Array<number[] | undefined> = entries.map(() => undefined);
    if (byShape) {
      const variables = shapeVariables(masked, fn, first);
      keyNames = variables.filter((v) => entries.every((e) => !e.shape || shapeKeyFor(v, e.shape) !== undefined));
      let keyOf = (v: string, shape: Record<string, unknown>) => shapeKeyFor(v, shape)!;
      // no name in common (`M, N = x.shape` against a spec's rows and cols): as many shape variables as the spec's
      // shapes have numbers, taken in order (the table is judged on every shape like any candidate)
      const numeric = (shape: Record<string, unknown>) => Object.keys(shape).filter((k) => typeof shape[k] === 'number');
      const shaped = entries.filter((e) => e.shape).map((e) => numeric(e.shape!));
      if (!keyNames.length && variables.length && shaped.every((keys) => keys.join() === shaped[0].join() && keys.length === variables.length)) {
        keyNames = variables;
        keyOf = (v, shape) => numeric(shape)[variables.indexOf(v)];
      }
      if (!keyNames.length) {
        unkeyed.push(`${launcher}() has no shape variable that matches the spec's shapes (${Object.keys(entries.find((e) => e.shape)!.shape!).join(', ')}); found ${variables.join(', ') || 'none'}`);
        continue;
      }
      keys = entries.map((e) => (e.shape ? keyNames.map((v) => Number(e.shape![keyOf(v, e.shape!)])) : undefined));
    }
    const name = tableName(launcher, byShape, byDevice);
    const rows: DispatchTable['rows'] = [];
    const seen = new Set<string>();
    for (const [i, e] of entries.entries()) {
      const values: KnobValues = {};
      for (const k of knobs) if (e.values[k.name] !== undefined && e.values[k.name] !== 0 && e.values[k.name] !== k.value) values[k.name] = e.values[k.name];
      if (!Object.keys(values).length) continue;
      const id = JSON.stringify([e.capability, keys[i]]);
      if (seen.has(id)) continue; // two shapes the launcher cannot tell apart: the first (best-ranked) one is kept
      seen.add(id);
      rows.push({ key: keys[i], capability: e.capability, values });
    }
    if (!rows.length) continue;
    tables.push({ launcher, name, keyNames, byDevice, rows, fn });
    const key = keyNames.length === 1 ? `(${keyNames[0]},)` : `(${keyNames.join(', ')})`;
    const lookup = [name, byDevice ? '.get(torch.cuda.get_device_capability(), {})' : '', byShape ? `.get(${key}, {})` : ''].join('');
    // launch options inserted at one place (warps and stages a launch leaves to Triton) share one `**` there
    const inserted = new Set<number>();
    if (params.knobs.length) {
      // the default becomes None (a caller's own value is kept), and the table's value is read for a call without one
      const reads = params.knobs.map(({ knob, name, span }) => {
        edits.push({ start: span[0], end: span[1], text: 'None' });
        return `${name} = ${lookup}.get(${JSON.stringify(knob.name)}, ${baseline.slice(span[0], span[1])}) if ${name} is None else ${name}`;
      });
      const { at, indent, joined } = params.insertAt!;
      edits.push({ start: at, end: at, text: joined ? `${reads.join('; ')}; ` : reads.map((r) => `${indent}${r}\n`).join('') });
    }
    for (const k of knobs) {
      for (const span of k.spans) {
        if (params.spans.has(span)) continue;
        const [start, end] = span;
        if (k.insert) {
          if (!inserted.has(start)) edits.push({ start, end, text: `, **${lookup}.get("launch options", {})` });
          inserted.add(start);
        } else {
          edits.push({ start, end, text: `${lookup}.get(${JSON.stringify(k.name)}, ${baseline.slice(start, end)})` });
        }
      }
    }
  }
  if (!tables.length) return { error: unkeyed.length ? unkeyed.join('; ') : 'no entry changes a knob' };
  // each table goes where no kernel moves: Triton keys a compiled kernel on its source and its first line (and those
  // of the @triton.jit functions it calls), so with every kernel on its line the table's kernels are those its rows'
  // candidates compiled when they were judged (the host's store), not compiled again on every shape
  for (const t of tables) {
    const at = tableAt(baseline, functions, t.fn);
    edits.push({ start: at.offset, end: at.offset, text: at.after ? `${baseline[at.offset - 1] === '\n' ? '' : '\n'}\n\n${renderTable(t, set)}\n` : `${renderTable(t, set)}\n\n` });
  }
  let out = baseline;
  // from the end of the file back; two tables at one place keep their order (the later edit is applied first)
  const order = edits.map((e, i) => ({ e, i })).sort((a, b) => b.e.start - a.e.start || b.i - a.i);
  for (const { e } of order) out = out.slice(0, e.start) + e.text + out.slice(e.end);
  if (byDevice && !/^import torch\b|^from torch\b/m.test(out)) out = `import torch\n${out}`;
  return { source: out, tables: tables.map(({ fn: _fn, ...t }) => t) };
}

/** A function defined under `@triton.jit` (or an autotuner or heuristics over one): a kernel Triton compiles. */
const isJit = (source: string, f: FunctionSpan) => /@(?:triton\.)?(?:jit|autotune|heuristics)\b/.test(source.slice(f.start, source.indexOf('def ', f.start)));

/** A statement that opens a block: the table's reads cannot be joined to its line. */
const COMPOUND = /^(?:if|elif|else|for|while|with|try|except|finally|def|class|async|match|case|@)\b/;

/**
 * The knobs of a launcher written as defaults of its own parameters (`def matmul(a, b, BLOCK_M=128)`), each with the
 * parameter's name and the default's span, the offset of the body's first read of any of them (`firstRead`), and
 * where the table's reads go: lines of their own right above that read's line, or, where a @triton.jit function is
 * defined below the launcher, the start of that line itself (Triton keys a compiled kernel on its first line: a
 * kernel that moved would be compiled again for every table, not taken from the host's store). An error where the
 * first read is inside a block (the reads would not reach a later one) or on a line that opens a block.
 */
function parameterKnobs(source: string, masked: string, fn: FunctionSpan, knobs: Knob[]): {
  knobs: Array<{ knob: Knob; name: string; span: [number, number] }>; spans: Set<[number, number]>; firstRead?: number;
  insertAt?: { at: number; indent: string; joined: boolean };
} | { error: string } {
  const header = headerEnd(masked, fn);
  const found: Array<{ knob: Knob; name: string; span: [number, number] }> = [];
  const def = masked.indexOf('def ', fn.start);
  for (const knob of knobs) {
    for (const span of knob.spans) {
      if (header === undefined || span[0] < def || span[0] >= header) continue; // a decorator's or the body's
      const name = /([A-Za-z_]\w*)\s*(?::[^=,()]*)?=\s*$/.exec(masked.slice(fn.start, span[0]))?.[1];
      if (name) found.push({ knob, name, span });
    }
  }
  if (!found.length || header === undefined) return { knobs: [], spans: new Set() };
  const spans = new Set(found.map((f) => f.span));
  const body = masked.slice(header, fn.end);
  const reads = found.map((f) => new RegExp(`(?<![\\w.])${f.name}\\b`).exec(body)?.index); // not `cfg.BLOCK_M`
  const unread = found.filter((_, i) => reads[i] === undefined).map((f) => f.name);
  if (unread.length) return { error: `${unread.join(', ')} of ${fn.name}() ${unread.length > 1 ? 'are' : 'is'} not read in its body, so a table there would change nothing` };
  const firstRead = header + Math.min(...reads.map((i) => i!));
  const lineStart = source.lastIndexOf('\n', firstRead - 1) + 1;
  const indent = /^[ \t]*/.exec(source.slice(lineStart))![0];
  const bodyIndent = /\n([ \t]+)\S/.exec(masked.slice(header))?.[1];
  const names = [...new Set(found.map((f) => f.name))];
  const cannot = (where: string) => ({ error: `${names.join(', ')} of ${fn.name}() ${names.length > 1 ? 'are' : 'is'} first read ${where}, so `
    + `${names.length > 1 ? 'they' : 'it'} cannot be chosen per shape there` });
  if (indent !== bodyIndent) return cannot('inside a block');
  const below = listFunctions(source, 'python').some((f) => f.start > fn.end && isJit(source, f));
  if (below && COMPOUND.test(source.slice(lineStart + indent.length))) return cannot('on a line that opens a block');
  return { knobs: found, spans, firstRead, insertAt: { at: below ? lineStart + indent.length : lineStart, indent, joined: below } };
}

/** The offset right after the `:` that ends a `def`'s header (its parameters and return annotation), in masked text. */
function headerEnd(masked: string, fn: FunctionSpan): number | undefined {
  const open = masked.indexOf('(', masked.indexOf('def ', fn.start));
  if (open < 0 || open > fn.end) return undefined;
  let depth = 0;
  for (let i = open; i < fn.end; i++) {
    const c = masked[i];
    if (c === '(' || c === '[' || c === '{') depth++;
    else if (c === ')' || c === ']' || c === '}') depth--;
    else if (c === ':' && depth === 0) return i + 1;
  }
  return undefined;
}

/**
 * The baseline's knobs as the entries name them. One knob of the baseline can stand at places that launch different
 * kernels (`num_warps=num_warps` at each of two launches, one computed value): a candidate that wrote numbers there
 * has them told apart, the later place named by its line (`num_warps@186`, knobs.ts), and its values say so. Such a
 * place becomes a knob of that name here, so each launch reads its own value from the table; an entry that does not
 * name it had one value at every place (its candidate came from the baseline's knob), which the place keeps. Without
 * this, a per-shape table of Liger's SwiGLU gave its row kernel the tiled launch's 1 warp (0.09x on that shape, on
 * the H200, 2026-12-05).
 */
function splitByLine(baseline: string, set: KnobSet, entries: DispatchEntry[]): { set: KnobSet; entries: DispatchEntry[] } {
  const knobs: Knob[] = [];
  const filled = entries.map((e) => ({ ...e, values: { ...e.values } }));
  for (const k of set.knobs) {
    const base = k.name.replace(/@\d+$/, '');
    const named = new Map<number, Array<[number, number]>>();
    for (const span of k.spans.slice(1)) {
      const line = baseline.slice(0, span[0]).split('\n').length;
      const name = `${base}@${line}`;
      if (line === k.line || set.knobs.some((x) => x.name === name) || !entries.some((e) => e.values[name] !== undefined)) continue;
      named.set(line, [...(named.get(line) ?? []), span]);
    }
    if (!named.size) {
      knobs.push(k);
      continue;
    }
    const moved = new Set([...named.values()].flat());
    knobs.push({ ...k, spans: k.spans.filter((s) => !moved.has(s)) });
    for (const [line, spans] of named) {
      const name = `${base}@${line}`;
      knobs.push({ ...k, name, spans, line });
      for (const e of filled) if (e.values[name] === undefined && e.values[k.name] !== undefined) e.values[name] = e.values[k.name];
    }
  }
  return { set: { ...set, knobs }, entries: filled };
}

/** Where a launcher's table goes (`after`: below a definition, else above one): right above the top-level
 *  definition that holds the launcher (the launcher itself, or its class), with the comment lines right above that
 *  definition kept next to it; or, where @triton.jit functions are defined below the launcher with nothing but
 *  definitions between, right below the last of them (the launcher reads its table when it runs); above the first
 *  top-level definition where the launcher is not defined at the file's top level (under an `if`, say). */
function tableAt(source: string, functions: readonly FunctionSpan[], fn: FunctionSpan): { offset: number; after: boolean } {
  const outer = functions.filter((f) => f.start <= fn.start && fn.end <= f.end).sort((a, b) => a.start - b.start)[0] ?? fn;
  let at = source.lastIndexOf('\n', outer.start - 1) + 1;
  if (outer.indent !== '' || at !== outer.start) return { offset: /^(?:@|def |class |async def )/m.exec(source)?.index ?? source.length, after: false };
  const topLevel = functions.filter((f) => f.topLevel && f.indent === '');
  const below = topLevel.filter((f) => f.start > outer.end && isJit(source, f));
  if (below.length) {
    const last = Math.max(...below.map((f) => f.end));
    // nothing but definitions (and comments) between the launcher and there: no statement that runs on import and
    // could call the launcher before its table is defined
    const code = maskNonCode(source, 'python');
    const between = topLevel.filter((f) => f.start > outer.end && f.end <= last).sort((a, b) => a.start - b.start);
    const gaps = between.map((f, i) => code.slice(i ? between[i - 1].end : outer.end, f.start));
    if (gaps.every((g) => !g.trim())) {
      const eol = source.indexOf('\n', last);
      return { offset: eol < 0 ? source.length : eol + 1, after: true };
    }
  }
  const uncommented = maskNonCode(source, 'python', { keepStrings: true }); // a '#' inside a string stays
  while (at > 0) {
    const prev = source.lastIndexOf('\n', at - 2) + 1;
    const line = source.slice(prev, at - 1);
    if (!line.startsWith('#') || uncommented[prev] !== ' ' || /^#!|coding[:=]/.test(line)) break;
    at = prev;
  }
  return { offset: at, after: false };
}

function renderTable(t: DispatchTable, set: KnobSet): string {
  const insertNames = new Set(set.knobs.filter((k) => k.insert).map((k) => k.name));
  const keyedOn = [t.byDevice ? 'the device\'s compute capability' : '', t.keyNames.length ? `(${t.keyNames.join(', ')})` : ''].filter(Boolean).join(', then ');
  const lines = [`# Launch parameters of ${t.launcher}() tuned by KernelEvolve, keyed on ${keyedOn}; anything not listed keeps`,
    '# the original computation.', `${t.name} = {`];
  const dict = (values: KnobValues) => {
    const plain = Object.entries(values).filter(([k]) => !insertNames.has(k)).map(([k, v]) => `${JSON.stringify(k)}: ${pyValue(v)}`);
    const options = Object.entries(values).filter(([k]) => insertNames.has(k)).map(([k, v]) => `${JSON.stringify(set.knobs.find((x) => x.name === k)!.insert)}: ${pyValue(v)}`);
    if (options.length) plain.push(`"launch options": {${options.join(', ')}}`);
    return `{${plain.join(', ')}}`;
  };
  const keyText = (key: number[]) => (key.length === 1 ? `(${key[0]},)` : `(${key.join(', ')})`);
  if (t.byDevice && t.keyNames.length) {
    const devices = [...new Set(t.rows.map((r) => JSON.stringify(r.capability)))];
    for (const d of devices) {
      const cap = JSON.parse(d) as [number, number];
      lines.push(`    (${cap[0]}, ${cap[1]}): {`);
      for (const r of t.rows.filter((x) => JSON.stringify(x.capability) === d)) lines.push(`        ${keyText(r.key!)}: ${dict(r.values)},`);
      lines.push('    },');
    }
  } else {
    for (const r of t.rows) lines.push(`    ${t.byDevice ? `(${r.capability![0]}, ${r.capability![1]})` : keyText(r.key!)}: ${dict(r.values)},`);
  }
  lines.push('}');
  return lines.join('\n');
}
