// What each backend needs of a host and whether a checked host has it: a Triton kernel needs a GPU, torch
// and triton; a CUDA kernel a GPU, nvcc and torch; a C++ kernel g++ and numpy. Check Hosts shows this per
// host instead of "reachable", which said "local ✓" on a machine that cannot run a Triton kernel.
import type { HostCheck } from '../contract/hardware';

export type ReadinessBackend = 'cpp' | 'triton' | 'cuda';

const NEEDS: Record<ReadinessBackend, { fact: string; missing: string }[]> = {
  cpp: [{ fact: 'g++', missing: 'g++ missing' }, { fact: 'numpy', missing: 'numpy missing' }],
  triton: [{ fact: 'gpu', missing: 'no GPU' }, { fact: 'torch', missing: 'torch missing' }, { fact: 'triton', missing: 'triton missing' }],
  cuda: [{ fact: 'gpu', missing: 'no GPU' }, { fact: 'nvcc', missing: 'nvcc missing' }, { fact: 'torch', missing: 'torch missing' }],
};

export interface BackendReadiness {
  backend: ReadinessBackend;
  ready: boolean;
  /** What is missing, in words (`no GPU`, `torch missing`). */
  missing: string[];
}

function has(facts: Record<string, string>, fact: string): boolean {
  const v = facts[fact];
  return !!v && v !== 'missing' && v !== 'none';
}

export function hostReadiness(check: HostCheck): BackendReadiness[] {
  return (Object.keys(NEEDS) as ReadinessBackend[]).map((backend) => {
    const missing = check.reachable ? NEEDS[backend].filter((n) => !has(check.facts, n.fact)).map((n) => n.missing) : ['unreachable'];
    return { backend, ready: missing.length === 0, missing };
  });
}

/** `local: cpp ✓ · triton ✗ (no GPU, torch missing, triton missing) · cuda ✗ (...)` */
export function describeReadiness(check: HostCheck): string {
  if (!check.reachable) return `${check.host}: unreachable${check.error ? ` (${check.error})` : ''}`;
  return `${check.host}: ${hostReadiness(check).map((r) => `${r.backend} ${r.ready ? '✓' : `✗ (${r.missing.join(', ')})`}`).join(' · ')}`;
}

/** Whether some checked host can run the backend. */
export function anyHostRuns(checks: readonly HostCheck[], backend: ReadinessBackend): boolean {
  return checks.some((c) => hostReadiness(c).find((r) => r.backend === backend)?.ready);
}
