// One chat completion at a time from any OpenAI-compatible endpoint (OpenAI, Azure-style gateways, vLLM,
// Ollama, llama.cpp), through the `openai` package. The retry loop is ours, not the package's: it also
// retries a stream that breaks after the headers came (the package cannot), it waits out `retry-after`
// while the user can still cancel, and it reports each retry so a run shows why it is slow.
import OpenAI, { APIError, APIUserAbortError } from 'openai';
import { ConcurrencyLimit } from './concurrencyLimit';

export interface ChatMessage {
  role: 'system' | 'user' | 'assistant';
  content: string;
}

export interface LlmClientOptions {
  model: string;
  /** Endpoint; undefined lets the openai client read OPENAI_BASE_URL (else api.openai.com). */
  baseURL?: string;
  /** Key; undefined lets the openai client read OPENAI_API_KEY. Local servers accept any key. */
  apiKey?: string;
  /** Stream the answer (server-sent events). Default true. */
  stream?: boolean;
  /** Upper bound for one attempt, headers and whole body, seconds. Default 180. */
  timeoutS?: number;
  /** Retries after the first attempt for 408/409/429/5xx, timeouts and broken connections. Default 4. */
  maxRetries?: number;
  /** Requests in flight at once. Default 4. */
  maxConcurrency?: number;
  temperature?: number;
  maxTokens?: number;
  /** First backoff delay, ms (doubled per retry, with jitter). Default 1000. */
  retryBaseMs?: number;
  /** Longest wait between attempts, ms, even when `retry-after` asks for more. Default 60000. */
  maxRetryDelayMs?: number;
  /** Told about every retry (for a log line). */
  onRetry?: (info: RetryInfo) => void;
  /** Told about other changes of course (a server that cannot stream). */
  onNotice?: (message: string) => void;
}

export interface RetryInfo {
  attempt: number;
  delayMs: number;
  reason: string;
}

export interface LlmAnswer {
  text: string;
  /** The model the server says answered (falls back to the one asked for). */
  model: string;
  promptTokens: number;
  completionTokens: number;
  /** True when the server reported no usage and the tokens were estimated from the text (4 chars a token). */
  usageEstimated: boolean;
  finishReason?: string;
  attempts: number;
}

export type LlmErrorKind = 'auth' | 'not-found' | 'bad-request' | 'exhausted' | 'aborted';

/** A request that failed for good; `message` says what happened and what to do. */
export class LlmError extends Error {
  constructor(message: string, readonly kind: LlmErrorKind, readonly status?: number) {
    super(message);
    this.name = 'LlmError';
  }
  /** The endpoint or key is wrong: retrying other prompts will not help. */
  get isConfiguration(): boolean {
    return this.kind === 'auth' || this.kind === 'not-found';
  }
}

/** One attempt failed in a way that another attempt may not. */
class RetryableError extends Error {
  constructor(message: string, readonly retryAfterMs?: number) {
    super(message);
  }
}

const RETRYABLE_STATUS = (s: number) => s === 408 || s === 409 || s === 429 || s >= 500;

export class LlmClient {
  readonly model: string;
  private readonly client: OpenAI;
  private readonly limit: ConcurrencyLimit;
  private readonly opts: Required<Pick<LlmClientOptions, 'stream' | 'timeoutS' | 'maxRetries' | 'retryBaseMs' | 'maxRetryDelayMs'>>;
  /** Starts as `stream`; turned off for good when the server answers a streamed request with no events. */
  private streaming: boolean;

