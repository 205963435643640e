// A kernel spec as every layer sees it once read (the contract in docs/harness.md): which backend, which source
// file, which function. The harness decides what a spec is (`describe-spec`); this is the shape of its answer.

/** The backends the harness judges (the modules of harness/kernelevolve_harness/backends/; a test keeps them equal). */
export const BACKENDS = ['triton', 'cuda', 'cpp', 'model-cuda', 'model-cpu', 'custom'] as const;
/** `hip` is named by the design for later; no harness judges it yet. */
export type Backend = (typeof BACKENDS)[number] | 'hip';

/**
 * An in-house accelerator's toolchain (the `custom` backend): the commands that build a kernel and run the
 * process that calls it, and the notes for that hardware. Named by the spec's TOOLCHAIN or a host's config.
 */
export interface Toolchain {
  /** Builds `{source}` into the shared library `{output}` that exports KERNEL. */
  compile?: string[];
  /** The device's runtime launcher: the worker process runs under it (it execs what follows). */
  run?: string[];
  /** A folder of notes (markdown, tune-*.json) for that hardware. */
  knowledge?: string | null;
  hardware?: string | null;
}

export interface KernelSpec {
  /** Absolute path of the spec file. */
  specPath: string;
  backend: Backend;
  /** Absolute path of the kernel's source file (SOURCE resolved against the spec's folder). */
  sourcePath: string;
  /** The function being evolved. */
  kernel: string;
  /** The (rtol, atol) the judge applies per float dtype, as the harness says (describe-spec); absent where the
   * spec computes its TOLERANCE at import. Prompts quote it: the one source of the rule is the judge. */
  judgedTolerance?: Record<string, { rtol: number; atol: number }>;
}

/** The spec is wrong: the user's error; the message says what to fix. */
export class SpecError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'SpecError';
  }
}
