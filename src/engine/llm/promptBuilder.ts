// The prompt of the universal LLM operator. One builder, four modes chosen by the parent: repair (the
// parent failed: its compiler error, mismatch report or rejection reason), improve (the parent is correct:
// its timings, compile stats and profile), draft (no parent: a fresh structure), crossover (two good
// parents). Every prompt also carries the spec, the baseline's timings, the best candidates so far, the
// strategies that failed (so they are not tried again), knowledge notes for the hardware and bottleneck,
// and wins from earlier runs.
import type { Candidate } from '../candidate';
import type { KernelSpec } from '../spec';
import { findFunction } from '../splice';
import type { SourceLanguage } from '../sourceText';
import type { Verdict } from '../../contract/verdict';
import { fitness } from '../fitness';
import { shapeWinners } from '../shapeWinners';
import type { ChatMessage } from './llmClient';
import type { ChosenNote } from './knowledgeBase';
import type { PastWin } from './pastWins';
import { isModelBackend } from '../kernelBenchProblem';
import { modelSystemMessage } from './modelPrompt';

export type PromptMode = 'draft' | 'improve' | 'repair' | 'crossover';

export interface PromptInputs {
  mode: PromptMode;
  spec: KernelSpec;
  /** The spec file's text (shapes, dtypes, tolerance are read from it by the model). */
  specText: string;
  language: SourceLanguage;
  hardware?: string;
  baselineSource: string;
  /** Every candidate so far, the baseline first. */
  candidates: readonly Candidate[];
  parent?: Candidate;
  other?: Candidate;
  notes: readonly ChosenNote[];
  pastWins: readonly PastWin[];
  /** Why recent answers of this operator could not be used (format mistakes to avoid). */
  recentInvalid?: readonly string[];
  /** How many drafts this run has made, to steer each new one elsewhere. */
  draftIndex?: number;
}

/** Size limits of the prompt's parts, characters. */
export const PROMPT_LIMITS = {
  source: 24_000,
  log: 4_000,
  specText: 3_500,
  rationale: 240,
  best: 5,
  failures: 10,
  pastWins: 4,
};

export function chooseMode(parent: Candidate | undefined, other: Candidate | undefined): PromptMode {
  if (!parent) return 'draft';
  const correct = (c: Candidate) => !c.verdict || c.verdict.status === 'ok';
  if (other && other.id !== parent.id && correct(parent) && correct(other) && other.verdict) return 'crossover';
  return correct(parent) ? 'improve' : 'repair';
}

export function fenceTag(backend: string): string {
  return backend === 'triton' || backend.startsWith('model-') ? 'python' : backend === 'cuda' ? 'cuda' : backend === 'hip' || backend === 'cpp' || backend === 'custom' ? 'cpp' : '';
}

const BACKEND_NAMES: Record<string, string> = {
  triton: 'Triton (Python)', cuda: 'CUDA C++', cpp: 'C++ (CPU)', hip: 'HIP C++', custom: 'C++ for an in-house accelerator (built by its own toolchain)',
  'model-cuda': 'a PyTorch model (ModelNew with Triton kernels)', 'model-cpu': 'a numpy model (ModelNew with C++ kernels)',
};

export function buildPrompt(p: PromptInputs): ChatMessage[] {
  return [{ role: 'system', content: systemMessage(p) }, { role: 'user', content: userMessage(p) }];
}

