// The `slurm` host: candidates are judged by long-lived worker jobs on a Slurm cluster, not one job per
// candidate (a scheduling round-trip per candidate would cost more than most evaluations). The host writes
// each candidate into a queue folder on the shared filesystem, starts worker jobs on demand (at most
// maxJobs), polls for verdicts, requeues what a vanished worker held, and scancels every job at the end.
import { randomBytes } from 'node:crypto';
import { verdictFromAnswer } from './harnessJob';
import { checkWithHarness } from './localHost';
import { harnessDir } from './harnessLocation';
import type { HostCheck } from '../contract/hardware';
import type { EvaluationJob, Placement, PoolVerdict } from '../contract/job';
import { SpecError } from '../contract/spec';
import type { Host, HostLogListener } from './host';
import { HostUnavailableError } from './host';
import type { SlurmHostConfig } from './hostConfig';
import { gpusFromGres, parseSacctmgrLimits, parseSinfo, SACCTMGR_FIELDS, SINFO_FORMAT, workerScript } from './slurmCommands';
import type { JobResult, QueueState } from './slurmJobQueue';
import { SlurmJobQueue } from './slurmJobQueue';
import type { LoginShell } from './slurmLoginShell';
import { LocalLoginShell, SetupLoginShell, shPath, shq } from './slurmLoginShell';
import { harnessFiles, specFiles, stageFiles } from './slurmStaging';
import type { WorkerJob } from './slurmWorkerPool';
import { SlurmWorkerPool } from './slurmWorkerPool';

export interface SlurmHostOptions {
  /** Where commands run; by default this machine (the extension runs on the login node). */
  shell?: LoginShell;
  /** How often the host looks for verdicts, ms. */
  pollMs?: number;
  /** How often squeue is asked about the worker jobs, ms. */
  squeueMs?: number;
  /** A worker with no heartbeat for this long is taken for dead (node lost) and its candidates requeued. */
  staleS?: number;
  /** How long an idle worker keeps its GPU before its job ends, s. */
  idleS?: number;
  /** How often a worker looks for a new candidate, s. */
  workerPollS?: number;
}

interface Outstanding {
  job: EvaluationJob;
  name: string;
  readyAt: number;
  startedOn?: string;
  resolve: (v: PoolVerdict) => void;
  reject: (e: Error) => void;
}

interface Prepared {
  workdir: string;
  harnessParent: string;
  queue: SlurmJobQueue;
  pool: SlurmWorkerPool;
}

/** After this many worker jobs in a row end without ever writing a heartbeat, the workers cannot start. */
const MAX_DEAD_ON_ARRIVAL = 3;

export class SlurmHost implements Host {
  readonly name: string;
  readonly slots: number;
  readonly hardware?: string;
  /** The workers time each evaluation from its start; time spent waiting for a Slurm job does not count. */
  readonly enforcesTimeout = true;
  /** Names this host's queue folder and jobs; unique per host object (one per run). */
  readonly session: string;
  private readonly shell: LoginShell;
  private readonly python: string;
  private readonly opts: Required<Omit<SlurmHostOptions, 'shell'>>;
  private prepared?: Promise<Prepared>;
  private readonly stagedSpecs = new Map<string, Promise<string>>();
  private readonly outstanding = new Map<string, Outstanding>();
  private readonly listeners = new Set<HostLogListener>();
  private acks: string[] = [];
  private seq = 0;
  private ticking = false;
  private timer?: NodeJS.Timeout;
  private lastSqueue = 0;
  private deadOnArrival = 0;
  private disposed = false;
  private poolNow?: SlurmWorkerPool;
  private tickDone?: Promise<void>;
  /** The last state said of each job, so squeue and heartbeats reporting the same change say it once. */
  private readonly lastTold = new Map<string, string>();

  constructor(private readonly config: SlurmHostConfig, options: SlurmHostOptions = {}) {
    this.name = config.name;
    this.slots = Math.max(1, config.maxJobs ?? 1);
    this.hardware = config.hardware;
    this.python = config.python ?? 'python3';
    const shell = options.shell ?? new LocalLoginShell();
    this.shell = config.setup ? new SetupLoginShell(shell, config.setup) : shell;
    this.opts = {
      pollMs: options.pollMs ?? 200,
      squeueMs: options.squeueMs ?? 2000,
      staleS: options.staleS ?? 120,
      idleS: options.idleS ?? config.idleTimeoutS ?? 300,
      workerPollS: options.workerPollS ?? 0.1,
    };
    const safeName = this.name.replace(/[^A-Za-z0-9_.-]/g, '_');
    this.session = `${safeName}-${new Date().toISOString().replace(/[-:T]/g, '').slice(0, 14)}-${randomBytes(3).toString('hex')}`;
  }

