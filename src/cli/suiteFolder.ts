// A suite's folder (`--out`), what makes a suite resumable: suite-args.json says what the suite is (its problems'
// folder and the options that shape a row), and each problem's row.json is written, whole or not at all, once that
// problem is finished. A suite run again into the same folder (or `--resume OUT`) skips the finished problems and
// finishes the rest; the table covers them all, and suite-sessions.json the wall time of each session.
import * as fs from 'node:fs';
import * as path from 'node:path';
import { CliError } from './cliError';

export interface SuiteArgs {
  /** The folder of problems, absolute. */
  dir: string;
  selfJudge: boolean;
  budget?: string;
  operators?: string;
  model?: string;
  time?: string;
  compile: string;
  /** wide (default) or problem: the harness's robustness pass (`--inputs`). */
  inputs?: string;
  /** Where the problems are judged: may change between sessions (the rows stay comparable only if it does not). */
  host?: string[];
  config?: string;
}

const ARGS_FILE = 'suite-args.json';
const ROW_FILE = 'row.json';
const SESSIONS_FILE = 'suite-sessions.json';
/** What a row depends on: a folder holding rows made with other values is another suite. */
const DEFINING = ['dir', 'selfJudge', 'budget', 'operators', 'model', 'time', 'compile', 'inputs'] as const;

const flag: Record<(typeof DEFINING)[number], string> = {
  dir: 'DIR', selfJudge: '--self-judge', budget: '--budget', operators: '--operators', model: '--model', time: '--time', compile: '--compile', inputs: '--inputs',
};

/** The suite's arguments as stored in `out`, when it holds a suite. */
export function storedArgs(out: string): SuiteArgs | undefined {
  try {
    return JSON.parse(fs.readFileSync(path.join(out, ARGS_FILE), 'utf8')) as SuiteArgs;
  } catch {
    return undefined;
  }
}

/** Makes `out` the folder of this suite: a new one records its arguments; one that holds a suite already must hold
 *  this one (the same problems and the options that shape a row), else the user is told which option differs. */
export function openSuiteFolder(out: string, args: SuiteArgs): { resumed: boolean } {
  fs.mkdirSync(out, { recursive: true });
  const stored = storedArgs(out);
  if (stored) {
    const differs = DEFINING.filter((k) => JSON.stringify(stored[k] ?? null) !== JSON.stringify(args[k] ?? null));
    if (differs.length) {
      const what = differs.map((k) => `${flag[k]} ${JSON.stringify(stored[k] ?? null)} there, ${JSON.stringify(args[k] ?? null)} here`).join('; ');
      throw new CliError(`${out} holds another suite (${what}). Give the same folder and options to finish it (or \`kernelevolve suite --resume ${out}\`), or another --out for a new suite.`);
    }
  }
  writeAtomically(path.join(out, ARGS_FILE), JSON.stringify(args, null, 2) + '\n');
  return { resumed: !!stored };
}

/** Adds this session's wall time to the suite's record (suite-sessions.json) and returns every session's, this one
 *  last: a suite interrupted and resumed reports the time it took in all, not only its last session's. */
export function recordSession(out: string, seconds: number): number[] {
  const file = path.join(out, SESSIONS_FILE);
  let earlier: number[] = [];
  try {
    const stored = JSON.parse(fs.readFileSync(file, 'utf8'));
    if (Array.isArray(stored) && stored.every((n) => typeof n === 'number')) earlier = stored;
  } catch {
    // the first session, or a suite folder from before sessions were recorded
  }
  const all = [...earlier, seconds];
  writeAtomically(file, JSON.stringify(all) + '\n');
  return all;
}

/** A finished problem's row, or undefined when the problem has not been finished in this folder. */
export function finishedRow<T>(problemFolder: string): T | undefined {
  try {
    return JSON.parse(fs.readFileSync(path.join(problemFolder, ROW_FILE), 'utf8')) as T;
  } catch {
    return undefined;
  }
}

export function recordFinished(problemFolder: string, row: object): void {
  writeAtomically(path.join(problemFolder, ROW_FILE), JSON.stringify(row, null, 2) + '\n');
}

/** Written under another name and renamed: a suite killed mid-write leaves the old file or the new one. */
function writeAtomically(file: string, text: string): void {
  const tmp = `${file}.${process.pid}.tmp`;
  fs.writeFileSync(tmp, text);
  fs.renameSync(tmp, file);
}