function systemMessage(p: PromptInputs): string {
  if (isModelBackend(p.spec.backend)) return modelSystemMessage(p.spec, p.hardware);
  const backend = BACKEND_NAMES[p.spec.backend] ?? p.spec.backend;
  const where = p.hardware ? ` on ${p.hardware}` : '';
  return [
    `You are an expert performance engineer who makes ${backend} kernels faster${where}.`,
    `You change the kernel \`${p.spec.kernel}\` so that it computes the same results, within the spec's tolerance, in less time.`,
    'Every answer is compiled, checked against a reference on all shapes (odd sizes included) and several seeds, and timed against the baseline.',
    '',
    'Rules:',
    `- Keep the name, parameters and calling convention of \`${p.spec.kernel}\` (the spec's launch() calls it as it is)${['cpp', 'cuda', 'hip', 'custom'].includes(p.spec.backend) ? ', including extern "C"' : ''}.`,
    '- Handle every size: tails that are not multiples of a block or vector width need a remainder path or masks.',
    '- Do not use threads, OpenMP, processes, timers, signals, file or environment access, inline assembly, or library calls (BLAS, cuBLAS, torch, Eigen): the checker rejects them.',
    '- Do not cache results between calls or special-case the test inputs; every call must compute its outputs.',
    '- Change one idea at a time and say which; keep code that is not part of the idea as it is.',
    '',
    'Answer format:',
    '1. One paragraph starting with "Rationale:" that says what you changed and why it should be faster on this hardware.',
    `2. Then EITHER the complete new definition of \`${p.spec.kernel}\` (with any new helper functions it needs) in one fenced \`\`\`${fenceTag(p.spec.backend)} block,`,
    '   OR the whole file in one fenced block when you change file-level code (constants, includes, helpers),',
    '   OR SEARCH/REPLACE blocks that quote the current code exactly:',
    '<<<<<<< SEARCH',
    '(lines copied exactly from the current code)',
    '=======',
    '(their replacement)',
    '>>>>>>> REPLACE',
    'Give exactly one version of the code. Write no other code blocks.',
  ].join('\n');
}

