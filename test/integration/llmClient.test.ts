// The LLM client through the real `openai` package against the scripted server on loopback.
import { afterEach, describe, expect, it } from 'vitest';
import { LlmClient, LlmError, type RetryInfo } from '../../src/engine/llm/llmClient';
import { ScriptedLlmServer, type Script } from '../support/scriptedLlmServer';

const servers: ScriptedLlmServer[] = [];
afterEach(async () => {
  await Promise.all(servers.splice(0).map((s) => s.stop()));
});

async function serve(script: Script, fallback?: ConstructorParameters<typeof ScriptedLlmServer>[1]) {
  const s = new ScriptedLlmServer(script, fallback);
  servers.push(s);
  await s.start();
  return s;
}

const ask = [{ role: 'user' as const, content: 'say hello' }];

for (const stream of [false, true]) {
  describe(`LlmClient (${stream ? 'streamed' : 'plain'})`, () => {
    it('returns the text and the usage the server reported', async () => {
      const s = await serve([{ kind: 'answer', content: 'hello there, this is a longer answer than one chunk', promptTokens: 11, completionTokens: 7 }]);
      const c = new LlmClient({ model: 'gpt-4o-mini', baseURL: s.baseURL, apiKey: 'k', stream });
      const a = await c.complete(ask);
      expect(a.text).toBe('hello there, this is a longer answer than one chunk');
      expect(a).toMatchObject({ promptTokens: 11, completionTokens: 7, usageEstimated: false, attempts: 1, finishReason: 'stop' });
      expect(s.requests[0].stream).toBe(stream);
      expect(s.requests[0].body.model).toBe('gpt-4o-mini');
      expect(s.requests[0].headers.authorization).toBe('Bearer k');
    });

    it('estimates tokens when the server reports no usage', async () => {
      const s = await serve([{ kind: 'answer', content: 'x'.repeat(40), noUsage: true }]);
      const a = await new LlmClient({ model: 'm', baseURL: s.baseURL, apiKey: 'k', stream }).complete(ask);
      expect(a.usageEstimated).toBe(true);
      expect(a.completionTokens).toBe(10);
    });

    it('waits out retry-after on 429 and retries 500s with backoff', async () => {
      const s = await serve([
        { kind: 'status', status: 429, retryAfter: '0.3' },
        { kind: 'status', status: 500 },
        { kind: 'status', status: 503, retryAfterMs: 50 },
        { kind: 'answer', content: 'finally' },
      ]);
      const retries: RetryInfo[] = [];
      const c = new LlmClient({ model: 'm', baseURL: s.baseURL, apiKey: 'k', stream, retryBaseMs: 20, onRetry: (r) => retries.push(r) });
      const t0 = Date.now();
      const a = await c.complete(ask);
      expect(a.text).toBe('finally');
      expect(a.attempts).toBe(4);
      expect(retries.map((r) => r.delayMs)[0]).toBe(300);
      expect(retries[2].delayMs).toBe(50);
      expect(retries[0].reason).toMatch(/429/);
      expect(s.requests[1].at - s.requests[0].at).toBeGreaterThanOrEqual(290);
      expect(Date.now() - t0).toBeGreaterThanOrEqual(300);
    });

    it('times out a server that answers too late and retries', async () => {
      const s = await serve([{ kind: 'answer', content: 'late', delayMs: 3000 }, { kind: 'answer', content: 'on time' }]);
      const c = new LlmClient({ model: 'm', baseURL: s.baseURL, apiKey: 'k', stream, timeoutS: 0.4, retryBaseMs: 10 });
      const t0 = Date.now();
      const a = await c.complete(ask);
      expect(a.text).toBe('on time');
      expect(a.attempts).toBe(2);
      expect(Date.now() - t0).toBeLessThan(2500);
    });

    it('retries a dropped connection', async () => {
      const s = await serve([{ kind: 'drop', content: 'half of an answer that never ends', afterChars: 10 }, { kind: 'answer', content: 'whole' }]);
      const a = await new LlmClient({ model: 'm', baseURL: s.baseURL, apiKey: 'k', stream, retryBaseMs: 10 }).complete(ask);
      expect(a.text).toBe('whole');
      expect(a.attempts).toBe(2);
    });

    it('gives up after maxRetries with a message that says what to check', async () => {
      const s = await serve([], { fallback: { kind: 'status', status: 502 } });
      const c = new LlmClient({ model: 'm', baseURL: s.baseURL, apiKey: 'k', stream, maxRetries: 2, retryBaseMs: 5 });
      const err = await c.complete(ask).catch((e) => e);
      expect(err).toBeInstanceOf(LlmError);
      expect(err.kind).toBe('exhausted');
      expect(err.message).toMatch(/failed 3 times .*502/);
      expect(s.requests).toHaveLength(3);
    });

    it('does not retry a refused key and says to set OPENAI_API_KEY', async () => {
      const s = await serve([{ kind: 'status', status: 401, message: 'bad key' }]);
      const err = await new LlmClient({ model: 'm', baseURL: s.baseURL, apiKey: 'k', stream }).complete(ask).catch((e) => e);
      expect(err).toBeInstanceOf(LlmError);
      expect(err.isConfiguration).toBe(true);
      expect(err.message).toMatch(/OPENAI_API_KEY/);
      expect(s.requests).toHaveLength(1);
    });
  });
}

