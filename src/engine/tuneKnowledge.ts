// Hardware-informed first proposals for the tuner: configurations known to be good per hardware and kernel
// class, kept as data in the knowledge folders (`tune-*.json` next to the notes, e.g.
// knowledge/nvidia/hopper/tune-triton.json) so a user extends them by adding a file to a folder of their own.
// A start names values by meaning (block_m, block_k, rows, warps, stages, group), and is mapped onto the knobs
// a kernel actually has by each knob's role and name.
import * as fs from 'node:fs';
import * as path from 'node:path';
import type { Knob, KnobValues } from './knobs';
import { builtinKnowledgeDir, hardwareFolders } from './llm/knowledgeBase';

export type KernelClass = 'matmul' | 'attention' | 'reduction' | 'elementwise';

export type TuneStart = Partial<Record<'block_m' | 'block_n' | 'block_k' | 'block' | 'rows' | 'warps' | 'stages' | 'group', number>>;

/** The class a Triton kernel's body suggests: a dot with a softmax is attention, a dot alone a matmul, a reduction over an axis, else elementwise. */
export function kernelClassOf(kernelText: string): KernelClass {
  const dot = /\btl\.dot\s*\(/.test(kernelText);
  const reduces = /\btl\.(?:sum|max|min|reduce|argmax|argmin|cumsum|cumprod|xor_sum)\s*\(/.test(kernelText);
  if (dot) return /\btl\.(?:exp2?|math\.exp2?)\s*\(/.test(kernelText) && reduces ? 'attention' : 'matmul';
  return reduces ? 'reduction' : 'elementwise';
}

export interface TuneKnowledgeQuery {
  hardware?: string;
  backend: string;
  /** undefined for a C or C++ kernel: only a file's `any` starts apply. */
  kernelClass?: KernelClass;
  /** Folders of the user's own knowledge, searched like the bundled one (their files first); the files at a
   * user folder's top apply to every hardware (an accelerator's toolchain names such a folder). */
  userFolders?: string[];
  /** The bundled knowledge folder; default: the one shipped with the extension. */
  builtinDir?: string;
}

/** `any`: starts for every kernel of the file's backend (the only ones a C or C++ kernel reads: it has no class here). */
function readStarts(file: string, backend: string, kernelClass: KernelClass | undefined): TuneStart[] {
  let data: unknown;
  try {
    data = JSON.parse(fs.readFileSync(file, 'utf8'));
  } catch (e) {
    throw new Error(`${file} is not valid JSON (${(e as Error).message}); fix it or remove it from the knowledge folder.`);
  }
  const d = data as { backend?: string; starts?: Record<string, unknown> };
  if (d.backend && d.backend !== backend) return [];
  const list = [kernelClass ? d.starts?.[kernelClass] : undefined, d.starts?.any].flatMap((l) => (Array.isArray(l) ? l as unknown[] : []));
  return list.filter((s): s is TuneStart => typeof s === 'object' && s !== null
    && Object.values(s).every((v) => typeof v === 'number' && Number.isInteger(v) && v > 0));
}

/**
 * Starts for the query, most specific hardware folder first, the user's folders before the bundled ones, then the
 * files at the top of the user's folders; duplicates dropped.
 */
export function tuneStarts(q: TuneKnowledgeQuery): TuneStart[] {
  const roots = [...(q.userFolders ?? []), q.builtinDir ?? builtinKnowledgeDir()].filter((r): r is string => !!r);
  const dirs = hardwareFolders(q.hardware, q.backend).flatMap((folder) => roots.map((root) => path.join(root, ...folder.split('/'))));
  const out: TuneStart[] = [];
  const seen = new Set<string>();
  for (const dir of [...dirs, ...(q.userFolders ?? [])]) {
    let files: string[];
    try {
      files = fs.readdirSync(dir).filter((f) => /^tune-.*\.json$/i.test(f)).sort();
    } catch {
      continue;
    }
    for (const f of files) {
      for (const s of readStarts(path.join(dir, f), q.backend, q.kernelClass)) {
        const key = JSON.stringify(Object.entries(s).sort());
        if (!seen.has(key)) {
          seen.add(key);
          out.push(s);
        }
      }
    }
  }
  return out;
}

/** Which value of a start a knob takes: its role, and for block sizes the axis its name says (M, N, K, rows). */
export function startKey(knob: Pick<Knob, 'name' | 'role'>): keyof TuneStart | undefined {
  const name = knob.name.replace(/^(?:cfg\d+|heuristic)\./, '').replace(/@\d+$/, '');
  switch (knob.role) {
    case 'warps':
      return 'warps';
    case 'stages':
      return 'stages';
    case 'group':
      return 'group';
    case 'block': {
      if (/ROW/i.test(name)) return 'rows';
      const axis = /(?:^|_|BLOCK|TILE|BLK|B)(?:SIZE_?)?([MNK])$/i.exec(name)?.[1];
      return axis ? (`block_${axis.toLowerCase()}` as keyof TuneStart) : 'block';
    }
    default:
      return undefined;
  }
}

function nearest(domain: number[], v: number): number {
  return domain.reduce((a, b) => (Math.abs(Math.log2(b / v)) < Math.abs(Math.log2(a / v)) ? b : a));
}

/** The knob values a start gives the searchable knobs (the nearest value of each domain); undefined if it touches none. */
export function startValues(start: TuneStart, knobs: readonly Knob[]): KnobValues | undefined {
  const out: KnobValues = {};
  for (const k of knobs) {
    const key = startKey(k);
    if (!key) continue;
    const v = start[key] ?? (key.startsWith('block_') ? start.block : undefined);
    if (v !== undefined) out[k.name] = nearest(k.domain, v);
  }
  return Object.keys(out).length ? out : undefined;
}
