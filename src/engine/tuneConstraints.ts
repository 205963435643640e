// What the tuner learns from failed candidates, so that no failed region is tried again. A failure says more
// than "this point is bad": Triton's OutOfResources on shared memory means every configuration that needs at
// least as much shared memory fails too (bigger tiles, deeper pipelines); on registers, every configuration
// with at least as many elements per thread; an `incorrect` verdict after a block size shrank means a block
// that small (or, when the failing shape is named, smaller than that shape's next power of two) drops data.
import type { Candidate } from './candidate';
import type { Knob, KnobValues } from './knobs';
import { startKey } from './tuneKnowledge';

export interface LearnedRegion {
  /** One sentence: what failed and what is now excluded. */
  why: string;
  excludes(values: KnobValues): boolean;
}

const SHARED = /out of resources?:?\s*shared memory|OutOfResources[^\n]*shared|shared memory[^\n]*(?:exceed|hardware limit)/i;
const REGISTERS = /out of resources?:?\s*registers|OutOfResources[^\n]*register|too many registers/i;

function nextPow2(n: number): number {
  let p = 1;
  while (p < n) p *= 2;
  return p;
}

/** A value as the kernel sees it: a knob left as computed (0) counts as 1 in products, so it never decides. */
const eff = (v: number | undefined) => (v && v > 0 ? v : 1);

/** Shared memory a configuration needs, up to a constant: stages x BLOCK_K x (BLOCK_M + BLOCK_N) for a matmul's
 *  tiles, stages x the product of the block sizes otherwise. */
function sharedFootprint(knobs: readonly Knob[], v: KnobValues): number {
  const blocks = knobs.filter((k) => k.role === 'block');
  const stages = knobs.filter((k) => k.role === 'stages').reduce((a, k) => a * eff(v[k.name]), 1);
  const axis = (a: string) => blocks.find((k) => startKey(k) === `block_${a}`);
  const [m, n, kk] = [axis('m'), axis('n'), axis('k')];
  if (m && n && kk) return stages * eff(v[kk.name]) * (eff(v[m.name]) + eff(v[n.name]));
  return stages * blocks.reduce((a, k) => a * eff(v[k.name]), 1);
}

/** Elements each thread holds, up to a constant: the product of the block sizes over the warps. */
function registerFootprint(knobs: readonly Knob[], v: KnobValues): number {
  const blocks = knobs.filter((k) => k.role === 'block').reduce((a, k) => a * eff(v[k.name]), 1);
  const warps = knobs.filter((k) => k.role === 'warps').reduce((a, k) => a * eff(v[k.name]), 1);
  return blocks / warps;
}

/** Integer values of the shape an `incorrect` verdict names ("Wrong result on shape {rows=2048, cols=4097}, seed 1"). */
function failingShape(reason: string): number[] {
  const m = /shape \{([^}]*)\}/.exec(reason);
  if (!m) return [];
  return [...m[1].matchAll(/=\s*(\d+)\b/g)].map((x) => Number(x[1]));
}