function userMessage(p: PromptInputs): string {
  const out: string[] = [];
  const src = (c: Candidate | undefined) => c?.source ?? p.baselineSource;
  const tag = fenceTag(p.spec.backend);
  out.push(`# Task: ${taskLine(p)}`, '');
  out.push(...kernelFacts(p), '');

  switch (p.mode) {
    case 'repair': {
      const v = p.parent!.verdict;
      out.push(`## The current code (candidate ${p.parent!.id}) FAILED: ${v?.status ?? 'unknown'}`, '');
      out.push(`${v?.reason ?? 'No verdict was recorded.'}`, '');
      if (v?.log) out.push(`${logTitle(v)}:`, '```text', clipLog(v.log), '```', '');
      if (p.parent!.rationale) out.push(`What it tried: ${clip(p.parent!.rationale, PROMPT_LIMITS.rationale * 2)}`, '');
      out.push(...codeSection(`The failing code (${p.parent!.id})`, src(p.parent), p, tag));
      // The correct baseline is the reference for what the code must compute (when it fits).
      if (p.parent!.source !== p.baselineSource && p.baselineSource.length <= 8000) {
        out.push(...codeSection('The baseline code (correct, for reference)', p.baselineSource, p, tag));
      }
      out.push('Fix the cause of the failure above while keeping the optimization it attempted, if that idea is sound; if the idea itself cannot work, go back to what the baseline does and say so.', '');
      break;
    }
    case 'improve': {
      out.push(...measurements(`The current code (candidate ${p.parent!.id})`, p.parent!, p), '');
      out.push(...codeSection(`The current code (${p.parent!.id})`, src(p.parent), p, tag));
      break;
    }
    case 'crossover': {
      for (const c of [p.parent!, p.other!]) {
        out.push(`## Parent ${c.id}: ${speed(c.verdict)}${c.rationale ? ` - ${clip(c.rationale, PROMPT_LIMITS.rationale)}` : ''}`, '');
        out.push(...perShape(c.verdict), '');
        out.push(...codeSection(`Code of ${c.id}`, c.source, p, tag));
      }
      out.push(`Combine the ideas that made each parent fast into one kernel (start from ${p.parent!.id}, the first parent; the answer's SEARCH parts must quote it).`, '');
      break;
    }
    case 'draft': {
      const drafts = p.candidates.filter((c) => c.mode === 'draft' && c.operator !== 'tune' && c.rationale);
      out.push(...codeSection('The baseline code', p.baselineSource, p, tag));
      if (drafts.length) {
        out.push('## Structures already drafted (propose a different one)', '');
        for (const d of drafts.slice(-6)) out.push(`- ${d.id} (${speed(d.verdict)}): ${clip(d.rationale!, PROMPT_LIMITS.rationale)}`);
        out.push('');
      }
      out.push(`Propose a structurally different implementation (draft ${(p.draftIndex ?? 0) + 1}): a new loop order, tiling, vectorization, fusion or work decomposition, not a change of constants alone.`, '');
      break;
    }
  }

  if (p.mode === 'improve' || p.mode === 'crossover') out.push(...shapeDispatch(p));
  const best = bestSoFar(p);
  if (best.length) {
    out.push('## Best candidates so far', '');
    for (const c of best) out.push(`- ${c.id} ${speed(c.verdict)} (${c.operator}${c.mode ? `/${c.mode}` : ''})${c.rationale ? `: ${clip(c.rationale, PROMPT_LIMITS.rationale)}` : ''}`);
    out.push('');
  }
  const failures = failedStrategies(p);
  if (failures.length) {
    out.push('## Strategies that did not work in this run (do not repeat them)', '');
    out.push(...failures.map((f) => `- ${f}`), '');
  }
  if (p.recentInvalid?.length) {
    out.push('## Recent answers that could not be used (follow the answer format)', '');
    out.push(...[...new Set(p.recentInvalid)].slice(-3).map((r) => `- ${r}`), '');
  }
  if (p.pastWins.length) {
    out.push('## Wins from earlier runs in this workspace', '');
    for (const w of p.pastWins.slice(0, PROMPT_LIMITS.pastWins)) {
      out.push(`- ${w.speedup.toFixed(2)}x on ${w.kernel} (${w.backend}${w.hardware ? `, ${w.hardware}` : ''}, run ${w.runId}): ${clip(w.rationale || 'no rationale recorded', PROMPT_LIMITS.rationale)}`);
    }
    out.push('');
  }
  if (p.notes.length) {
    out.push('## Optimization notes for this hardware and bottleneck', '');
    for (const n of p.notes) out.push(`### ${n.title}`, '', n.body, '');
  }
  out.push(`Answer now: a "Rationale:" paragraph, then the code of \`${p.spec.kernel}\` as the system message says.`);
  return out.join('\n');
}

/** Choosing per shape must beat the best single candidate by this much before the prompt offers it. */
const DISPATCH_GAIN = 1.02;

/**
 * When different candidates are fastest on different shapes (the baseline included), the table of who wins where
 * and the offer to answer with a per-shape dispatch: the winners' settings (or code) chosen from a small table
 * keyed on the launch's shape values, the original computation as the fallback. Judged on every shape like any
 * answer. Empty when one candidate wins every shape or choosing would gain little.
 */
