// A spec as the harness reads it (`python3 -m kernelevolve_harness describe-spec`), on this machine: where a run
// or an evaluation starts, and where a host needs the spec's source, the TS side asks the harness instead of
// parsing the spec itself, so a spec the harness refuses (an unknown BACKEND, no SHAPES) is refused up front
// with the harness's own sentence.
import { promises as fs } from 'node:fs';
import * as path from 'node:path';
import type { Backend, KernelSpec, Toolchain } from '../contract/spec';
import { BACKENDS, SpecError } from '../contract/spec';
import { harnessDir } from './harnessLocation';
import { runProcess } from './localHost';

export interface SpecDescription extends KernelSpec {
  /** The problem sizes when SHAPES is a literal; null when the spec computes them at import (on the host). */
  shapes: Record<string, unknown>[] | null;
  outputs: number[] | null;
  inplace: number[] | null;
  /** `{rtol, atol}`, and pairs per dtype (`{"float16": {rtol, atol}}`) where the spec gives them. */
  tolerance: Record<string, number | Record<string, number>> | null;
  /** Header names whose values are computed at import, checked where the spec is imported. */
  computed: string[];
  /** A custom-backend spec's TOOLCHAIN as the harness resolved it (paths absolute); undefined for the others. */
  toolchain?: Toolchain;
}

function toolchainOf(value: unknown): Toolchain | undefined {
  if (!value || typeof value !== 'object') return undefined;
  const t = value as Record<string, unknown>;
  const command = (c: unknown) => (Array.isArray(c) ? c.map(String) : undefined);
  return {
    compile: command(t.compile), run: command(t.run),
    knowledge: typeof t.knowledge === 'string' ? t.knowledge : null,
    hardware: typeof t.hardware === 'string' ? t.hardware : null,
  };
}

const described = new Map<string, { stamp: string; answer: Promise<SpecDescription> }>();

function localPython(): string {
  return process.env.KERNELEVOLVE_PYTHON ?? 'python3';
}

async function ask(specPath: string, python: string): Promise<SpecDescription> {
  const r = await runProcess(python, ['-m', 'kernelevolve_harness', 'describe-spec', '--spec', specPath], {
    env: { ...process.env, PYTHONPATH: [harnessDir(), process.env.PYTHONPATH].filter(Boolean).join(path.delimiter) },
    timeoutS: 60,
  }).catch((e: Error) => {
    throw new Error(`${e.message.replace(/ Install it or set the host's "python" setting\.$/, '')} KernelEvolve reads specs with the harness on this machine: install Python 3.9+ or set KERNELEVOLVE_PYTHON to one.`);
  });
  let facts: Record<string, unknown>;
  try {
    facts = JSON.parse(r.stdout.trim().split('\n').pop() ?? '') as Record<string, unknown>;
  } catch {
    throw new Error(`The harness could not read the spec ${specPath} (exit ${r.code ?? r.signal}): ${(r.stderr || r.stdout).trim().slice(-1500)}`);
  }
  if (facts.ok !== true) throw new SpecError(String(facts.error ?? `${path.basename(specPath)} is not a spec the harness can judge.`));
  const backend = String(facts.backend);
  if (!(BACKENDS as readonly string[]).includes(backend)) {
    throw new SpecError(`${path.basename(specPath)}: BACKEND is "${backend}", which the harness accepts but this KernelEvolve does not know; update KernelEvolve.`);
  }
  return {
    specPath: String(facts.spec),
    backend: backend as Backend,
    sourcePath: String(facts.source),
    kernel: String(facts.kernel),
    shapes: Array.isArray(facts.shapes) ? facts.shapes as Record<string, unknown>[] : null,
    outputs: Array.isArray(facts.outputs) ? facts.outputs as number[] : null,
    inplace: Array.isArray(facts.inplace) ? facts.inplace as number[] : null,
    tolerance: facts.tolerance && typeof facts.tolerance === 'object' ? facts.tolerance as Record<string, number | Record<string, number>> : null,
    computed: Array.isArray(facts.computed) ? facts.computed.map(String) : [],
    ...(facts.judged_tolerance && typeof facts.judged_tolerance === 'object'
      ? { judgedTolerance: facts.judged_tolerance as Record<string, { rtol: number; atol: number }> } : {}),
    ...(facts.toolchain ? { toolchain: toolchainOf(facts.toolchain) } : {}),
  };
}

/** The harness's reading of the spec; asked again only when the spec file changed (a run reads it per candidate). */
export async function describeSpec(specPath: string, python = localPython()): Promise<SpecDescription> {
  const abs = path.resolve(specPath);
  let stamp: string;
  try {
    const st = await fs.stat(abs);
    stamp = `${st.mtimeMs}:${st.size}:${python}`;
  } catch {
    throw new SpecError(`Cannot read the spec ${specPath}: check the path given to --spec.`);
  }
  const hit = described.get(abs);
  if (hit && hit.stamp === stamp) {
    const d = await hit.answer;
    try {
      await fs.access(d.sourcePath);
      return d;
    } catch {
      // SOURCE went away since: ask again, so the harness says so
    }
  }
  const answer = ask(abs, python);
  described.set(abs, { stamp, answer });
  answer.catch(() => described.delete(abs));
  return answer;
}

/** The four facts a run records of its spec. */
export function kernelSpecOf(d: SpecDescription): KernelSpec {
  return { specPath: d.specPath, backend: d.backend, sourcePath: d.sourcePath, kernel: d.kernel,
    ...(d.judgedTolerance ? { judgedTolerance: d.judgedTolerance } : {}) };
}
