// What a host says about itself: the machine it offers and what it found there when checked.

/** A host as a run records it (run.json) and the knowledge notes choose by (`hardware`). */
export interface HostSummary {
  name: string;
  slots: number;
  /** e.g. `nvidia-h100`, `nvidia-h200`, `cpu-x86`; picks the knowledge notes. */
  hardware?: string;
}

export interface HostCheck {
  host: string;
  reachable: boolean;
  /** Free-form facts for the table: python, compiler, gpu, torch, triton, ... */
  facts: Record<string, string>;
  error?: string;
}

/** What judged a job, as the harness's job runner names it (`check-host`'s `cpu` and `gpu` facts). */
export interface Machine {
  /** The CPU's model and the machine's cores: `AMD EPYC 7763 64-Core Processor (128 cores)`. */
  cpu?: string;
  /** The GPU's name (`NVIDIA H200`); absent on a machine without one. */
  gpu?: string;
}

/** The hardware a kernel of `backend` was judged on, by the machine's name: the CPU for a C++ kernel, the GPU
 *  (else the CPU) for the others; undefined when the machine was not named. */
export function machineHardware(machine: Machine | undefined, backend: string): string | undefined {
  return backend === 'cpp' ? machine?.cpu : machine?.gpu ?? machine?.cpu;
}
