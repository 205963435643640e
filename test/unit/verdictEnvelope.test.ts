// The one reader of the harness's job runner answers (src/contract/verdictEnvelope.ts): what it accepts, and
// the sentence a host gets for anything else.
import { describe, expect, it } from 'vitest';
import { SpecError } from '../../src/contract/spec';
import { MalformedAnswerError, parseJobAnswer, parseVerdict } from '../../src/contract/verdictEnvelope';
import { verdictFromAnswer } from '../../src/remote/harnessJob';

const ok = { status: 'ok', reason: 'Correct on 2 shape(s).', speedup: 1.5,
  shapes: [{ shape: { n: 4 }, baseline_ms: 2, candidate_ms: 1, speedup: 2 }], timing: { lock: true, lock_held: [[1, 2]] } };
const envelope = (fields: Record<string, unknown>) => ({ envelope: 1, node: 'box', device: '0', lock: '/tmp/kernelevolve-locks/gpu-0.lock', elapsed_ms: 1234, ...fields });

describe('the job runner envelope', () => {
  it('reads a verdict with where it ran, from an object or the printed line', () => {
    const line = `some noise\n${JSON.stringify(envelope({ outcome: 'verdict', verdict: ok }))}\n`;
    for (const answer of [line, envelope({ outcome: 'verdict', verdict: ok })]) {
      expect(parseJobAnswer(answer)).toEqual({ outcome: 'verdict', verdict: ok, node: 'box', device: '0',
        lock: '/tmp/kernelevolve-locks/gpu-0.lock', elapsedMs: 1234 });
    }
  });

  it('reads the machine that judged it, as check-host names it, into the placement', () => {
    const machine = { cpu: 'AMD EPYC 7763 64-Core Processor (128 cores)', gpu: 'NVIDIA H200' };
    expect(verdictFromAnswer(envelope({ outcome: 'verdict', verdict: ok, machine }), 'gpu-box').placement?.machine).toEqual(machine);
    expect(verdictFromAnswer(envelope({ outcome: 'verdict', verdict: ok, machine: { cpu: 'AMD EPYC (2 cores)', gpu: 7 } }), 'h').placement?.machine)
      .toEqual({ cpu: 'AMD EPYC (2 cores)' });
    expect(verdictFromAnswer(envelope({ outcome: 'verdict', verdict: ok, machine: 'box' }), 'h').placement).not.toHaveProperty('machine');
  });

  it('gives a host the verdict with its placement, or the error it must raise', () => {
    const v = verdictFromAnswer(envelope({ outcome: 'verdict', verdict: ok }), 'gpu-box');
    expect(v).toMatchObject({ status: 'ok', host: 'gpu-box', harness_ms: 1234,
      placement: { host: 'gpu-box', device: '0', node: 'box', lock: '/tmp/kernelevolve-locks/gpu-0.lock' } });
    expect(() => verdictFromAnswer(envelope({ outcome: 'spec_error', message: 'spec.py: BACKEND is "hip"' }), 'h'))
      .toThrow(SpecError);
    expect(() => verdictFromAnswer(envelope({ outcome: 'harness_error', message: 'The harness was killed', log: 'tail' }), 'h'))
      .toThrow(/The harness was killed\ntail/);
    expect(() => verdictFromAnswer(envelope({ outcome: 'cancelled' }), 'h')).toThrow(/cancelled/);
    expect(() => verdictFromAnswer('Traceback (most recent call last):', 'h', {}, 'ModuleNotFoundError: numpy'))
      .toThrow(/The harness on h did not answer with a verdict.*Python 3.9\+ with numpy[\s\S]*ModuleNotFoundError/);
  });

  it.each([
    [{ status: 'great', reason: 'x' }, /status "great" is none of ok, static_rejected/],
    [{ status: 'ok' }, /no reason sentence/],
    [{ status: 'ok', reason: 'x', speedup: '2x' }, /"speedup" is string, not a number/],
    [{ status: 'ok', reason: 'x', shapes: {} }, /shapes is not a list/],
    [{ status: 'ok', reason: 'x', shapes: [{ shape: { n: 1 }, baseline_ms: 'fast' }] }, /shapes\[0\]: "baseline_ms" is not a number/],
    [{ status: 'ok', reason: 'x', log: 3 }, /log is not text/],
    [[], /not a JSON object/],
  ])('refuses a malformed verdict %j', (verdict, said) => {
    expect(() => parseVerdict(verdict)).toThrow(MalformedAnswerError);
    expect(() => parseVerdict(verdict)).toThrow(said);
  });

  it('refuses what is not an envelope', () => {
    expect(() => parseJobAnswer(ok)).toThrow(/not a job runner envelope/);
    expect(() => parseJobAnswer({ envelope: 1, outcome: 'maybe' })).toThrow(/outcome "maybe" is unknown/);
    expect(() => parseJobAnswer({ envelope: 1, outcome: 'spec_error' })).toThrow(/without a message/);
    expect(() => parseJobAnswer('')).toThrow(/printed no JSON envelope/);
  });

  it('keeps a verdict whose per-shape speedup the harness wrote as null (not finite)', () => {
    const v = { ...ok, shapes: [{ shape: { n: 1 }, baseline_ms: 1, candidate_ms: 0, speedup: null }] };
    expect(parseVerdict(v)).toBe(v);
  });
});