export function shapeDispatch(p: Pick<PromptInputs, 'candidates' | 'spec'>): string[] {
  const { winners, dispatchScore, bestSingle } = shapeWinners(p.candidates, () => true);
  if (new Set(winners.map((w) => w.candidate.id)).size < 2 || !(dispatchScore > bestSingle * DISPATCH_GAIN)) return [];
  const who = (c: Candidate) => (c.operator === 'baseline' ? `${c.id} (the baseline)` : `${c.id}${c.rationale ? `: ${clip(c.rationale, 120)}` : c.knobs ? `: ${clip(JSON.stringify(c.knobs), 120)}` : ''}`);
  const where = p.spec.backend === 'triton'
    ? 'in the launcher function (the Python that calls the kernel), on the values it reads from the tensors\' shapes, e.g. a module-level `CONFIGS = {(4096, 1024): {"BLOCK_SIZE": 2048, "num_warps": 8}}` and `CONFIGS.get((n_rows, n_cols), {}).get("num_warps", <the original expression>)`; answer with the launcher and its table, the whole file, or SEARCH/REPLACE blocks'
    : `in \`${p.spec.kernel}\` itself, on its size arguments (a branch per listed shape, each to the code that wins it)`;
  return [
    '## The fastest code differs by shape',
    '',
    '| shape | fastest | its speedup there |',
    '|---|---|---|',
    ...winners.map((w) => `| ${shapeName(w.shape)} | ${who(w.candidate)} | ${w.speedup.toFixed(2)}x |`),
    '',
    `Choosing per shape would reach about ${dispatchScore.toFixed(2)}x, against ${bestSingle.toFixed(2)}x for the best single candidate. You may answer with a per-shape dispatch: `
      + `pick each shape's winning setting or code from a small table keyed on the shape, ${where}, with the original code as the fallback for every shape not in the table. `
      + 'It is judged on every shape like any answer, so the fallback path must stay exactly as correct as the original.',
    '',
  ];
}

function taskLine(p: PromptInputs): string {
  const k = `\`${p.spec.kernel}\``;
  switch (p.mode) {
    case 'repair': return `repair ${k}: the candidate below failed; make it correct (and keep it fast).`;
    case 'improve': return `make ${k} faster than the current code below, which is correct.`;
    case 'crossover': return `combine two fast versions of ${k} into one faster kernel.`;
    case 'draft': return `propose a new, faster implementation of ${k}.`;
  }
}

function kernelFacts(p: PromptInputs): string[] {
  const lines = [
    `- Kernel: \`${p.spec.kernel}\` in \`${baseName(p.spec.sourcePath)}\` (${BACKEND_NAMES[p.spec.backend] ?? p.spec.backend})`,
    `- Hardware: ${p.hardware ?? (p.spec.backend === 'cpp' ? 'this machine\'s CPU (single thread)' : 'not declared by the host')}`,
  ];
  const baseline = p.candidates[0];
  if (baseline?.verdict?.shapes?.length) {
    lines.push(`- Baseline time per shape: ${baseline.verdict.shapes.map((s) => `${shapeName(s.shape)} ${fmtMs(s.baseline_ms)}`).join('; ')}`);
  }
  const bestFit = Math.max(0, ...p.candidates.map((c) => fitness(c.verdict)));
  if (bestFit > 0) lines.push(`- Best speedup so far: ${bestFit.toFixed(2)}x over the baseline`);
  lines.push('', '## The spec (shapes, dtypes, tolerance, how the kernel is called)', '', '```python', specExcerpt(p.specText), '```');
  return lines;
}

/** The whole spec when short; else the parts that say what the kernel computes on which sizes. */
export function specExcerpt(text: string): string {
  const t = text.replace(/\r\n?/g, '\n').trim();
  if (t.length <= PROMPT_LIMITS.specText) return t;
  // Top-level statements: a line at column 0 starts one, indented or closing lines continue it.
  const blocks: string[][] = [];
  for (const line of t.split('\n')) {
    if (/^\S/.test(line) && !/^[)\]}]/.test(line)) blocks.push([line]);
    else if (blocks.length) blocks[blocks.length - 1].push(line);
  }
  const wanted = /^(BACKEND|SOURCE|KERNEL|SHAPES|OUTPUTS|INPLACE|TOLERANCE|DTYPE\w*|def (inputs|launch|reference|FLOPS|BYTES)\b)/;
  const kept = blocks.filter((b) => wanted.test(b[0])).map((b) => b.join('\n').trimEnd());
  const s = kept.join('\n\n');
  return s.length > PROMPT_LIMITS.specText ? s.slice(0, PROMPT_LIMITS.specText) + '\n# ... (spec truncated)' : s;
}

