// The `tune` operator: changes the kernel's knobs (block sizes, warps, stages, file-scope constants, launch
// parameters the code computes) and nothing else. It searches without enumerating the grid: first the
// configurations the knowledge base holds for this hardware and kernel class, then spread-out probes (drafts),
// then a pattern search from the parent the policy picks (the best, with greedy): repeat the move that made
// the parent better, for a memory-bound kernel (elementwise, reduction) the warps alone at the block it has,
// joint moves (tiles with warps and stages: they pay off together), single-knob
// halvings/doublings ordered by what such moves did before, x4 jumps, then pairs. Regions where a candidate
// failed (out of shared memory, wrong results after a block shrank) are not tried again. When shapes disagree
// (a shape's winner beats the best single setting there beyond the intervals), refinements take turns between
// the policy's parent and each such shape's winner (moves ranked by that shape's speed), and the run closes with
// a candidate whose launcher picks each shape's fastest launch over all its evaluations (the original computation
// as the fallback), judged beside a second such table where a shape's two fastest read within the noise. It
// proposes from candidates still being judged (speculation.ts), so a pool's slots never wait for a wave.
// It keeps no state of its own; everything comes from the run's candidates, so a resumed run continues as
// if never stopped. It never proposes a source the run has already seen.
import type { Candidate } from './candidate';
import { applyKnobs, detectKnobs, knobValues, satisfiesConstraints, searchableKnobs, tiedAsIn, type Knob, type KnobSet, type KnobValues } from './knobs';
import { KernelLocator } from './kernelLocator';
import { listFunctions } from './splice';
import { pooledShapeLaunches, SHAPE_MARGIN, shapeWinners, type PooledLaunch } from './shapeWinners';
import { deviceRegions, learnedRegions } from './tuneConstraints';
import { pastTrend } from './trend';
import { writeDispatch } from './tunedDispatch';
import { type KernelClass, kernelClassOf, startValues, tuneStarts } from './tuneKnowledge';
import type { Operator, Proposal, ProposalBatch, ProposalContext } from './operator';
import { languageOf, sourceHash, type SourceLanguage } from './sourceText';
import { geometricMean, scoreOf } from './pairedScore';

/** The estimated gain over the best single setting for which a per-shape table is proposed during the search. */
export const SEARCH_TABLE_GAIN = 1.02;
/** The same for the closing table (the unit of the budget kept for it): any gain beyond rounding. */
export const CLOSING_TABLE_GAIN = 1.005;

/**
 * A judged candidate at less than this share of the kernel's speed as written is no parent for refinements (the
 * harness's far_below: it times such a launch no finer than it must to know that). Its neighbours are one step from
 * a launch that loses by half; a setting worth judging is a step from a better parent too, and still reached from
 * there. With a budget the search does not use up, the softmax example's tune on an H100 judged 156 such launches
 * (0.02-0.48x) of its 328; 84 were refinements of such a launch, every one of them under 0.5x too (the best 0.20x),
 * and they held 29% of the run's slot time.
 */
export const FAR_BELOW = 0.5;

/** How a closing table of close contenders begins its rationale (closingTables). */
const CONTENDER_TABLE = 'the launch ranked';
/** Closing tables of close contenders: the launches ranked 2 and 3 on the shapes where they read within the noise. */
const CONTENDER_TABLES = 2;

/** A spec shape as a table row's name: `{rows=4096, cols=4096}`. */
const shapeText = (s: Record<string, unknown>) => `{${Object.entries(s).map(([k, v]) => `${k}=${v}`).join(', ')}}`;


/** A move in index space: how many domain steps each named knob goes up (+) or down (-). */
type Move = Record<string, number>;

interface MoveStats {
  /** Mean log fitness ratio child/parent of moves of one knob in one direction. */
  gain: Map<string, { sum: number; n: number }>;
  /** Knobs whose every move failed to compile or run correctly: not worth more evaluations. */
  broken: Set<string>;
}

export interface TuneOperatorOptions {
  /** File name of the kernel source (picks Python or C-like rules). */
  fileName: string;
  /** Probes proposed in the drafting phase (spread-out settings of the block-like knobs). */
  probes?: number;
  /** Another seed gives other probes and another order among equally promising moves (same seed, same run). */
  seed?: number;
  /** The user's knowledge folders (their `tune-*.json` starts come before the bundled ones). */
  knowledgeFolders?: string[];
  /** The bundled knowledge folder (default: the one shipped with the extension); null for none. */
  knowledgeDir?: string | null;
  /** false: settings past a falling trend of the run's verdicts are proposed too (trend.ts; default true). */
  pastTrend?: boolean;
}

/** A step to try: a move relative to the base, or absolute values (a configuration from the knowledge base). */
type Step = { move: Move } | { values: KnobValues; why: string };

/** Output-tile elements a warp of a matmul accumulates in the drafts: 2048 fp32 values are 64 registers a thread. */
const ACCUMULATOR_PER_WARP = 2048;

/** A matmul's output-tile knobs among its block knobs (BLOCK_M and BLOCK_N, BM and BN, TILE_SIZE_M...): one of
 *  each, or undefined. */
