// The Slurm command lines a Slurm host runs on the login node, and the parsers for their answers.
// Kept free of I/O so each format is pinned by a unit test.
import { shq } from './slurmLoginShell';

export interface WorkerScriptOptions {
  jobName: string;
  /** Absolute path of the queue folder on the shared filesystem. */
  queueDir: string;
  /** Absolute path of the folder holding `kernelevolve_harness/`. */
  harnessParent: string;
  python: string;
  partition?: string;
  account?: string;
  gres?: string;
  timeLimit?: string;
  sbatchOptions?: string[];
  idleS: number;
  pollS: number;
  /** Shell lines run before the worker starts (modules, environment). */
  setup?: string;
}

/** The batch script of one worker job: one worker process serving the queue until idle or stopped. */
export function workerScript(o: WorkerScriptOptions): string {
  const directives = [
    `--job-name=${o.jobName}`,
    `--output=${o.queueDir}/logs/%j.out`,
    '--ntasks=1',
    o.partition && `--partition=${o.partition}`,
    o.account && `--account=${o.account}`,
    o.gres && `--gres=${o.gres}`,
    o.timeLimit && `--time=${o.timeLimit}`,
    ...(o.sbatchOptions ?? []),
  ].filter((d): d is string => !!d);
  return [
    '#!/bin/sh',
    ...directives.map((d) => `#SBATCH ${d}`),
    '# One worker per job: it claims candidates from the queue folder and judges each with the harness.',
    ...(o.setup ? [o.setup] : []),
    `PYTHONPATH=${shq(o.harnessParent)}\${PYTHONPATH:+:$PYTHONPATH}`,
    'export PYTHONPATH',
    `exec ${shq(o.python)} -m kernelevolve_harness.worker_service worker --queue ${shq(o.queueDir)} ` +
      `--idle-s ${o.idleS} --poll-s ${o.pollS}`,
    '',
  ].join('\n');
}

/** `sbatch --parsable` prints `jobid` or `jobid;cluster`. */
export function parseSbatchJobId(stdout: string): string | undefined {
  const m = /^(\d+)(?:;\S+)?\s*$/m.exec(stdout.trim());
  return m?.[1];
}

export interface SqueueJob {
  jobId: string;
  state: string;
  node: string;
  reason: string;
}

export const SQUEUE_FORMAT = '%i|%T|%N|%r';

/** Parses `squeue -h -o '%i|%T|%N|%r'`. */
export function parseSqueue(stdout: string): SqueueJob[] {
  return stdout.split('\n').map((l) => l.trim()).filter(Boolean).map((line) => {
    const [jobId = '', state = '', node = '', reason = ''] = line.split('|');
    return { jobId, state, node, reason: reason === 'None' ? '' : reason };
  }).filter((j) => /^\d+/.test(j.jobId));
}

export const SINFO_FORMAT = '%P|%a|%D|%N|%G|%c|%m|%l|%t';

export interface PartitionFacts {
  partition: string;
  available: string;
  nodes: number;
  nodeList: string[];
  gres: string[];
  cpusPerNode: string[];
  memoryMb: string[];
  timeLimit: string;
  states: string[];
}

/** Parses `sinfo -h -p P -o '%P|%a|%D|%N|%G|%c|%m|%l|%t'` (one line per node state group). */
export function parseSinfo(stdout: string): PartitionFacts | undefined {
  const rows = stdout.split('\n').map((l) => l.trim()).filter(Boolean).map((l) => l.split('|'));
  if (!rows.length) return undefined;
  const uniq = (xs: string[]) => [...new Set(xs.filter((x) => x && x !== '(null)'))];
  return {
    partition: rows[0][0].replace(/\*$/, ''),
    available: rows[0][1] ?? '',
    nodes: rows.reduce((n, r) => n + (Number.parseInt(r[2] ?? '0', 10) || 0), 0),
    nodeList: uniq(rows.map((r) => r[3] ?? '')),
    gres: uniq(rows.map((r) => r[4] ?? '')),
    cpusPerNode: uniq(rows.map((r) => r[5] ?? '')),
    memoryMb: uniq(rows.map((r) => r[6] ?? '')),
    timeLimit: rows[0][7] ?? '',
    states: uniq(rows.map((r) => `${r[8]}:${r[2]}`)),
  };
}

/** GPUs per node from gres strings such as `gpu:h100:8(S:0-1)` or `gpu:4`. */
export function gpusFromGres(gres: string[]): string {
  const gpus = gres.flatMap((g) => g.split(',')).filter((g) => g.startsWith('gpu'))
    .map((g) => g.replace(/\(.*\)$/, ''));
  return gpus.length ? gpus.join(', ') : 'none';
}

export const SACCTMGR_FIELDS = 'Account,User,Partition,QOS,GrpTRES,MaxJobs,MaxSubmit,MaxWall,MaxTRES';

/** Parses `sacctmgr -n -P show assoc ... format=SACCTMGR_FIELDS` into one sentence per association. */
export function parseSacctmgrLimits(stdout: string): string {
  const names = SACCTMGR_FIELDS.split(',');
  const lines = stdout.split('\n').map((l) => l.trim()).filter(Boolean);
  if (!lines.length) return 'no association found';
  return lines.map((line) => {
    const cells = line.split('|');
    const limits = names.slice(3).map((n, i) => (cells[i + 3] ? `${n}=${cells[i + 3]}` : '')).filter(Boolean);
    const who = [cells[0], cells[1], cells[2]].filter(Boolean).join('/');
    return `${who}: ${limits.length ? limits.join(' ') : 'no limits set'}`;
  }).join('; ');
}

/** Slurm states after which a job's worker is gone (or going) and its candidates must be requeued. */
export const ENDED_STATES = new Set([
  'BOOT_FAIL', 'CANCELLED', 'COMPLETED', 'DEADLINE', 'FAILED', 'NODE_FAIL', 'OUT_OF_MEMORY', 'PREEMPTED',
  'TIMEOUT', 'REVOKED', 'SPECIAL_EXIT',
]);
