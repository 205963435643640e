// A run that fails before judging any candidate must say why in one sentence and offer the fix; Check Hosts
// must say per backend what a host lacks (not "local ✓" on a machine that cannot run a Triton kernel).
import { describe, expect, it } from 'vitest';
import { describeReadiness, hostReadiness } from '../../src/extension/hostReadiness';
import { diagnoseRunFailure } from '../../src/extension/runFailure';

const NO_TORCH = "Importing bias_gelu_kernel_spec.py failed: ModuleNotFoundError: No module named 'torch'";

describe('diagnoseRunFailure', () => {
  it('asks for a GPU host when a Triton kernel meets a machine without torch', () => {
    const d = diagnoseRunFailure({ backend: 'triton', kind: 'baseline', message: NO_TORCH, localOnly: true, specName: 'bias_gelu_kernel_spec.py' });
    expect(d.sentence).toMatch(/^This Triton kernel needs a GPU host: torch is missing here \(Importing bias_gelu_kernel_spec\.py failed/);
    expect(d.fixes).toEqual(['addGpuHost', 'openHostSettings']);
  });

  it('asks for a GPU host when torch here has no CUDA (its CPU build)', () => {
    const message = "This spec's kernels need a GPU that torch can use, and there is none here (Torch not compiled with CUDA enabled): judge it on a GPU host (`kernelevolve hosts --check` says what each host has).";
    const d = diagnoseRunFailure({ backend: 'triton', kind: 'baseline', message, localOnly: true, specName: 's.py' });
    expect(d.sentence).toMatch(/^This Triton kernel needs a GPU host: no GPU here \(This spec's kernels need a GPU/);
    expect(d.fixes).toEqual(['addGpuHost', 'openHostSettings']);
  });

  it('points a C++ spec that does not import at the spec, not at GPU hosts', () => {
    const d = diagnoseRunFailure({ backend: 'cpp', kind: 'baseline', message: "Importing s.py failed: NameError: name 'np' is not defined", localOnly: true, specName: 's.py' });
    expect(d.sentence).toMatch(/^The spec s\.py does not load/);
    expect(d.fixes[0]).toBe('openSpec');
  });

  it('sends an unreachable host to Check Hosts', () => {
    const d = diagnoseRunFailure({ backend: 'cuda', kind: 'host', message: 'connect ECONNREFUSED 10.0.0.5:22', localOnly: false, specName: 's.py' });
    expect(d.fixes).toEqual(['checkHosts', 'openHostSettings']);
  });

  it('names a baseline that is wrong against its own spec', () => {
    const d = diagnoseRunFailure({ backend: 'cpp', kind: 'baseline', message: 'The baseline itself is incorrect: output 0 differs at [3].', localOnly: true, specName: 's.py' });
    expect(d.sentence).toMatch(/^The kernel as it stands fails its own spec/);
  });
});

describe('hostReadiness', () => {
  it('says what each backend lacks on a CPU-only machine', () => {
    const check = { host: 'local', reachable: true, facts: { python: '3.11', numpy: '2.1', 'g++': 'g++ 12', nvcc: 'missing', gpu: 'none', torch: 'missing', triton: 'missing' } };
    expect(hostReadiness(check).map((r) => [r.backend, r.ready])).toEqual([['cpp', true], ['triton', false], ['cuda', false]]);
    expect(describeReadiness(check)).toBe('local: cpp ✓ · triton ✗ (no GPU, torch missing, triton missing) · cuda ✗ (no GPU, nvcc missing, torch missing)');
  });

  it('says a host that did not answer is unreachable', () => {
    expect(describeReadiness({ host: 'h100', reachable: false, facts: {}, error: 'timed out' })).toBe('h100: unreachable (timed out)');
  });
});