function outputTile(blocks: readonly Knob[]): { m: Knob; n: Knob } | undefined {
  const axis = (k: Knob) => /(?:^|_|[a-z])([MN])$/i.exec(k.name.replace(/@\d+$/, '').replace(/^cfg\d+\./, ''))?.[1].toUpperCase();
  const m = blocks.filter((k) => axis(k) === 'M');
  const n = blocks.filter((k) => axis(k) === 'N');
  return m.length === 1 && n.length === 1 ? { m: m[0], n: n[0] } : undefined;
}

/** Where a value sits in a knob's domain; a computed knob (0) sits at its typical value. */
function position(k: Knob, v: number): number {
  const i = k.domain.indexOf(v);
  if (i >= 0 || v !== 0) return i;
  const typical = k.typical ?? (k.role === 'warps' ? 4 : k.role === 'stages' ? 3 : k.role === 'group' ? 8
    : Number(/min\(\s*(\d+)/.exec(k.origin ?? k.expression ?? '')?.[1] ?? 1024));
  return k.domain.reduce((best, d, j) => (Math.abs(Math.log2(d / typical)) < Math.abs(Math.log2(k.domain[best] / typical)) ? j : best), 0);
}

/**
 * The first `count` probes, made to bracket the launch as written: where all of them lie on one side of it (the
 * domain's middle quantiles all below a 1024-element block in a domain of 16-8192, say), one of them (a probe that
 * is the written launch itself, which proposes nothing, else the last) gives way to the first later probe on the
 * other side that `sound` accepts, so the drafts see settings both smaller and larger than the written one.
 */
export function bracketing(moves: Move[], probed: readonly Knob[], count: number, sound: (m: Move) => boolean = () => true): Move[] {
  const side = (m: Move) => Math.sign(probed.reduce((a, k) => a + (m[k.name] ?? 0), 0));
  const chosen = moves.slice(0, count);
  if (chosen.length < 2) return chosen;
  for (const missing of [1, -1]) {
    const sides = chosen.map(side);
    if (sides.includes(missing) || !sides.includes(-missing)) continue;
    const other = moves.slice(count).find((m) => side(m) === missing && sound(m));
    if (!other) continue;
    const noop = sides.indexOf(0);
    chosen[noop >= 0 ? noop : chosen.length - 1] = other;
  }
  return chosen;
}

/** mulberry32: a small deterministic generator, so a seed reproduces a run. */
export function seededRandom(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

export class TuneOperator implements Operator {
  readonly name = 'tune';
  /** Each proposal must see the one before it in `seen`, or two calls would pick the same move. */
  readonly concurrency = 1;
  /** A parent's knobs are in its source: the next neighbours can be proposed before its verdict is in. */
  readonly speculates: boolean = true;
  private readonly lang: SourceLanguage;
  private readonly probes: number;
  private readonly seed?: number;
  private readonly knobCache = new Map<string, KnobSet>();

  private readonly knowledgeFolders: string[];
  private readonly knowledgeDir?: string | null;
  private readonly pastTrend: boolean;

  constructor(opts: TuneOperatorOptions) {
    this.lang = languageOf(opts.fileName);
    this.probes = opts.probes ?? 3;
    this.seed = opts.seed;
    this.knowledgeFolders = opts.knowledgeFolders ?? [];
    this.knowledgeDir = opts.knowledgeDir;
    this.pastTrend = opts.pastTrend !== false;
    if (this.lang === 'python') {
      this.conclude = async (ctx) => {
        await KernelLocator.get();
        return { proposals: this.closingTables(ctx) };
      };
    }
  }

  knobsOf(source: string): KnobSet {
    const key = source;
    let set = this.knobCache.get(key);
    if (!set) {
      set = detectKnobs(source, this.lang);
      this.knobCache.set(key, set);
    }
    return set;
  }

  async propose(ctx: ProposalContext): Promise<ProposalBatch> {
    await KernelLocator.get(); // knob detection finds functions with tree-sitter
    // a dispatching candidate is a table of other candidates' settings: nothing to move in it
    if (ctx.parent?.mode === 'dispatch') return { proposals: [], exhausted: true };
    // a run that asks for a closing proposal gets the table from the final winners then
    const dispatch = ctx.parent && !ctx.concludes ? this.dispatchProposal(ctx) : undefined;
    if (dispatch) return { proposals: [dispatch] };
    // per-shape search: some refinements start from a disagreeing shape's winner; when its neighbourhood is used
    // up, the policy's parent (which is exhausted only when its own is)
    const shapeBase = ctx.parent && this.shapeParent(ctx);
    const parent = ctx.parent ?? ctx.candidates[0];
    const farBelow = parent?.state === 'done' && parent.operator !== 'baseline' && scoreOf(parent) < FAR_BELOW;
    const bases: Array<{ base?: Candidate; score: (c: Candidate) => number }> = [
      ...(shapeBase ? [{ base: shapeBase.candidate, score: shapeBase.score }] : []), ...(farBelow ? [] : [{ base: parent, score: scoreOf }])];
    for (const { base, score } of bases) {
      if (!base) continue;
      const proposal = this.stepFrom(base, ctx, score);
      if (proposal) return { proposals: [proposal] };
    }
    return { proposals: [], exhausted: true };
  }

  /**
   * The run's closing proposal, made once everything else is judged: the per-shape table built from the winners
   * of the whole run, when shapes disagree (a unit of the budget is kept for it). Python launchers only: a
   * table is written into the launcher (tunedDispatch.ts).
   */
  readonly conclude?: (ctx: ProposalContext) => Promise<ProposalBatch>;

  /** The first untried step from `base`: a refinement when the run hands a parent, else a draft. `score` ranks
   *  what moves did (the whole candidate's, or one shape's speed when searching for that shape). */
  private stepFrom(base: Candidate, ctx: ProposalContext, score: (c: Candidate) => number): Proposal | undefined {
    const full = this.anchored(base.source, ctx.baselineSource);
    const set = searchableKnobs(full, ctx.spec.kernel);
    if (!set.knobs.length) return undefined;
    const current = knobValues(full);
    const stats = this.moveStats(ctx.candidates, score);
    const past = this.pastTrend ? pastTrend(this.name, ctx.candidates) : () => undefined;
    const regions = [...deviceRegions(set.knobs, ctx.spec.backend, ctx.hardware), ...learnedRegions(ctx.candidates, set.knobs, (c) => this.valuesOf(c), this.name),
      { why: 'past a falling trend', excludes: (v: KnobValues) => past(v) !== undefined }];
    const kernelClass = this.classOf(ctx);
    const steps: Step[] = ctx.parent
      ? this.refineMoves(base, set, ctx.candidates, stats, score, kernelClass).map((move) => ({ move }))
      : [...this.knowledgeStarts(set, ctx, kernelClass), ...this.probeMoves(set, current, kernelClass).map((move) => ({ move }))];
    for (const step of steps) {
      const values = 'move' in step ? applyMove(set, current, step.move) : { ...current, ...step.values };
      if (!values || !satisfiesConstraints(set, values)) continue;
      if (regions.some((r) => r.excludes(values))) continue;
      const source = applyKnobs(base.source, full, values);
      if (source === base.source || ctx.seen.has(sourceHash(source, this.lang))) continue;
      // the same setting written another way (a launch option back at the default the original left to Triton)
      if (ctx.candidates.some((c) => this.tableable(c) && sameValues(this.valuesOf(c), values))) continue;
      const changed = Object.keys(values).filter((k) => values[k] !== current[k]);
      return {
        source,
        parents: [base.id],
        operator: this.name,
        mode: ctx.parent ? 'tune' : 'draft',
        knobs: values,
        rationale: ('why' in step ? `${step.why}: ` : '') + changed.map((k) => `${k} ${current[k] || 'computed'}→${values[k]}`).join(', '),
      };
    }
    return undefined;
  }

  /** The Triton kernel's class (matmul, attention, reduction, elementwise); undefined for C-like sources. */
  private classOf(ctx: ProposalContext): KernelClass | undefined {
    if (this.lang !== 'python') return undefined;
    const fn = listFunctions(ctx.baselineSource, 'python').find((f) => f.name === ctx.spec.kernel);
    return kernelClassOf(fn ? ctx.baselineSource.slice(fn.start, fn.end) : ctx.baselineSource);
  }

  /** First drafts from the knowledge base: configurations known to be good for this hardware and kernel class. */
  private knowledgeStarts(set: KnobSet, ctx: ProposalContext, kernelClass: KernelClass | undefined): Step[] {
    if (this.knowledgeDir === null) return []; // C-like sources read the `any` starts
    let starts;
    try {
      starts = tuneStarts({ hardware: ctx.hardware, backend: ctx.spec.backend, kernelClass, userFolders: this.knowledgeFolders, builtinDir: this.knowledgeDir });
    } catch {
      return []; // a broken user file costs the hardware-informed starts, not the run
    }
    return starts.map((s) => startValues(s, set.knobs)).filter((v): v is KnobValues => !!v)
      .map((values) => ({ values, why: `known good for ${kernelClass ?? ctx.spec.kernel} on ${ctx.hardware ?? 'this backend'}` }));
  }

  /** Candidates whose settings a per-shape table may take: the tuner's own (not dispatches) and the baseline. */
  private tableable = (c: Candidate) => (c.operator === this.name && c.mode !== 'dispatch') || c.operator === 'baseline';

  /**
   * Search per shape: while shapes disagree (a shape's winner beats the best single setting there beyond the
   * intervals), refinements take turns: the policy's parent, then each disagreeing shape's winner, so every such
   * shape's neighbourhood is searched for its own optimum and the table is built from real per-shape winners.
   */
  private shapeParent(ctx: ProposalContext): { candidate: Candidate; score: (c: Candidate) => number } | undefined {
    if (this.lang !== 'python' || !ctx.parent) return undefined;
    const { table, disagreeing } = shapeWinners(ctx.candidates, this.tableable);
    const turns = disagreeing.filter((i, n) => table[i].candidate.id !== ctx.parent!.id
      && disagreeing.findIndex((j) => table[j].candidate === table[i].candidate) === n);
    if (!turns.length) return undefined;
    const refined = ctx.candidates.filter((c) => c.operator === this.name && c.mode === 'tune').length;
    const turn = refined % (1 + turns.length);
    if (turn === 0) return undefined;
    // moves from there are ranked by what they did on that shape
    const key = JSON.stringify(table[turns[turn - 1]].shape);
    const onShape = (c: Candidate) => (c.verdict?.status === 'ok' ? c.verdict.shapes?.find((s) => JSON.stringify(s.shape) === key)?.speedup ?? 0 : 0);
    return { candidate: table[turns[turn - 1]].candidate, score: onShape };
  }

  /**
   * During the search, one candidate that dispatches per shape, when shapes disagree or picking per shape would beat
   * the best single configuration by more than 2% (SEARCH_TABLE_GAIN: a table takes a slot from the search, so only
   * for a gain beyond the noise; estimates from the evaluations already made; the dispatch is then judged on every
   * shape like any candidate). Where shapes disagree the table holds their winners and the best single setting
   * elsewhere. The run's closing tables are closingTables'.
   */
  private dispatchProposal(ctx: ProposalContext): Proposal | undefined {
    if (this.lang !== 'python') return undefined;
    const { table, disagreeing, dispatchScore, bestSingle } = shapeWinners(ctx.candidates, this.tableable);
    const ids = [...new Set(table.map((w) => w.candidate.id))];
    if (ids.length < 2 || (!disagreeing.length && dispatchScore < SEARCH_TABLE_GAIN * bestSingle)) return undefined;
    const estimate = geometricMean(table.map((w) => w.speedup));
    // a new table only when none is being judged and it promises more than the run has (the closing tables are
    // built from the final winners anyway)
    const dispatches = ctx.candidates.filter((c) => c.operator === this.name && c.mode === 'dispatch');
    if (dispatches.some((c) => c.state !== 'done' && c.state !== 'cancelled')
      || estimate < SEARCH_TABLE_GAIN * Math.max(...ctx.candidates.map((c) => scoreOf(c)))) return undefined;
    return this.tableProposal(ctx, table.map((w) => ({ shape: w.shape, candidate: w.candidate, speedup: w.speedup })), `estimated ${estimate.toFixed(2)}x against `
      + `${bestSingle.toFixed(2)}x for the best single setting`
      + (disagreeing.length ? ` (${disagreeing.length} shape${disagreeing.length > 1 ? 's' : ''} faster with another setting beyond the noise)` : ''));
  }

  /**
   * The run's closing tables, built from every evaluation of the run pooled per shape and launch
   * (pooledShapeLaunches): each shape's fastest launch, wherever it is (a lead within the noise is still the best
   * guess, and the table is judged on every shape like any candidate), when that beats the best single setting by
   * CLOSING_TABLE_GAIN. In the first closing round, where launches read within SHAPE_MARGIN of a shape's fastest,
   * tables of those contenders (ranked 2, then 3, on such shapes; the fastest elsewhere) are judged beside it: one
   * evaluation reads every such contender once more, on its own shape. The next round builds the table again from
   * every reading (nothing when it was judged already). On a published RMSNorm two shapes' fastest launches, 1.5% and
   * 2.5% faster than the table's, were left out of a table built from one reading each.
   */
  private closingTables(ctx: ProposalContext): Proposal[] {
    const byId = new Map(ctx.candidates.map((c) => [c.id, c]));
    const { shapes, ranked } = pooledShapeLaunches(ctx.candidates, (c, shape) => this.launchOn(c, shape, byId), this.tableable);
    if (!shapes.length || ranked.some((r) => !r.length)) return [];
    const winners = ranked.map((r) => r[0]);
    // the best single setting: the launch with the best pooled speeds over every shape
    const everywhere = winners.concat(ranked.flat()).map((w) => w.launch).filter((l, i, all) => all.indexOf(l) === i
      && ranked.every((r) => r.some((x) => x.launch === l)));
    const bestSingle = Math.max(0, ...everywhere.map((l) => geometricMean(ranked.map((r) => r.find((x) => x.launch === l)!.speedup))));
    const estimate = geometricMean(winners.map((w) => w.speedup));
    const row = (w: PooledLaunch, i: number) => ({ shape: shapes[i], candidate: w.from, speedup: w.speedup, readings: w.readings });
    const proposals: Proposal[] = [];
    if (new Set(winners.map((w) => w.launch)).size > 1 && estimate >= CLOSING_TABLE_GAIN * bestSingle) {
      const first = this.tableProposal(ctx, winners.map(row),
        `the fastest launch of each shape over the run's evaluations: estimated ${estimate.toFixed(3)}x against ${bestSingle.toFixed(3)}x for the best single setting`);
      if (first) proposals.push(first);
    }
    // the first closing round only: tables of the close contenders (the launch ranked k + 1 on each shape that has
    // one within SHAPE_MARGIN of its fastest, the fastest elsewhere); a contender may be the same launch as the
    // fastest under another name (the original's computed value), so more than the second are read
    if (ctx.candidates.some((c) => c.operator === this.name && c.mode === 'dispatch' && c.rationale?.startsWith(CONTENDER_TABLE))) return proposals;
    for (let k = 1; k <= CONTENDER_TABLES; k++) {
      const close = ranked.flatMap((r, i) => (r.length > k && r[k].speedup * SHAPE_MARGIN >= r[0].speedup ? [i] : []));
      const rows = ranked.map((r, i) => (close.includes(i) ? r[k] : r[0]));
      if (!close.length || new Set(rows.map((w) => w.launch)).size < 2) continue;
      const table = this.tableProposal(ctx, rows.map(row), `${CONTENDER_TABLE} ${k + 1} on ${close.length} shape${close.length > 1 ? 's' : ''} whose `
        + `fastest launches read within ${Math.round((SHAPE_MARGIN - 1) * 100)}% of each other, the fastest elsewhere (each such launch read once more)`);
      if (table) proposals.push(table);
    }
    return proposals;
  }

  /** What a candidate launches on a shape (its settings' key; a table's, the row's candidate's), or undefined. */
  private launchOn(c: Candidate, shape: Record<string, unknown>, byId: ReadonlyMap<string, Candidate>): string | undefined {
    let from: Candidate | undefined = c;
    if (c.operator === this.name && c.mode === 'dispatch') {
      const row = c.knobs?.[shapeText(shape)];
      const id = typeof row === 'string' ? / \((c\d+), /.exec(row)?.[1] : undefined;
      from = id ? byId.get(id) : undefined;
    }
    if (!from || !this.tableable(from)) return undefined;
    const values = this.valuesOf(from);
    return JSON.stringify(Object.keys(values).sort().map((k) => [k, values[k]]));
  }

  /** A per-shape table of `rows` written into the launcher (its `knobs` name each row's candidate: launchOn reads them). */
  private tableProposal(ctx: ProposalContext, rows: Array<{ shape: Record<string, unknown>; candidate: Candidate; speedup: number; readings?: number }>,
    why: string): Proposal | undefined {
    const set = this.knobsOf(ctx.baselineSource);
    const written = writeDispatch(ctx.baselineSource, set, rows.map((w) => ({ shape: w.shape, values: this.valuesOf(w.candidate) })));
    if ('error' in written) return undefined;
    if (ctx.seen.has(sourceHash(written.source, this.lang))) return undefined;
    const base = this.valuesOf(ctx.candidates[0]);
    const settings = (c: Candidate) => {
      const v = this.valuesOf(c);
      const changed = Object.keys(v).filter((k) => v[k] !== base[k] && v[k] !== 0);
      return changed.length ? changed.map((k) => `${k}=${v[k]}`).join(', ') : 'as the original computes';
    };
    const readings = (w: { readings?: number }) => (w.readings && w.readings > 1 ? `, ${w.readings} readings` : '');
    return {
      source: written.source,
      parents: [...new Set(rows.map((w) => w.candidate.id))],
      operator: this.name,
      mode: 'dispatch',
      knobs: Object.fromEntries(rows.map((w) => [shapeText(w.shape), `${settings(w.candidate)} (${w.candidate.id}, ${w.speedup.toFixed(2)}x${readings(w)})`])),
      rationale: `${why}; per-shape dispatch on (${written.tables.map((t) => t.keyNames.join(', ')).join('; ')}): `
        + rows.map((w) => `${shapeText(w.shape)} → ${w.candidate.id}`).join(', '),
    };
  }

  /** A candidate's knobs, tied as the baseline's are (tiedAsIn), with domains from the baseline's values, so they do
   *  not drift upward as the search moves a knob. */
  private anchored(source: string, baselineSource: string): KnobSet {
    const baseline = this.knobsOf(baselineSource);
    const own = this.knobsOf(source);
    const set = this.lang === 'python' && source !== baselineSource ? tiedAsIn(source, own, baselineSource, baseline) : own;
    const base = new Map(baseline.knobs.map((k) => [k.name, k]));
    return {
      ...set,
      knobs: set.knobs.map((k) => {
        const b = base.get(k.name);
        // a computed knob whose statement writes a literal (`BLOCK_M, BLOCK_N = 64, 128`) stands at that literal:
        // "as computed" (0) is not a step below its domain's least value
        const own = k.value === 0 && b?.typical !== undefined ? [] : [k.value];
        return b ? { ...k, typical: b.typical, domain: [...new Set([...b.domain, ...own])].sort((x, y) => x - y) } : k;
      }),
    };
  }

  /**
   * Drafts: every block-like knob set to the same quantile of its domain (a few quantiles), the rest kept; for a
   * memory-bound kernel (elementwise, a reduction over rows) the warps move with the blocks, step for step, so
   * each thread keeps the share of a block the original launch gave it (a block grown 4x with the same warps makes
   * each thread loop over 4x the elements, and hides less latency: 8192 elements on one warp are a poor probe of
   * an 8192-element block). For a matmul (a dot over M x N output tiles) the warps follow the tile's area instead:
   * about 2048 accumulator elements a warp (64 fp32 registers a thread, room left for the operands), whatever the
   * original launch gave: one warp on a 16x16 tile says nothing of what a 128x128 tile wants, and a large tile on
   * one warp is a poor probe of that tile.
   */
  private probeMoves(set: KnobSet, current: KnobValues, kernelClass?: KernelClass): Move[] {
    let targets = set.knobs.filter((k) => k.role === 'block');
    const memoryBound = kernelClass === 'elementwise' || kernelClass === 'reduction';
    // a memory-bound kernel whose every searched block is a block of rows walked in a loop (its threads share a
    // block the code computes, to cover a row): the warps are what its threads share, so they are probed; the
    // rows are refined later
    const rowsOnly = memoryBound && targets.length > 0 && targets.every((k) => k.param !== undefined && !k.lanes);
    if (rowsOnly) targets = [];
    const warps = targets.length && memoryBound ? set.knobs.filter((k) => k.role === 'warps') : [];
    const tile = kernelClass === 'matmul' ? outputTile(targets) : undefined;
    const tileWarps = tile ? set.knobs.filter((k) => k.role === 'warps') : [];
    const tileStages = tile ? set.knobs.filter((k) => k.role === 'stages') : [];
    if (!targets.length && !rowsOnly) targets = set.knobs.filter((k) => k.role === 'generic' && k.domain.length > 4);
    if (!targets.length) targets = set.knobs.filter((k) => k.role === 'warps');
    if (!targets.length) return [];
    // every quantile's probe is computed; `probes` of them are drafted (see bracketing below). Blocks are drafted
    // across their domain (the middle and a sixth in from either end): a block's best is often at an end of its
    // domain (a looped softmax over vocabulary-wide rows at 8192 of 16-8192), too far for refinements from the
    // middle quantiles to reach within a budget; warps and other knobs, closer in
    const blocks = targets.some((k) => k.role === 'block');
    let quantiles = blocks ? [0.5, 1 / 6, 5 / 6, 0.3, 0.7] : [0.5, 0.3, 0.7, 0.15, 0.85];
    if (this.seed !== undefined) {
      const rnd = seededRandom(this.seed);
      quantiles = quantiles.map((q) => Math.min(1, Math.max(0, q + (rnd() - 0.5) * 0.2)));
    }
    // probes whose warps could not follow their blocks down (a block too small for one warp at the share of it each
    // thread had): a poor probe of those blocks, drafted only where no other is left. A block too large for the
    // most warps (32: a thread block's 1024 threads) is probed at the most warps it can have, the best probe of it
    const clamped = new Set<Move>();
    const moves = quantiles.map((q) => {
      const move: Move = {};
      for (const k of targets) {
        let idx = Math.round(q * (k.domain.length - 1));
        // a matmul's reduction tile (its K) is how deep each step of the loop over K reads, not a share of the
        // output: on 16-bit operands published launches mostly keep it at 32-64 while their output tiles range over
        // 64-256 (the fp16 configurations of Triton's matmul tutorial, VibeTensor's GEMM; 128 in the tutorial's fp8
        // ones and in one of modded-nanogpt's H100-tuned XXT launches), and a K tile grown with a 128 x 128 tile
        // quadruples what each pipeline stage holds in shared memory. It is drafted at the middle of its domain at
        // most (64 of Triton's 16-256); refinements may still move it up
        if (tile && k !== tile.m && k !== tile.n) idx = Math.min(idx, Math.floor((k.domain.length - 1) / 2));
        move[k.name] = idx - position(k, current[k.name]);
      }
      // the mean step of the blocks the threads share (those the kernel takes an arange of, or whose use is not
      // known), taken by the warps too as far as their domain goes: rows a program walks one after another ask
      // nothing more of its warps
      const shared = targets.filter((k) => k.lanes || k.param === undefined);
      const step = shared.length ? Math.round(shared.reduce((a, k) => a + move[k.name], 0) / shared.length) : 0;
      for (const k of warps) {
        const at = position(k, current[k.name]);
        const to = Math.min(k.domain.length - 1, Math.max(0, at + step));
        if (to !== at) move[k.name] = to - at;
        if (to > at + step) clamped.add(move);
      }
      if (tile) {
        const valueAt = (k: Knob) => k.domain[Math.min(k.domain.length - 1, Math.max(0, position(k, current[k.name]) + move[k.name]))];
        const want = Math.max(1, (valueAt(tile.m) * valueAt(tile.n)) / ACCUMULATOR_PER_WARP);
        for (const k of tileWarps) {
          const to = k.domain.reduce((best, d, j) => (Math.abs(Math.log2(d / want)) < Math.abs(Math.log2(k.domain[best] / want)) ? j : best), 0);
          const at = position(k, current[k.name]);
          if (to !== at) move[k.name] = to - at;
        }
        // the loop over K wants its next tiles' loads in flight while it multiplies: a launch without a pipeline
        // (one stage) is drafted with the usual three
        for (const k of tileStages) {
          const at = position(k, current[k.name]);
          const to = k.domain.indexOf(3);
          if (current[k.name] !== 0 && current[k.name] < 2 && to >= 0) move[k.name] = to - at;
        }
      }
      return move;
    });
    const sound = (m: Move) => !clamped.has(m);
    return bracketing([...moves.filter(sound), ...moves.filter((m) => !sound(m))], targets, this.probes, sound);
  }

  private refineMoves(parent: Candidate, set: KnobSet, all: readonly Candidate[], stats: MoveStats, scoreOf: (c: Candidate) => number, kernelClass?: KernelClass): Move[] {
    const moves: Move[] = [];
    const names = set.knobs.map((k) => k.name).filter((n) => !stats.broken.has(n));
    // 1. the move that made this parent better than its own parent, once more
    const grandparent = parent.operator === this.name && parent.mode !== 'draft' ? all.find((c) => c.id === parent.parents[0]) : undefined;
    if (grandparent && scoreOf(parent) > scoreOf(grandparent)) {
      const delta = this.moveBetween(grandparent, parent, set);
      if (delta && Object.keys(delta).length) moves.push(delta);
    }
    // 2. a memory-bound kernel (elementwise, a reduction over rows) lives on how many loads are in flight: at the
    //    block a start chose, the warps decide it (more first: latency hidden by more warps), so they move alone
    //    before any joint move changes the block too; a draft's second neighbour is one step further along the
    //    line it was drafted on (furtherOut)
    if (kernelClass === 'elementwise' || kernelClass === 'reduction') {
      const warps = set.knobs.filter((k) => k.role === 'warps' && !stats.broken.has(k.name)).map((k) => k.name);
      const further = parent.mode === 'draft' ? this.furtherOut(parent, all, set) : undefined;
      if (warps.length) moves.push(Object.fromEntries(warps.map((n) => [n, 1])));
      if (further) moves.push(further);
      if (warps.length) moves.push(Object.fromEntries(warps.map((n) => [n, -1])));
    }
    // 3. joint moves: larger tiles want more warps and deeper pipelines (and smaller ones fewer), which single
    //    moves never reach when each alone makes things worse
    moves.push(...jointMoves(set.knobs.filter((k) => !stats.broken.has(k.name))));
    // 4. single-knob moves: halve/double first, then x4 / ÷4 to jump out of a local optimum; within a step
    //    size the directions that paid off elsewhere in the run go first
    for (const step of [1, 2]) {
      const singles: Array<{ move: Move; score: number; order: number }> = [];
      for (const [i, name] of names.entries()) {
        for (const dir of [1, -1]) {
          const g = stats.gain.get(`${name}${dir > 0 ? '+' : '-'}`);
          // unexplored directions rank as neutral (0): ahead of ones that made things worse
          const score = g ? g.sum / g.n : 0;
          singles.push({ move: { [name]: dir * step }, score, order: this.tieBreak(i * 2 + (dir > 0 ? 0 : 1)) });
        }
      }
      singles.sort((a, b) => b.score - a.score || a.order - b.order);
      moves.push(...singles.map((s) => s.move));
    }
    // 5. pairs of halvings/doublings (knobs that only pay off together), around the run's best only: they are
    //    many, and a lesser parent rarely hides the optimum
    const bestF = Math.max(...all.map((c) => scoreOf(c)));
    if (scoreOf(parent) >= bestF) {
      const pairs: Array<{ move: Move; score: number }> = [];
      for (let i = 0; i < names.length; i++) {
        for (let j = i + 1; j < names.length; j++) {
          for (const [a, b] of [[1, 1], [-1, -1], [1, -1], [-1, 1]]) {
            const ga = stats.gain.get(`${names[i]}${a > 0 ? '+' : '-'}`);
            const gb = stats.gain.get(`${names[j]}${b > 0 ? '+' : '-'}`);
            pairs.push({ move: { [names[i]]: a, [names[j]]: b }, score: (ga ? ga.sum / ga.n : 0) + (gb ? gb.sum / gb.n : 0) });
          }
        }
      }
      pairs.sort((x, y) => y.score - x.score);
      moves.push(...pairs.map((p) => p.move));
    }
    return moves;
  }

  /**
   * A memory-bound kernel's draft moved its blocks (and the warps with them) some steps away from the launch it
   * came from: one step further the same way, each knob it moved one more step in its direction, as far as the
   * domains go (undefined when no block can move on). A draft is proposed because the start is assumed poor, and
   * its children are mostly proposed before its verdict (speculation.ts): the draft that pays is then refined
   * beyond itself as well as around its block. On a log-softmax over vocabulary-wide rows (a 1024-element block on
   * 4 warps) the drafts reached 4096 on 16 warps and the best launch was 8192 on 32, a step beyond, where a
   * wave of warps-only neighbours never went.
   */
  private furtherOut(draft: Candidate, all: readonly Candidate[], set: KnobSet): Move | undefined {
    const origin = all.find((c) => c.id === draft.parents[0]);
    const delta = origin && this.moveBetween(origin, draft, set);
    if (!delta) return undefined;
    const at = this.valuesOf(draft);
    const move: Move = {};
    for (const [name, d] of Object.entries(delta)) {
      const k = set.knobs.find((x) => x.name === name)!;
      const to = position(k, at[name]) + Math.sign(d);
      if (d !== 0 && to >= 0 && to < k.domain.length) move[name] = Math.sign(d);
    }
    return set.knobs.some((k) => k.role === 'block' && move[k.name]) ? move : undefined;
  }

  /** Order among equally promising moves: knob priority, or a seeded permutation of it. */
  private tieBreak(order: number): number {
    return this.seed === undefined ? order : seededRandom(this.seed * 7919 + order)();
  }

  /** Knob values of a candidate: recorded by the tuner, or read from its source. */
  private valuesOf(c: Candidate): KnobValues {
    if (c.operator === this.name && c.knobs && Object.values(c.knobs).every((v) => typeof v === 'number')) {
      return c.knobs as KnobValues;
    }
    return knobValues(this.knobsOf(c.source));
  }

  /** The index-space move from one candidate to another, when both have the same knobs. */
  private moveBetween(from: Candidate, to: Candidate, set: KnobSet): Move | undefined {
    const a = this.valuesOf(from);
    const b = this.valuesOf(to);
    const move: Move = {};
    for (const k of set.knobs) {
      if (a[k.name] === undefined || b[k.name] === undefined) return undefined;
      const ia = position(k, a[k.name]);
      const ib = position(k, b[k.name]);
      if (ia < 0 || ib < 0) return undefined;
      if (ia !== ib) move[k.name] = ib - ia;
    }
    return move;
  }

  /** What single-knob moves did so far across the run (log fitness ratio child/parent). */
  private moveStats(all: readonly Candidate[], scoreOf: (c: Candidate) => number): MoveStats {
    const gain = new Map<string, { sum: number; n: number }>();
    const tried = new Map<string, { ok: number; failed: number }>();
    const byId = new Map(all.map((c) => [c.id, c]));
    for (const c of all) {
      if (c.operator !== this.name || c.state !== 'done' || c.mode === 'draft' || c.mode === 'dispatch') continue;
      const parent = byId.get(c.parents[0]);
      if (!parent || scoreOf(parent) <= 0) continue;
      const a = this.valuesOf(parent);
      const b = this.valuesOf(c);
      const changed = Object.keys(b).filter((k) => a[k] !== undefined && a[k] !== b[k]);
      for (const k of changed) {
        const t = tried.get(k) ?? { ok: 0, failed: 0 };
        if (scoreOf(c) > 0) t.ok++;
        else t.failed++;
        tried.set(k, t);
      }
      if (changed.length !== 1) continue;
      const k = changed[0];
      const key = `${k}${b[k] > a[k] ? '+' : '-'}`;
      const f = scoreOf(c);
      const g = gain.get(key) ?? { sum: 0, n: 0 };
      g.sum += f > 0 ? Math.log(f / scoreOf(parent)) : -5;
      g.n++;
      gain.set(key, g);
    }
    const broken = new Set([...tried].filter(([, t]) => t.ok === 0 && t.failed >= 2).map(([k]) => k));
    return { gain, broken };
  }
}

/** The values after a move; undefined when the move leaves a domain or changes nothing. */
function applyMove(set: KnobSet, current: KnobValues, move: Move): KnobValues | undefined {
  const values = { ...current };
  let changed = false;
  for (const [name, delta] of Object.entries(move)) {
    const k = set.knobs.find((x) => x.name === name);
    if (!k) return undefined;
    const idx = position(k, current[name]) + delta;
    if (idx < 0 || idx >= k.domain.length) return undefined;
    if (k.domain[idx] !== current[name]) changed = true;
    values[name] = k.domain[idx];
  }
  return changed ? values : undefined;
}

/**
 * Moves that change tiles, warps and stages together (Triton kernels, where warps exist): all tiles up with
 * more warps (and a deeper pipeline), the matmul's output tile (M and N) up with more warps, and the same down.
 */
function jointMoves(knobs: readonly Knob[]): Move[] {
  const warps = knobs.filter((k) => k.role === 'warps').map((k) => k.name);
  if (!warps.length) return [];
  const blocks = knobs.filter((k) => k.role === 'block').map((k) => k.name);
  const stages = knobs.filter((k) => k.role === 'stages').map((k) => k.name);
  const output = knobs.filter((k) => k.role === 'block' && /(?:^|_|B)(?:SIZE_?)?[MN]$/i.test(k.name.replace(/@\d+$/, ''))).map((k) => k.name);
  const of = (names: string[], d: number): Move => Object.fromEntries(names.map((n) => [n, d]));
  const out: Move[] = [];
  if (blocks.length) {
    out.push({ ...of(blocks, 1), ...of(warps, 1) }, { ...of(blocks, 1), ...of(warps, 1), ...of(stages, 1) });
    if (output.length === 2 && blocks.length > 2) out.push({ ...of(output, 1), ...of(warps, 1) });
    out.push({ ...of(blocks, -1), ...of(warps, -1) });
    if (output.length === 2 && blocks.length > 2) out.push({ ...of(output, -1), ...of(warps, -1) });
  }
  if (stages.length) out.push({ ...of(warps, 1), ...of(stages, 1) }, { ...of(warps, -1), ...of(stages, 1) });
  return out.filter((m) => Object.keys(m).length > 1);
}

/** Whether two settings give every knob either names the same value. */
function sameValues(a: KnobValues, b: KnobValues): boolean {
  const names = new Set([...Object.keys(a), ...Object.keys(b)]);
  return [...names].every((k) => a[k] === b[k]);
}
