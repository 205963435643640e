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