  get jobName(): string {
    return `kernelevolve-${this.session}`;
  }

  onLog(listener: HostLogListener): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  private log(level: 'info' | 'warn' | 'error', message: string): void {
    for (const l of this.listeners) l(level, `${this.name}: ${message}`);
  }

  /** The worker jobs started so far, with their Slurm state and node. */
  get workerJobs(): WorkerJob[] {
    return this.poolNow?.all ?? [];
  }

  /** The queue folder on the shared filesystem, once the host has prepared it. */
  async queueDir(): Promise<string> {
    return (await this.prepare()).queue.dir;
  }

  /** The workdir on the shared filesystem, with this version of the harness staged in it. */
  private async stageHarness(): Promise<{ workdir: string; harnessParent: string }> {
    const r = await this.shell.exec(`mkdir -p ${shPath(this.config.workdir ?? '~/.cache/kernelevolve')} && cd ${shPath(this.config.workdir ?? '~/.cache/kernelevolve')} && pwd -P`);
    if (r.code !== 0) {
      throw new HostUnavailableError(this.name, `Cannot create the Slurm host's workdir ${this.config.workdir ?? '~/.cache/kernelevolve'} on ${this.shell.where}: ` +
        `${r.stderr.trim()}. Set "workdir" to a folder on the shared filesystem that you can write.`);
    }
    const workdir = r.stdout.trim().split('\n').pop()!;
    const bundle = await harnessFiles(harnessDir());
    const harnessParent = `${workdir}/harness/${bundle.hash}`;
    await stageFiles(this.shell, this.python, harnessParent, bundle.files);
    return { workdir, harnessParent };
  }

  private prepare(): Promise<Prepared> {
    this.prepared ??= (async () => {
      const { workdir, harnessParent } = await this.stageHarness();
      const queueDir = `${workdir}/queue/${this.session}`;
      const queue = new SlurmJobQueue(this.shell, queueDir, this.python, harnessParent);
      await queue.ensure();
      const scriptPath = `${queueDir}/worker.sbatch`;
      const script = workerScript({
        jobName: this.jobName, queueDir, harnessParent, python: this.python, partition: this.config.partition,
        account: this.config.account, gres: this.config.gres, timeLimit: this.config.timeLimit,
        sbatchOptions: this.config.sbatchOptions, idleS: this.opts.idleS, pollS: this.opts.workerPollS, setup: this.config.setup,
      });
      const w = await this.shell.exec(`cat > ${shq(scriptPath)}`, { stdin: script });
      if (w.code !== 0) throw new HostUnavailableError(this.name, `Cannot write ${scriptPath} on ${this.shell.where}: ${w.stderr.trim()}.`);
      const pool = new SlurmWorkerPool(this.shell, this.jobName, scriptPath, (job, previous) => this.onJobChange(job, previous));
      this.poolNow = pool;
      return { workdir, harnessParent, queue, pool };
    })();
    this.prepared.catch(() => (this.prepared = undefined));
    return this.prepared;
  }

  private onJobChange(job: WorkerJob, previous: string): void {
    const told = `${job.state}|${job.node}|${job.reason}|${job.ended ?? ''}`;
    if (this.lastTold.get(job.jobId) === told) return;
    this.lastTold.set(job.jobId, told);
    if (!previous) this.log('info', `Slurm job ${job.jobId} submitted (worker ${this.workerCount()}/${this.slots}).`);
    else if (job.ended) this.log('info', `Slurm job ${job.jobId}${job.node ? ` on ${job.node}` : ''} ended: ${job.ended}.`);
    else this.log('info', `Slurm job ${job.jobId} ${job.state}${job.node ? ` on ${job.node}` : ''}${job.reason ? ` (${job.reason})` : ''}.`);
  }

  private workerCount(): number {
    return this.poolNow?.active.length ?? 0;
  }

  private stageSpec(job: EvaluationJob, workdir: string): Promise<string> {
    const key = `${job.specPath}\0${job.baselinePath}`;
    let staged = this.stagedSpecs.get(key);
    if (!staged) {
      staged = (async () => {
        const s = await specFiles(job.specPath, job.baselinePath);
        const dir = `${workdir}/specs/${s.hash}`;
        await stageFiles(this.shell, this.python, dir, s.files);
        return JSON.stringify({ spec: `${dir}/${s.spec}`, baseline: `${dir}/${s.baseline}` });
      })();
      staged.catch(() => this.stagedSpecs.delete(key));
      this.stagedSpecs.set(key, staged);
    }
    return staged;
  }