  constructor(private readonly options: LlmClientOptions) {
    if (!options.model) {
      throw new LlmError('No LLM model is set: pass --model NAME or set "llm": {"model": "NAME"} in the config.', 'bad-request');
    }
    this.model = options.model;
    this.client = new OpenAI({
      baseURL: options.baseURL,
      // A local server needs no key, but the openai client refuses to start without one.
      apiKey: options.apiKey ?? process.env.OPENAI_API_KEY ?? 'no-key-set',
      maxRetries: 0,
      timeout: Math.round((options.timeoutS ?? 180) * 1000),
    });
    this.limit = new ConcurrencyLimit(options.maxConcurrency ?? 4);
    this.opts = {
      stream: options.stream ?? true,
      timeoutS: options.timeoutS ?? 180,
      maxRetries: options.maxRetries ?? 4,
      retryBaseMs: options.retryBaseMs ?? 1000,
      maxRetryDelayMs: options.maxRetryDelayMs ?? 60_000,
    };
    this.streaming = this.opts.stream;
  }

  get baseURL(): string {
    return this.client.baseURL;
  }

  get inFlight(): number {
    return this.limit.inFlight;
  }

  async complete(messages: ChatMessage[], signal?: AbortSignal): Promise<LlmAnswer> {
    let lastReason = '';
    for (let attempt = 1; ; attempt++) {
      if (signal?.aborted) throw aborted();
      try {
        const answer = await this.limit.run(() => this.attempt(messages, signal), signal);
        return { ...answer, attempts: attempt };
      } catch (e) {
        if (signal?.aborted) throw aborted();
        if (!(e instanceof RetryableError)) throw e;
        lastReason = e.message;
        if (attempt > this.opts.maxRetries) {
          throw new LlmError(
            `The LLM endpoint ${this.baseURL} failed ${attempt} times (last: ${lastReason}); ` +
              'check that the server is up and not overloaded, or raise llm.timeoutS in the config.',
            'exhausted',
          );
        }
        const delayMs = this.delayFor(attempt, e.retryAfterMs);
        this.options.onRetry?.({ attempt, delayMs, reason: lastReason });
        await sleep(delayMs, signal);
      }
    }
  }

  /** `retry-after` when the server gave one (capped), else exponential backoff with +-25% jitter. */
  private delayFor(attempt: number, retryAfterMs: number | undefined): number {
    if (retryAfterMs !== undefined) return Math.min(Math.max(0, retryAfterMs), this.opts.maxRetryDelayMs);
    const base = Math.min(this.opts.retryBaseMs * 2 ** (attempt - 1), this.opts.maxRetryDelayMs);
    return Math.round(base * (0.75 + Math.random() * 0.5));
  }

  private async attempt(messages: ChatMessage[], signal?: AbortSignal): Promise<Omit<LlmAnswer, 'attempts'>> {
    // One deadline for the whole attempt: the openai client's own timeout stops at the headers, and a
    // stream that stalls halfway must not hold a slot for ever.
    const controller = new AbortController();
    let timedOut = false;
    const timer = setTimeout(() => {
      timedOut = true;
      controller.abort();
    }, this.opts.timeoutS * 1000);
    const onAbort = () => controller.abort();
    signal?.addEventListener('abort', onAbort, { once: true });
    const body = {
      model: this.model,
      messages,
      ...(this.options.temperature === undefined ? {} : { temperature: this.options.temperature }),
      ...(this.options.maxTokens === undefined ? {} : { max_tokens: this.options.maxTokens }),
    };
    try {
      if (this.streaming) {
        const stream = await this.client.chat.completions.create(
          { ...body, stream: true, stream_options: { include_usage: true } },
          { signal: controller.signal },
        );
        let text = '';
        let finishReason: string | undefined;
        let model = this.model;
        let usage: OpenAI.CompletionUsage | undefined;
        let chunks = 0;
        // A connection cut mid-stream throws here (and is retried); a stream the server ends is the answer,
        // with or without a finish_reason (some servers send none).
        for await (const chunk of stream) {
          chunks++;
          if (chunk.model) model = chunk.model;
          if (chunk.usage) usage = chunk.usage;
          const choice = chunk.choices?.[0];
          if (choice?.delta?.content) text += choice.delta.content;
          if (choice?.finish_reason) finishReason = choice.finish_reason;
        }
        if (chunks > 0) return withUsage(text, model, finishReason, usage, messages);
        // Not one event: the server ignores `stream` and answers in one JSON body. Ask plainly from now on.
        this.streaming = false;
        this.options.onNotice?.(`The LLM endpoint ${this.baseURL} does not stream answers; asking without streaming from now on.`);
      }
      const res = await this.client.chat.completions.create({ ...body, stream: false }, { signal: controller.signal });
      const choice = res.choices?.[0];
      if (!choice) throw new RetryableError('the server answered with no choices');
      return withUsage(choice.message?.content ?? '', res.model || this.model, choice.finish_reason ?? undefined, res.usage, messages);
    } catch (e) {
      if (signal?.aborted) throw aborted();
      if (timedOut) throw new RetryableError(`no complete answer within ${this.opts.timeoutS} s`);
      throw classify(e, this.baseURL, this.model);
    } finally {
      clearTimeout(timer);
      signal?.removeEventListener('abort', onAbort);
    }
  }
}

