// Exit codes that mean something to scripts calling `kernelevolve`.
export const EXIT = {
  /** Evaluate: the candidate is ok. Evolve: the run finished. */
  ok: 0,
  /** Evaluate: the candidate was judged, and is not ok. Evolve: no correct candidate beyond the baseline. */
  notOk: 1,
  /** Bad arguments, spec or config: nothing ran. */
  usage: 2,
  /** A host or the harness failed (unreachable, no Python): nothing was judged. */
  hostFailure: 3,
  /** Stopped by the user (Ctrl-C). */
  interrupted: 130,
} as const;

export class CliError extends Error {
  constructor(message: string, readonly exitCode: number = EXIT.usage) {
    super(message);
    this.name = 'CliError';
  }
}
