// An OpenAI-compatible chat completions server on 127.0.0.1 that plays a script, one step per request:
// answers (plain JSON or streamed as server-sent events), error statuses with retry-after, delays that make
// the client time out, and connections dropped mid-stream. It records every request so tests can read
// the prompts the real `openai` client sent.
import * as http from 'node:http';
import type { AddressInfo } from 'node:net';

export interface RecordedRequest {
  method: string;
  path: string;
  headers: http.IncomingHttpHeaders;
  /** The parsed JSON body (undefined when it was not JSON). */
  body: any;
  stream: boolean;
  /** The step that answered it. */
  step: ScriptStep;
  at: number;
}

export type ScriptStep =
  /** A complete answer; `delayMs` waits before the headers (a slow server, or one that makes the client time out). */
  | { kind: 'answer'; content: string; delayMs?: number; promptTokens?: number; completionTokens?: number; finishReason?: string;
      /** Leave the usage out, as some servers do. */ noUsage?: boolean;
      /** Streamed: send no finish_reason and no [DONE], just end the response (some servers do). */ bareEnd?: boolean;
      /** Answer a streamed request with one JSON body, as servers that cannot stream do. */ ignoreStream?: boolean }
  /** An error status with an OpenAI-style error body. */
  | { kind: 'status'; status: number; message?: string; retryAfter?: string; retryAfterMs?: number }
  /** Streamed: send the first `afterChars` characters of `content`, then destroy the socket. Plain: destroy at once. */
  | { kind: 'drop'; content?: string; afterChars?: number }
  /** Never answer (until the client gives up or the server closes). */
  | { kind: 'hang' };

export type Script = Array<ScriptStep | ((req: RecordedRequest) => ScriptStep)>;

export interface ScriptedLlmServerOptions {
  /** What to play once the script is used up (default: a 500 that says the script ended). */
  fallback?: ScriptStep | ((req: RecordedRequest) => ScriptStep);
  /** Characters per streamed chunk (default 24). */
  chunkChars?: number;
  /** Model name reported back (default: the one asked for). */
  model?: string;
}

export class ScriptedLlmServer {
  readonly requests: RecordedRequest[] = [];
  private server?: http.Server;
  private readonly sockets = new Set<import('node:net').Socket>();
  private next = 0;
  private inFlight = 0;
  /** The most requests seen in flight at once. */
  maxInFlight = 0;

  constructor(private script: Script, private readonly options: ScriptedLlmServerOptions = {}) {}

  /** Replaces the steps still to play (the requests recorded so far stay). */
  setScript(script: Script): void {
    this.script = script;
    this.next = 0;
  }

  async start(): Promise<string> {
    this.server = http.createServer((req, res) => void this.handle(req, res));
    this.server.on('connection', (s) => {
      this.sockets.add(s);
      s.on('close', () => this.sockets.delete(s));
    });
    await new Promise<void>((resolve) => this.server!.listen(0, '127.0.0.1', resolve));
    return this.baseURL;
  }

  get baseURL(): string {
    const addr = this.server!.address() as AddressInfo;
    return `http://127.0.0.1:${addr.port}/v1`;
  }

  /** The chat requests' messages, one array per request. */
  get prompts(): Array<Array<{ role: string; content: string }>> {
    return this.requests.map((r) => r.body?.messages ?? []);
  }

  /** The user message of request i (all user messages joined). */
  userPrompt(i: number): string {
    return (this.requests[i]?.body?.messages ?? []).filter((m: any) => m.role === 'user').map((m: any) => m.content).join('\n');
  }

  async stop(): Promise<void> {
    for (const s of this.sockets) s.destroy();
    await new Promise<void>((resolve) => (this.server ? this.server.close(() => resolve()) : resolve()));
  }