function withUsage(text: string, model: string, finishReason: string | undefined, usage: OpenAI.CompletionUsage | undefined | null,
  messages: ChatMessage[]): Omit<LlmAnswer, 'attempts'> {
  if (usage && Number.isFinite(usage.prompt_tokens) && Number.isFinite(usage.completion_tokens)) {
    return { text, model, finishReason, promptTokens: usage.prompt_tokens, completionTokens: usage.completion_tokens, usageEstimated: false };
  }
  const promptChars = messages.reduce((n, m) => n + m.content.length, 0);
  return {
    text, model, finishReason, usageEstimated: true,
    promptTokens: Math.ceil(promptChars / 4), completionTokens: Math.ceil(text.length / 4),
  };
}

function classify(e: unknown, baseURL: string, model: string): Error {
  if (e instanceof RetryableError || e instanceof LlmError) return e;
  if (e instanceof APIUserAbortError) return aborted();
  if (e instanceof APIError && typeof e.status === 'number') {
    const status = e.status;
    if (RETRYABLE_STATUS(status)) return new RetryableError(`HTTP ${status}: ${shortMessage(e)}`, retryAfterMs(e.headers));
    if (status === 401 || status === 403) {
      return new LlmError(`The LLM endpoint ${baseURL} refused the API key (HTTP ${status}: ${shortMessage(e)}); set OPENAI_API_KEY to a valid key.`, 'auth', status);
    }
    if (status === 404) {
      return new LlmError(`The LLM endpoint ${baseURL} does not know model "${model}" or the chat completions path (HTTP 404: ${shortMessage(e)}); ` +
        'check --model and OPENAI_BASE_URL (it usually ends in /v1).', 'not-found', status);
    }
    return new LlmError(`The LLM endpoint rejected the request (HTTP ${status}: ${shortMessage(e)}).`, 'bad-request', status);
  }
  // Connection refused or reset, a body cut off mid-stream, a malformed event: worth another attempt.
  const err = e as Error & { cause?: { message?: string; code?: string } };
  const cause = err.cause?.code ?? err.cause?.message;
  return new RetryableError(`${err.message ?? String(e)}${cause ? ` (${cause})` : ''}`);
}

function shortMessage(e: APIError): string {
  return String(e.message).replace(/^\d{3}\s*/, '').slice(0, 300);
}

/** `retry-after-ms`, or `retry-after` as seconds or an HTTP date. */
export function retryAfterMs(headers: Headers | undefined): number | undefined {
  if (!headers) return undefined;
  const ms = headers.get('retry-after-ms');
  if (ms !== null && ms.trim() !== '' && Number.isFinite(Number(ms))) return Number(ms);
  const after = headers.get('retry-after');
  if (after === null || after.trim() === '') return undefined;
  if (Number.isFinite(Number(after))) return Number(after) * 1000;
  const date = Date.parse(after);
  return Number.isNaN(date) ? undefined : Math.max(0, date - Date.now());
}

function aborted(): LlmError {
  return new LlmError('The LLM request was cancelled.', 'aborted');
}

function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(aborted());
    const t = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    const onAbort = () => {
      clearTimeout(t);
      reject(aborted());
    };
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}
