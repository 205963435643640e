// Wins from earlier runs in the workspace (`.kernelevolve/runs/*/`), offered to the model as examples of
// what worked: the same kernel's wins first, then the same backend's. Only what the run store wrote is
// read; a run folder that cannot be read is skipped (it may be from another version, or half-written).
import { promises as fs } from 'node:fs';
import * as path from 'node:path';
import type { KernelSpec } from '../spec';

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
  spec: KernelSpec;
  /** At most this many wins (default 6). */
  limit?: number;
  /** Wins below this speedup are not worth showing (default 1.05). */
  minSpeedup?: number;
}

interface StoredCandidate {
  id?: string;
  operator?: string;
  rationale?: string;
  verdict?: { status?: string; speedup?: number; host?: string };
}

export async function loadPastWins(q: PastWinsQuery): Promise<PastWin[]> {
  const runsDir = path.join(q.workspaceDir, '.kernelevolve', 'runs');
  let entries: string[];
  try {
    entries = await fs.readdir(runsDir);
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
  const run = JSON.parse(await fs.readFile(path.join(runDir, 'run.json'), 'utf8')) as Record<string, any>;
  const kernel: string = run.kernel ?? run.spec?.kernel ?? '';
  const backend: string = run.backend ?? run.spec?.backend ?? '';
  const sourcePath: string | undefined = run.sourcePath ?? run.spec?.sourcePath;
  const specPath: string | undefined = run.specPath ?? run.spec?.specPath;
  if (backend && backend !== q.spec.backend) return [];
  const sameKernel = kernel === q.spec.kernel
    && ((sourcePath !== undefined && path.resolve(sourcePath) === q.spec.sourcePath) || (specPath !== undefined && path.resolve(specPath) === q.spec.specPath));
  const candidates = await readCandidates(runDir);
  const minSpeedup = q.minSpeedup ?? 1.05;
  const out: PastWin[] = [];
  for (const c of candidates) {
    const s = c.verdict?.speedup;
    if (c.verdict?.status !== 'ok' || typeof s !== 'number' || s < minSpeedup || !c.rationale || c.operator === 'baseline') continue;
    out.push({
      runId: String(run.runId ?? path.basename(runDir)), runDir, kernel, backend: backend || q.spec.backend,
      hardware: run.hardware, speedup: s, rationale: c.rationale, operator: c.operator ?? '', sameKernel,
    });
  }
  // Within a run, the best few ideas are enough.
  return out.sort((a, b) => b.speedup - a.speedup).slice(0, 3);
}

/** The run's candidates with their verdicts, from whichever of the store's files are present. */
async function readCandidates(runDir: string): Promise<StoredCandidate[]> {
  const byId = new Map<string, StoredCandidate>();
  const merge = (c: StoredCandidate) => {
    if (!c || typeof c !== 'object') return;
    const id = c.id ?? `#${byId.size}`;
    byId.set(id, { ...byId.get(id), ...c, verdict: c.verdict ?? byId.get(id)?.verdict });
  };
  for (const file of ['candidates.jsonl', 'verdicts.jsonl', 'events.jsonl']) {
    let text: string;
    try {
      text = await fs.readFile(path.join(runDir, file), 'utf8');
    } catch {
      continue;
    }
    for (const line of text.split('\n')) {
      if (!line.trim()) continue;
      try {
        const rec = JSON.parse(line);
        if (rec?.candidate) merge(rec.candidate);
        else if (rec?.verdict && rec?.id) merge({ id: rec.id, verdict: rec.verdict });
        else merge(rec);
      } catch {
        // a torn last line of an interrupted run
      }
    }
  }
  for (const dirName of ['candidates']) {
    let files: string[];
    try {
      files = await fs.readdir(path.join(runDir, dirName));
    } catch {
      continue;
    }
    for (const f of files.filter((x) => x.endsWith('.json'))) {
      try {
        merge(JSON.parse(await fs.readFile(path.join(runDir, dirName, f), 'utf8')));
      } catch {
        // skip
      }
    }
  }
  return [...byId.values()];
}