  private async handle(req: http.IncomingMessage, res: http.ServerResponse): Promise<void> {
    const chunks: Buffer[] = [];
    for await (const c of req) chunks.push(c as Buffer);
    let body: any;
    try {
      body = JSON.parse(Buffer.concat(chunks).toString('utf8'));
    } catch {
      body = undefined;
    }
    if (!req.url?.endsWith('/chat/completions') || req.method !== 'POST') {
      res.writeHead(404, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ error: { message: `no route ${req.method} ${req.url}`, type: 'invalid_request_error' } }));
      return;
    }
    const record: RecordedRequest = {
      method: req.method, path: req.url, headers: req.headers, body, stream: body?.stream === true,
      step: { kind: 'hang' }, at: Date.now(),
    };
    const entry = this.next < this.script.length ? this.script[this.next++] : this.options.fallback;
    const step: ScriptStep = entry === undefined
      ? { kind: 'status', status: 500, message: 'the scripted server has no more steps' }
      : typeof entry === 'function' ? entry(record) : entry;
    record.step = step;
    this.requests.push(record);
    this.inFlight += 1;
    this.maxInFlight = Math.max(this.maxInFlight, this.inFlight);
    res.on('close', () => (this.inFlight -= 1));
    await this.play(step, record, req, res);
  }

  private async play(step: ScriptStep, record: RecordedRequest, req: http.IncomingMessage, res: http.ServerResponse): Promise<void> {
    const model = this.options.model ?? record.body?.model ?? 'scripted';
    switch (step.kind) {
      case 'hang':
        return;
      case 'status': {
        const headers: Record<string, string> = { 'content-type': 'application/json' };
        if (step.retryAfter !== undefined) headers['retry-after'] = step.retryAfter;
        if (step.retryAfterMs !== undefined) headers['retry-after-ms'] = String(step.retryAfterMs);
        res.writeHead(step.status, headers);
        res.end(JSON.stringify({ error: { message: step.message ?? `scripted status ${step.status}`, type: 'scripted', code: null } }));
        return;
      }
      case 'drop': {
        if (!record.stream) {
          req.socket.destroy();
          return;
        }
        res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
        const part = (step.content ?? '').slice(0, step.afterChars ?? Math.floor((step.content ?? '').length / 2));
        for (const piece of this.pieces(part)) res.write(sse(chunk(model, { content: piece }, null)));
        await new Promise((r) => setTimeout(r, 20));
        req.socket.destroy();
        return;
      }
      case 'answer': {
        if (step.delayMs) {
          const closed = await waitOrClose(step.delayMs, res);
          if (closed) return;
        }
        const promptTokens = step.promptTokens ?? Math.ceil(JSON.stringify(record.body?.messages ?? []).length / 4);
        const completionTokens = step.completionTokens ?? Math.ceil(step.content.length / 4);
        const usage = { prompt_tokens: promptTokens, completion_tokens: completionTokens, total_tokens: promptTokens + completionTokens };
        const finish = step.finishReason ?? 'stop';
        if (!record.stream || step.ignoreStream) {
          res.writeHead(200, { 'content-type': 'application/json' });
          res.end(JSON.stringify({
            id: `chatcmpl-${this.requests.length}`, object: 'chat.completion', created: Math.floor(Date.now() / 1000), model,
            choices: [{ index: 0, message: { role: 'assistant', content: step.content }, finish_reason: finish, logprobs: null }],
            ...(step.noUsage ? {} : { usage }),
          }));
          return;
        }
        res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
        res.write(sse(chunk(model, { role: 'assistant', content: '' }, null)));
        for (const piece of this.pieces(step.content)) res.write(sse(chunk(model, { content: piece }, null)));
        if (step.bareEnd) {
          res.end();
          return;
        }
        res.write(sse(chunk(model, {}, finish)));
        if (record.body?.stream_options?.include_usage && !step.noUsage) {
          res.write(sse({ id: 'chatcmpl-u', object: 'chat.completion.chunk', created: 0, model, choices: [], usage }));
        }
        res.end('data: [DONE]\n\n');
        return;
      }
    }
  }

  private pieces(text: string): string[] {
    const n = this.options.chunkChars ?? 24;
    const out: string[] = [];
    for (let i = 0; i < text.length; i += n) out.push(text.slice(i, i + n));
    return out;
  }
}

function chunk(model: string, delta: Record<string, unknown>, finish: string | null) {
  return { id: 'chatcmpl-s', object: 'chat.completion.chunk', created: 0, model, choices: [{ index: 0, delta, finish_reason: finish, logprobs: null }] };
}

function sse(obj: unknown): string {
  return `data: ${JSON.stringify(obj)}\n\n`;
}

/** Resolves true if the client went away before the delay was over. */
function waitOrClose(ms: number, res: http.ServerResponse): Promise<boolean> {
  return new Promise((resolve) => {
    const t = setTimeout(() => resolve(false), ms);
    res.on('close', () => {
      clearTimeout(t);
      resolve(true);
    });
  });
}
