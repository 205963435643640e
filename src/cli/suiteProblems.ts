// The problems of a suite: every KernelBench-format file under its folder, in level subfolders too (KernelBench's
// own layout: level1/, level2/, level3/, whose file names repeat across levels), named by their path in the folder.
import * as fs from 'node:fs';
import * as path from 'node:path';
import { isKernelBenchProblem } from '../engine/kernelBenchProblem';

export interface SuiteProblem {
  /** The path in the suite's folder without `.py` (`level1/19_ReLU`): the row's name and the results' folder. */
  name: string;
  file: string;
}

const SKIPPED = new Set(['__pycache__', 'node_modules']);
/** KernelBench's names start with their number: 2_ before 10_. */
const byName = (a: string, b: string) => a.localeCompare(b, 'en', { numeric: true });

/** A link to a file (a folder of links to problems picks a level's shard); links to folders are not followed. */
function linksToFile(file: string): boolean {
  try {
    return fs.statSync(file).isFile();
  } catch {
    return false; // a dangling link
  }
}

/** The problems under `dir`, level by level and in KernelBench's numbering; `skip`: a folder not to look into (the
 *  suite's own output, whose torch.compile baselines are problems too). */
export function findProblems(dir: string, skip?: string): SuiteProblem[] {
  const root = path.resolve(dir);
  const found: SuiteProblem[] = [];
  const walk = (folder: string) => {
    const entries = fs.readdirSync(folder, { withFileTypes: true }).sort((a, b) => byName(a.name, b.name));
    for (const e of entries) {
      const full = path.join(folder, e.name);
      if (e.isDirectory()) {
        if (!e.name.startsWith('.') && !SKIPPED.has(e.name) && full !== skip) walk(full);
      } else if ((e.isFile() || (e.isSymbolicLink() && linksToFile(full))) && e.name.endsWith('.py') && isKernelBenchProblem(fs.readFileSync(full, 'utf8'))) {
        found.push({ name: path.relative(root, full).slice(0, -3).split(path.sep).join('/'), file: full });
      }
    }
  };
  walk(root);
  // the files at the top first, then each level's
  return [...found.filter((p) => !p.name.includes('/')), ...found.filter((p) => p.name.includes('/'))];
}