  async evaluate(job: EvaluationJob, signal?: AbortSignal): Promise<PoolVerdict> {
    if (this.disposed) throw new HostUnavailableError(this.name, `The Slurm host ${this.name} was shut down.`);
    const readyAt = Date.now();
    let p: Prepared;
    let paths: { spec: string; baseline: string };
    try {
      p = await this.prepare();
      paths = JSON.parse(await this.stageSpec(job, p.workdir)) as { spec: string; baseline: string };
    } catch (e) {
      // Copying to the cluster failed: the host's fault, not the candidate's.
      throw e instanceof HostUnavailableError ? e : new HostUnavailableError(this.name, (e as Error).message);
    }
    signal?.throwIfAborted();
    const name = `${String(++this.seq).padStart(6, '0')}-${job.id.replace(/[^A-Za-z0-9_.-]/g, '_').slice(0, 60)}`;
    const result = new Promise<PoolVerdict>((resolve, reject) => {
      this.outstanding.set(name, { job, name, readyAt, resolve, reject });
    });
    try {
      await p.queue.submit(name, {
        id: job.id, spec: paths.spec, baseline: paths.baseline, candidate_name: job.candidateFileName,
        candidate_source: job.candidateSource, profile: job.profile, timeout_s: job.timeoutS, ready_at: readyAt / 1000,
        ...(this.config.toolchain ? { toolchain: this.config.toolchain } : {}),
        ...(job.inputs === 'problem' ? { inputs: 'problem' as const } : {}),
        ...(job.memoryShare !== undefined && job.memoryShare < 1 ? { memory_share: job.memoryShare } : {}),
        ...(job.background ? { background: true } : {}),
      });
    } catch (e) {
      this.outstanding.delete(name);
      throw new HostUnavailableError(this.name, (e as Error).message);
    }
    const onAbort = () => {
      const o = this.outstanding.get(name);
      if (!o) return;
      this.outstanding.delete(name);
      o.reject(signal?.reason instanceof Error ? signal.reason : new Error('The evaluation was cancelled.'));
      p.queue.cancel(name).catch(() => undefined);
    };
    signal?.addEventListener('abort', onAbort, { once: true });
    this.schedule(0);
    try {
      return await result;
    } finally {
      signal?.removeEventListener('abort', onAbort);
    }
  }

  private schedule(delayMs: number): void {
    if (this.disposed || this.timer || this.ticking) return;
    this.timer = setTimeout(() => {
      this.timer = undefined;
      this.tickDone = this.tick();
    }, delayMs);
  }

  private async tick(): Promise<void> {
    this.ticking = true;
    try {
      const p = await this.prepare();
      await this.scale(p);
      const ack = this.acks;
      this.acks = [];
      let state: QueueState;
      try {
        state = await p.queue.poll(ack);
      } catch (e) {
        this.acks.push(...ack);
        this.log('warn', `could not read the queue (${(e as Error).message}); retrying.`);
        return;
      }
      for (const r of state.done) this.settle(r);
      this.noteStarts(state);
      await this.reapWorkers(p, state);
    } catch (e) {
      this.failAll(e as Error);
    } finally {
      this.ticking = false;
      if (this.outstanding.size || this.acks.length) this.schedule(this.opts.pollMs);
    }
  }

  /** Starts worker jobs while candidates outnumber workers, up to maxJobs. */
  private async scale(p: Prepared): Promise<void> {
    const wanted = Math.min(this.slots, this.outstanding.size);
    while (!this.disposed && p.pool.active.length < wanted) {
      await p.pool.submit();
    }
  }

  private noteStarts(state: QueueState): void {
    for (const [worker, names] of Object.entries(state.claimed)) {
      for (const n of names) {
        const o = this.outstanding.get(n);
        if (o && o.startedOn !== worker) {
          o.startedOn = worker;
          const beat = state.workers[worker];
          this.log('info', `${o.job.id} started on Slurm job ${beat?.job_id || worker}${beat?.node ? ` (node ${beat.node})` : ''}.`);
        }
      }
    }
  }

  private settle(r: JobResult): void {
    this.acks.push(r.name);
    const o = this.outstanding.get(r.name);
    if (!o) return; // cancelled, or a second verdict after a requeue: the first one stood
    this.outstanding.delete(r.name);
    const job = this.poolNow?.get(r.job_id);
    if (job) job.heartbeatSeen = true;
    const placement: Placement = { host: this.name, jobId: r.job_id || r.worker, node: r.node, device: r.device || undefined };
    let verdict: PoolVerdict;
    try {
      verdict = verdictFromAnswer(r.envelope, this.name, placement);
    } catch (e) {
      o.reject(e instanceof SpecError ? e : new Error(`Slurm job ${placement.jobId} on ${r.node}: ${(e as Error).message}`));
      return;
    }
    o.resolve({
      ...verdict,
      wall_ms: Date.now() - o.readyAt,
      // Time between the candidate being ready and a worker starting it, on the host's clock.
      queue_wait_ms: Math.max(0, Math.round(r.started_at * 1000 - o.readyAt)),
      attempts: r.attempts,
    });
  }