function codeSection(title: string, source: string, p: PromptInputs, tag: string): string[] {
  let code = source;
  let note = '';
  if (code.length > PROMPT_LIMITS.source) {
    // A large file: show the kernel alone; the answer then replaces just that function.
    const fn = findFunction(code, p.spec.kernel, p.language);
    if (fn) {
      code = code.slice(fn.start, fn.end);
      note = ` (only \`${p.spec.kernel}\` is shown: the file is ${source.length} characters; answer with the function)`;
    } else code = code.slice(0, PROMPT_LIMITS.source) + '\n... (truncated)';
  }
  return [`## ${title}${note}`, '', '```' + tag, code.trimEnd(), '```', ''];
}

function measurements(title: string, c: Candidate, p: PromptInputs): string[] {
  const v = c.verdict;
  const out = [`## ${title}: ${speed(v)}`, ''];
  if (c.rationale) out.push(`What it does: ${clip(c.rationale, PROMPT_LIMITS.rationale * 2)}`, '');
  out.push(...perShape(v));
  const compile = compileStats(v?.compile);
  if (compile) out.push('', `Compile stats: ${compile}`);
  const bottleneck = v?.profile?.bottleneck;
  if (bottleneck && bottleneck !== 'unknown') out.push('', `Bottleneck class: ${bottleneck}`);
  const profile = profileLines(v);
  if (profile.length) out.push('', 'Profile:', ...profile);
  if (!v && c.operator === 'baseline') out.push('(The baseline has not been measured yet.)');
  void p;
  return out;
}

function perShape(v: Verdict | undefined): string[] {
  if (!v?.shapes?.length) return [];
  const rows = ['| shape | baseline ms | this ms | speedup |', '|---|---|---|---|'];
  for (const s of v.shapes) {
    const x = typeof s.speedup === 'number' && Number.isFinite(s.speedup) ? `${s.speedup.toFixed(2)}x` : '?';
    rows.push(`| ${shapeName(s.shape)} | ${fmtMs(s.baseline_ms)} | ${fmtMs(s.candidate_ms)} | ${x} |`);
  }
  return rows;
}

const COMPILE_FIRST = ['n_regs', 'n_spills', 'shared', 'registers', 'spills', 'smem', 'vectorized_loops', 'num_warps', 'num_stages'];

function compileStats(compile: Record<string, unknown> | undefined): string {
  if (!compile) return '';
  const keys = [...COMPILE_FIRST.filter((k) => k in compile), ...Object.keys(compile).filter((k) => !COMPILE_FIRST.includes(k))];
  const parts: string[] = [];
  for (const k of keys) {
    const val = compile[k];
    if (val === null || val === undefined || typeof val === 'object' && !Array.isArray(val)) continue;
    const text = Array.isArray(val) ? val.slice(0, 6).map(String).join(', ') : String(val);
    if (text.length > 200) continue; // logs belong to the log section
    parts.push(`${k}=${text}`);
    if (parts.length >= 12) break;
  }
  return parts.join(', ');
}

function profileLines(v: Verdict | undefined): string[] {
  const prof = v?.profile;
  if (!prof) return [];
  const lines: string[] = [];
  for (const [k, val] of Object.entries(prof)) {
    if (k === 'bottleneck' || val === null || val === undefined) continue;
    let text = typeof val === 'number' ? num(val, 4) : typeof val === 'string' ? val : JSON.stringify(val);
    if (text.length > 300) text = text.slice(0, 300) + '…';
    lines.push(`- ${k}: ${text}`);
    if (lines.length >= 20) break;
  }
  return lines;
}

function logTitle(v: Verdict): string {
  switch (v.status) {
    case 'compile_error': return 'Compiler output';
    case 'incorrect': return 'Mismatch report';
    case 'narrow_inputs': return 'Mismatch report (inputs wider than the spec\'s)';
    case 'static_rejected': return 'Static check report';
    case 'timeout': return 'Timeout report';
    default: return 'Log';
  }
}

