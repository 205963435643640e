// One evaluation outside a run (profiling the kernel as it stands): a job for the host pool like any other,
// so it goes to a free host, moves on when one fails, and every host made is given back.
import type { EvaluationJob, PoolVerdict } from '../contract/job';
import { ConfigError } from '../contract/config';
import { createHosts, NO_HOSTS, type HostOptions, type KernelEvolveConfig } from '../remote/hostConfig';
import { HostPool } from '../remote/hostPool';
import '../remote/hosts';
import { RUN_DEFAULTS } from './runSettings';

export interface EvaluateOnceRequest {
  config: KernelEvolveConfig;
  /** Host names from the config; none: every host. */
  hosts?: string[];
  hostOptions?: HostOptions;
  job: Omit<EvaluationJob, 'timeoutS'> & { timeoutS?: number };
  signal?: AbortSignal;
  /** Told when a host takes the job (for a progress line). */
  onStart?: (host: string) => void;
  /** Hosts' news and failures. */
  onLog?: (level: 'info' | 'warn' | 'error', message: string) => void;
}

export async function evaluateOnce(req: EvaluateOnceRequest): Promise<PoolVerdict> {
  const hosts = createHosts(req.config, req.hosts ?? [], req.hostOptions);
  if (!hosts.length) throw new ConfigError(NO_HOSTS);
  // No run waits on this job: once every host has failed it, say so instead of retrying for minutes.
  const pool = new HostPool(hosts, { giveUpAfterMs: 0, onHostFailure: (host, e) => req.onLog?.('warn', `host ${host} failed (${e.message})`) });
  for (const h of hosts) if (req.onLog) h.onLog?.(req.onLog);
  try {
    return await pool.evaluate({ timeoutS: RUN_DEFAULTS.jobTimeoutS, ...req.job }, { signal: req.signal, onStart: req.onStart });
  } finally {
    await pool.dispose();
  }
}