export function learnedRegions(
  candidates: readonly Candidate[],
  knobs: readonly Knob[],
  valuesOf: (c: Candidate) => KnobValues,
  operator: string,
): LearnedRegion[] {
  const regions: LearnedRegion[] = [];
  const byId = new Map(candidates.map((c) => [c.id, c]));
  const show = (v: KnobValues) => knobs.filter((k) => v[k.name] !== undefined && v[k.name] > 0).map((k) => `${k.name}=${v[k.name]}`).join(', ');
  for (const c of candidates) {
    const verdict = c.verdict;
    if (c.operator !== operator || c.mode === 'dispatch' || c.state !== 'done' || !verdict || verdict.status === 'ok') continue;
    const failed = valuesOf(c);
    const text = `${verdict.reason}\n${verdict.log ?? ''}`;
    if (SHARED.test(text)) {
      const limit = sharedFootprint(knobs, failed);
      if (limit > 1) {
        regions.push({ why: `${c.id} (${show(failed)}) ran out of shared memory: no tiles x stages at least as large`,
          excludes: (v) => sharedFootprint(knobs, v) >= limit });
      }
      continue;
    }
    if (REGISTERS.test(text)) {
      const limit = registerFootprint(knobs, failed);
      regions.push({ why: `${c.id} (${show(failed)}) ran out of registers: no tiles per warp at least as large`,
        excludes: (v) => registerFootprint(knobs, v) >= limit });
      continue;
    }
    if (verdict.status !== 'incorrect') continue;
    const parent = byId.get(c.parents[0]);
    if (!parent) continue;
    const before = valuesOf(parent);
    // the block sizes that shrank from a parent that was correct are what dropped data
    const shrunk = knobs.filter((k) => k.role === 'block' && failed[k.name] > 0 && (before[k.name] === 0 || failed[k.name] < before[k.name]));
    if (!shrunk.length) continue;
    const dims = failingShape(verdict.reason);
    if (shrunk.length === 1) {
      const k = shrunk[0];
      const b = failed[k.name];
      const larger = dims.filter((d) => d > b);
      const bound = larger.length ? nextPow2(Math.min(...larger)) : b * 2;
      regions.push({ why: `${c.id} was wrong with ${k.name}=${b}${dims.length ? ` on a shape with ${Math.min(...larger, bound)}` : ''}: ${k.name} stays at least ${bound}`,
        excludes: (v) => v[k.name] > 0 && v[k.name] < bound });
    } else {
      regions.push({ why: `${c.id} was wrong with ${shrunk.map((k) => `${k.name}=${failed[k.name]}`).join(', ')}: not all of them that small again`,
        excludes: (v) => shrunk.every((k) => v[k.name] > 0 && v[k.name] <= failed[k.name]) });
    }
  }
  return regions;
}

/** An NVIDIA SM's register file, in 32-bit registers, and the most a thread may have (every NVIDIA GPU since
 *  Kepler). */
const SM_REGISTERS = 65536;
const THREAD_REGISTERS = 255;
/** Triton's warps where a launch leaves them to it. */
const DEFAULT_WARPS = 4;

/** What the device rules out before any verdict, for a Triton kernel: a BLOCK_M x BLOCK_N tile (a matmul's fp32
 *  accumulator) lives in registers, so a tile of 65536 values or more fits no thread block of an NVIDIA GPU (ptxas
 *  refuses it: "Insufficient registers"), and more than 255 values a thread at the launch's warps spill every one.
 *  On the H200, the held-out matmul's first wave spent 4 of its 13 evaluations on 256 x 256 tiles that ptxas
 *  refused. None for other backends (a C++ kernel's blocks are cache tiles) or hardware named as another vendor's
 *  (its register files differ). */
export function deviceRegions(knobs: readonly Knob[], backend: string, hardware?: string): LearnedRegion[] {
  if (backend !== 'triton' || /\b(?:amd|mi\d+\w*|rocm|gfx\d+|intel|xpu|cpu)\b/i.test(hardware ?? '')) return [];
  const blocks = knobs.filter((k) => k.role === 'block');
  const axis = (a: string) => blocks.find((k) => startKey(k) === `block_${a}`);
  const [m, n] = [axis('m'), axis('n')];
  if (!m || !n) return [];
  const warps = knobs.filter((k) => k.role === 'warps');
  const tile = (v: KnobValues) => eff(v[m.name]) * eff(v[n.name]);
  const threads = (v: KnobValues) => 32 * warps.reduce((a, k) => a * (v[k.name] > 0 ? v[k.name] : DEFAULT_WARPS), warps.length ? 1 : DEFAULT_WARPS);
  return [{
    why: `${m.name} x ${n.name} held in registers: under ${SM_REGISTERS} values a block and at most ${THREAD_REGISTERS} a thread`,
    excludes: (v) => tile(v) >= SM_REGISTERS || tile(v) / threads(v) > THREAD_REGISTERS,
  }];
}