/** Compiler output: the first errors matter most, the tail says how it ended. */
export function clipLog(log: string): string {
  const max = PROMPT_LIMITS.log;
  if (log.length <= max) return log.trimEnd();
  const head = Math.floor(max * 0.75);
  return `${log.slice(0, head)}\n... (${log.length - max} characters cut) ...\n${log.slice(log.length - (max - head))}`.trimEnd();
}

function bestSoFar(p: PromptInputs): Candidate[] {
  const shown = new Set([p.parent?.id, p.other?.id]);
  return p.candidates
    .filter((c) => fitness(c.verdict) > 0 && c.operator !== 'baseline' && !shown.has(c.id))
    .sort((a, b) => fitness(b.verdict) - fitness(a.verdict))
    .slice(0, PROMPT_LIMITS.best);
}

/** Failed candidates and correct ones that were slower than their parent, newest first, one line each. */
export function failedStrategies(p: Pick<PromptInputs, 'candidates' | 'parent'>): string[] {
  const byId = new Map(p.candidates.map((c) => [c.id, c]));
  const seen = new Set<string>();
  const out: string[] = [];
  for (const c of [...p.candidates].reverse()) {
    if (!c.verdict || c.operator === 'baseline' || c.id === p.parent?.id) continue;
    // An answer without prose still gets its line: what broke matters more than what it meant to do.
    const what = c.rationale ? clip(c.rationale, PROMPT_LIMITS.rationale)
      : c.knobs ? `knobs ${JSON.stringify(c.knobs)}` : `${c.id} (${c.operator}${c.mode ? `/${c.mode}` : ''}, no rationale given)`;
    let line: string | undefined;
    if (c.verdict.status !== 'ok') {
      const first = firstError(c.verdict.log);
      line = `${what} -> ${c.verdict.status}: ${clip(c.verdict.reason, 200)}${first && !c.verdict.reason.includes(first) ? ` (${clip(first, 200)})` : ''}`;
    } else {
      const parent = c.parents.map((id) => byId.get(id)).find((x) => x);
      const pf = parent ? fitness(parent.verdict) || (parent.operator === 'baseline' ? 1 : 0) : 1;
      const f = fitness(c.verdict);
      if (f < pf * 0.98) line = `${what} -> correct but slower (${f.toFixed(2)}x, its parent ${pf.toFixed(2)}x)`;
    }
    if (!line || seen.has(what)) continue;
    seen.add(what);
    out.push(line);
    if (out.length >= PROMPT_LIMITS.failures) break;
  }
  return out;
}

/** The first line of a log that names an error, so a summary says what broke. */
function firstError(log: string | undefined): string | undefined {
  if (!log) return undefined;
  return log.split('\n').find((l) => /\berror\b|mismatch|Error:/i.test(l))?.trim();
}

function speed(v: Verdict | undefined): string {
  if (!v) return 'not evaluated';
  if (v.status !== 'ok') return v.status;
  return typeof v.speedup === 'number' ? `${v.speedup.toFixed(2)}x the baseline` : 'correct';
}

function shapeName(shape: Record<string, unknown>): string {
  return Object.entries(shape).map(([k, v]) => `${k}=${typeof v === 'object' ? JSON.stringify(v) : String(v)}`).join(',') || '{}';
}

function fmtMs(ms: number | undefined): string {
  if (typeof ms !== 'number' || !Number.isFinite(ms)) return '?';
  return ms >= 100 ? ms.toFixed(1) : ms >= 1 ? ms.toFixed(3) : ms.toPrecision(3);
}

function num(x: number | undefined, digits: number): string {
  return typeof x === 'number' && Number.isFinite(x) ? Number(x.toPrecision(digits)).toString() : '?';
}

function clip(s: string, n: number): string {
  const flat = s.replace(/\s+/g, ' ').trim();
  return flat.length <= n ? flat : flat.slice(0, n - 1).trimEnd() + '…';
}

function baseName(p: string): string {
  return p.split(/[\\/]/).pop() ?? p;
}