  /** Finds worker jobs that are gone (squeue, exit notes, stale heartbeats) and requeues what they held. */
  private async reapWorkers(p: Prepared, state: QueueState): Promise<void> {
    const gone: WorkerJob[] = [];
    for (const [worker, beat] of Object.entries(state.workers)) {
      const job = p.pool.get(beat.job_id || worker);
      if (!job || job.ended) continue;
      if (!job.heartbeatSeen && beat.state !== 'exited') {
        // The worker's first heartbeat says the job runs, sooner than squeue's next look would.
        const previous = job.state;
        job.state = 'RUNNING';
        job.node = beat.node || job.node;
        this.onJobChange(job, previous);
      }
      job.heartbeatSeen = true;
      if (beat.node) job.node = beat.node;
      if (beat.state === 'exited') {
        p.pool.end(job, `worker exited (${beat.reason ?? 'unknown'})`);
        gone.push(job);
      } else if (beat.age_s > this.opts.staleS) {
        this.log('warn', `Slurm job ${job.jobId} on ${job.node || 'its node'} sent no heartbeat for ${Math.round(beat.age_s)} s; cancelling it and requeueing its candidates.`);
        // Take the candidates back before the scancel: a worker that wakes up finds its claim gone and drops its verdict.
        const back = await p.queue.requeue(job.jobId);
        if (back.length) this.log('warn', `requeued ${back.join(', ')} from Slurm job ${job.jobId}.`);
        await p.pool.cancel([job.jobId]);
        p.pool.end(job, 'heartbeat lost');
        gone.push(job);
      }
    }
    if (Date.now() - this.lastSqueue >= this.opts.squeueMs || p.pool.active.some((j) => !j.heartbeatSeen)) {
      this.lastSqueue = Date.now();
      gone.push(...(await p.pool.refresh()));
    }
    for (const job of gone) {
      if (!job.heartbeatSeen) this.deadOnArrival++;
      else this.deadOnArrival = 0;
      const back = [...(state.workers[job.jobId]?.requeued ?? []), ...(await p.queue.requeue(job.jobId))];
      if (back.length) this.log('warn', `Slurm job ${job.jobId} ended (${job.ended}) holding ${back.join(', ')}; requeued.`);
      for (const o of this.outstanding.values()) if (o.startedOn === job.jobId) o.startedOn = undefined;
    }
    if (this.deadOnArrival >= MAX_DEAD_ON_ARRIVAL && this.outstanding.size) {
      const last = gone[gone.length - 1] ?? p.pool.all[p.pool.all.length - 1];
      const logTail = last ? await this.shell.exec(`tail -c 1500 ${shq(`${p.queue.dir}/logs/${last.jobId}.out`)}`).then((r) => r.stdout.trim()).catch(() => '') : '';
      this.failAll(new HostUnavailableError(this.name,
        `${this.deadOnArrival} worker jobs in a row ended without starting a worker (last: job ${last?.jobId}, ${last?.ended}). ` +
        `Check that "python" (${this.python}) runs on the compute nodes and that "workdir" is on a filesystem they share.` +
        (logTail ? `\nThe last worker's log:\n${logTail}` : '')));
      this.deadOnArrival = 0;
    }
  }

  private failAll(e: Error): void {
    const err = e instanceof HostUnavailableError ? e : new HostUnavailableError(this.name, e.message);
    for (const o of this.outstanding.values()) o.reject(err);
    this.outstanding.clear();
  }