describe('LlmClient and servers that stream differently', () => {
  it('takes a stream the server ends without finish_reason or [DONE]', async () => {
    const s = await serve([{ kind: 'answer', content: 'complete answer, no finish', bareEnd: true }]);
    const a = await new LlmClient({ model: 'm', baseURL: s.baseURL, apiKey: 'k' }).complete(ask);
    expect(a.text).toBe('complete answer, no finish');
    expect(a.attempts).toBe(1);
  });

  it('falls back to plain requests for a server that answers a stream request with JSON', async () => {
    const s = await serve([{ kind: 'answer', content: 'json body', ignoreStream: true }, { kind: 'answer', content: 'second' }],
      { fallback: { kind: 'answer', content: 'scripted' } });
    const notices: string[] = [];
    const c = new LlmClient({ model: 'm', baseURL: s.baseURL, apiKey: 'k', onNotice: (m) => notices.push(m) });
    expect((await c.complete(ask)).text).toBe('second');
    expect(notices[0]).toMatch(/does not stream answers/);
    expect((await c.complete(ask)).text).toBe('scripted');
    expect(s.requests.map((r) => r.stream)).toEqual([true, false, false]);
  });
});

describe('LlmClient limits', () => {
  it('keeps at most maxConcurrency requests in flight', async () => {
    const s = await serve([], { fallback: { kind: 'answer', content: 'ok', delayMs: 150 } });
    const c = new LlmClient({ model: 'm', baseURL: s.baseURL, apiKey: 'k', maxConcurrency: 2 });
    const answers = await Promise.all(Array.from({ length: 6 }, () => c.complete(ask)));
    expect(answers.every((a) => a.text === 'ok')).toBe(true);
    expect(s.requests).toHaveLength(6);
    expect(s.maxInFlight).toBe(2);
  });

  it('cancels a request in flight and one waiting for backoff', async () => {
    const s = await serve([{ kind: 'hang' }]);
    const c = new LlmClient({ model: 'm', baseURL: s.baseURL, apiKey: 'k' });
    const ac = new AbortController();
    setTimeout(() => ac.abort(), 200);
    const t0 = Date.now();
    const err = await c.complete(ask, ac.signal).catch((e) => e);
    expect(err).toBeInstanceOf(LlmError);
    expect(err.kind).toBe('aborted');
    expect(Date.now() - t0).toBeLessThan(2000);

    s.setScript([{ kind: 'status', status: 429, retryAfter: '30' }]);
    const ac2 = new AbortController();
    setTimeout(() => ac2.abort(), 300);
    const t1 = Date.now();
    const err2 = await c.complete(ask, ac2.signal).catch((e) => e);
    expect(err2.kind).toBe('aborted');
    expect(Date.now() - t1).toBeLessThan(2000);
  });
});
