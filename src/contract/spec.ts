// A kernel spec as every layer sees it once read (the contract in docs/harness.md): which backend, which source
// file, which function. The harness decides what a spec is (`describe-spec`); this is the shape of its answer.

/** The backends the harness judges (harness/kernelevolve_harness/spec.py BACKENDS; a test keeps them equal). */
export const BACKENDS = ['triton', 'cuda', 'cpp', 'model-cuda', 'model-cpu'] as const;
/** `hip` and `custom` are named by the design for later; no harness judges them yet. */
export type Backend = (typeof BACKENDS)[number] | 'hip' | 'custom';

export interface KernelSpec {
  /** Absolute path of the spec file. */
  specPath: string;
  backend: Backend;
  /** Absolute path of the kernel's source file (SOURCE resolved against the spec's folder). */
  sourcePath: string;
  /** The function being evolved. */
  kernel: string;
}

/** The spec is wrong: the user's error; the message says what to fix. */
export class SpecError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'SpecError';
  }
}