  async check(): Promise<HostCheck> {
    const facts: Record<string, string> = { login: this.shell.where };
    try {
      const version = await this.shell.exec('sbatch --version');
      if (version.code !== 0) {
        return { host: this.name, reachable: false, facts,
          error: `sbatch does not run on ${this.shell.where} (${(version.stderr || version.stdout).trim() || `exit ${version.code}`}); install Slurm's client commands there or point "host" at the login node.` };
      }
      facts.slurm = version.stdout.trim();
      const part = this.config.partition;
      const sinfo = await this.shell.exec(`sinfo -h ${part ? `-p ${shq(part)} ` : ''}-o ${shq(SINFO_FORMAT)}`);
      if (sinfo.code !== 0) {
        return { host: this.name, reachable: false, facts, error: `sinfo failed on ${this.shell.where}: ${sinfo.stderr.trim()}` };
      }
      // Without a partition the cluster's default one (marked `*`) is where jobs go.
      const lines = sinfo.stdout.split('\n').filter((l) => l.trim() && (part || l.split('|')[0].endsWith('*')));
      const info = parseSinfo(lines.join('\n'));
      if (!info) {
        return { host: this.name, reachable: false, facts,
          error: part ? `Slurm knows no partition "${part}"; \`sinfo -s\` lists the partitions.` : 'Slurm has no default partition; set "partition".' };
      }
      facts.partition = `${info.partition} (${info.available})`;
      facts.nodes = `${info.nodes}: ${info.nodeList.join(',')} [${info.states.join(' ')}]`;
      facts.gpus = gpusFromGres(info.gres);
      facts.cpus = info.cpusPerNode.join('/');
      facts.memory = `${info.memoryMb.join('/')} MB`;
      facts.timeLimit = info.timeLimit;
      const acct = await this.shell.exec(`sacctmgr -n -P show assoc where user="$(id -un)"${this.config.account ? ` account=${shq(this.config.account)}` : ''} format=${SACCTMGR_FIELDS}`);
      facts.limits = acct.code === 0 ? parseSacctmgrLimits(acct.stdout)
        : `unknown (${(acct.stderr || acct.stdout).trim().split('\n')[0] || 'sacctmgr failed'})`;
      if (this.config.gres?.startsWith('gpu') && facts.gpus === 'none') {
        return { host: this.name, reachable: true, facts, error: `"gres" asks for ${this.config.gres}, but partition ${info.partition} lists no GPUs.` };
      }
      return await this.checkOnNode(facts);
    } catch (e) {
      return { host: this.name, reachable: false, facts, error: (e as Error).message };
    }
  }

  /**
   * The harness's own check (`check-host`) inside a short job on a compute node, with the worker job's
   * partition, account, gres and setup: what candidates will find there (python, numpy, compilers, GPU, torch,
   * Triton), not what the login node has. A cluster that cannot start the job within a minute says so.
   */
  private async checkOnNode(facts: Record<string, string>): Promise<HostCheck> {
    const { harnessParent } = await this.stageHarness();
    const options = [
      `--job-name=${this.jobName}-check`, '--ntasks=1', '--time=5', '--immediate=60',
      this.config.partition && `--partition=${this.config.partition}`,
      this.config.account && `--account=${this.config.account}`,
      this.config.gres && `--gres=${this.config.gres}`,
      ...(this.config.sbatchOptions ?? []),
    ].filter((o): o is string => !!o);
    const onNode = [
      ...(this.config.setup ? [this.config.setup] : []),
      `PYTHONPATH=${shq(harnessParent)}\${PYTHONPATH:+:$PYTHONPATH}`,
      'export PYTHONPATH',
      `exec ${shq(this.python)} -m kernelevolve_harness check-host`,
    ].join('\n');
    const node = await checkWithHarness(this.name, async () => {
      const r = await this.shell.exec(`srun ${options.map(shq).join(' ')} sh -c ${shq(onNode)}`, { timeoutS: 180 });
      return { code: r.code, signal: null, stdout: r.stdout, stderr: r.stderr };
    });
    // Slurm's own view of the partition stands where both name a fact (cpus per node).
    const merged = { ...node.facts, ...facts };
    if (node.error) {
      return { host: this.name, reachable: true, facts: merged, error: `On a compute node (srun): ${node.error}` };
    }
    return { host: this.name, reachable: true, facts: merged };
  }

  /** Ends the run on the cluster: workers told to stop, every job scancelled, waiting candidates refused. */
  async dispose(): Promise<void> {
    if (this.disposed) return;
    this.disposed = true;
    clearTimeout(this.timer);
    // A tick may be inside sbatch: let it finish, so the job it submits is among those cancelled.
    await this.tickDone;
    this.failAll(new HostUnavailableError(this.name, `The Slurm host ${this.name} was shut down before the candidate was judged.`));
    const prepared = this.prepared ? await this.prepared.catch(() => undefined) : undefined;
    if (prepared) {
      await prepared.queue.stop().catch(() => undefined);
      const ids = await prepared.pool.cancelAll().catch(() => []);
      if (ids.length) this.log('info', `scancelled Slurm job(s) ${ids.join(', ')}.`);
      await prepared.queue.clear().catch(() => undefined);
    }
    await this.shell.dispose();
  }
}
