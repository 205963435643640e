// Wins from earlier runs in the workspace (`.kernelevolve/runs/*/`), offered to the model as examples of
// what worked: the same kernel's wins first, then the same backend's. Runs are read through the run store;
// a folder it cannot read is skipped (another format version, or half-written).
import * as fs from 'node:fs';
import * as path from 'node:path';
import { RunStore } from '../runStore';
import type { KernelSpec } from '../spec';
import { fitness } from '../fitness';

export interface PastWin {
  runId: string;
  runDir: string;
  kernel: string;
  backend: string;
  hardware?: string;
  speedup: number;
  rationale: string;
  operator: string;
  /** The same kernel of the same source file as this run's. */
  sameKernel: boolean;
}

export interface PastWinsQuery {
  workspaceDir: string;
  /** This run's folder, left out. */
  excludeRunDir?: string;
  /** Runs created at or after this moment are left out (this run, when its folder is not known yet). */
  createdBefore?: Date;
  spec: KernelSpec;
  /** At most this many wins (default 6). */
  limit?: number;
  /** Wins below this speedup are not worth showing (default 1.05). */
  minSpeedup?: number;
}

export async function loadPastWins(q: PastWinsQuery): Promise<PastWin[]> {
  const runsDir = path.join(q.workspaceDir, '.kernelevolve', 'runs');
  let entries: string[];
  try {
    entries = await fs.promises.readdir(runsDir);
  } catch {
    return [];
  }
  const exclude = q.excludeRunDir ? path.resolve(q.excludeRunDir) : undefined;
  const wins: PastWin[] = [];
  for (const name of entries) {
    const runDir = path.join(runsDir, name);
    if (exclude && path.resolve(runDir) === exclude) continue;
    try {
      wins.push(...(await winsOfRun(runDir, q)));
    } catch {
      // unreadable run: skip
    }
  }
  wins.sort((a, b) => Number(b.sameKernel) - Number(a.sameKernel) || b.speedup - a.speedup);
  // One line per idea: the same rationale from several runs says nothing new.
  const seen = new Set<string>();
  return wins.filter((w) => !seen.has(w.rationale) && seen.add(w.rationale)).slice(0, q.limit ?? 6);
}

async function winsOfRun(runDir: string, q: PastWinsQuery): Promise<PastWin[]> {
  if (!fs.existsSync(path.join(runDir, 'run.json'))) return [];
  const { record, candidates } = RunStore.load(runDir);
  if (q.createdBefore && Date.parse(record.createdAt) >= q.createdBefore.getTime()) return [];
  const spec = record.spec;
  if (spec.backend !== q.spec.backend) return [];
  const sameKernel = spec.kernel === q.spec.kernel && path.resolve(spec.sourcePath) === path.resolve(q.spec.sourcePath);
  const minSpeedup = q.minSpeedup ?? 1.05;
  const out: PastWin[] = [];
  for (const c of candidates) {
    const s = fitness(c.verdict);
    if (s < minSpeedup || !c.rationale || c.operator === 'baseline') continue;
    out.push({
      runId: record.runId, runDir, kernel: spec.kernel, backend: spec.backend,
      hardware: record.hosts.find((h) => h.hardware)?.hardware, speedup: s, rationale: c.rationale, operator: c.operator, sameKernel,
    });
  }
  // Within a run, the best few ideas are enough.
  return out.sort((a, b) => b.speedup - a.speedup).slice(0, 3);
}
