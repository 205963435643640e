// The universal LLM operator: one operator whose prompt adapts to the parent the selection policy chose
// (repair, improve, draft, crossover), with retrieved knowledge and past wins. Whatever the model answers,
// the run goes on: an unusable answer, an endpoint that is down or slow, or a repeated candidate becomes an
// InvalidProposal that the engine counts and shows.
import { promises as fs } from 'node:fs';
import type { Candidate } from '../candidate';
import type { EngineEvent } from '../events';
import { KernelLocator } from '../kernelLocator';
import type { InvalidProposal, Operator, Proposal, ProposalBatch, ProposalContext } from '../operator';
import { languageOf, sourceHash } from '../sourceText';
import { fitness } from '../fitness';
import { ConfigError, type LlmConfig } from '../../contract/config';
import { parseAnswer } from './answerParser';
import { KnowledgeBase } from './knowledgeBase';
import { LlmClient, LlmError, type ChatMessage, type LlmClientOptions } from './llmClient';
import { loadPastWins, type PastWin } from './pastWins';
import { buildPrompt, chooseMode, type PromptMode } from './promptBuilder';
import { DEFAULT_PRICES, priceOf, UsageMeter, type ModelPrice, type TokenUsage } from './usage';

/** Answers from one parent that repeat code the run has, before this operator gives that parent up. */
const REPEATS_BEFORE_EXHAUSTED = 3;

export interface LlmOperatorOptions {
  /** `--model`; else `llm.model` of the config. */
  model?: string;
  /** The config's `llm` section (model, baseURL, maxConcurrency, timeoutS, ...). */
  llm?: LlmConfig;
  /** The config's `knowledge` folders (the user's own notes). */
  knowledge?: string[];
  /** Endpoint and key; by default OPENAI_BASE_URL (else llm.baseURL) and OPENAI_API_KEY. */
  baseURL?: string;
  apiKey?: string;
  stream?: boolean;
  timeoutS?: number;
  maxRetries?: number;
  maxConcurrency?: number;
  temperature?: number;
  maxTokens?: number;
  retryBaseMs?: number;
  /** The workspace whose `.kernelevolve/runs/` holds earlier runs (past wins). Default: the current directory. */
  workspaceDir?: string;
  /** This run's folder, left out of the past wins. */
  runDir?: string;
  /** Receives `log` lines (retries, endpoint trouble); usage goes back in each ProposalBatch. */
  onEvent?: (event: EngineEvent) => void;
  /** Every Nth refinement of a correct parent crosses it with another good candidate (default 4; 0: never). */
  crossoverEvery?: number;
  /** Prices per model (USD per million tokens), over the built-in table. */
  prices?: Record<string, ModelPrice>;
  /** A ready client (tests, or a front end that shares one). */
  client?: LlmClient;
  knowledgeBase?: KnowledgeBase;
  /** Called with every prompt before it is sent (the docs' prompt printer, debugging). */
  onPrompt?: (messages: ChatMessage[], mode: PromptMode) => void;
}

/** What this operator did in the run, for summaries. */
export interface LlmOperatorStats {
  calls: number;
  proposals: number;
  invalid: number;
  byMode: Record<PromptMode, number>;
  usage: TokenUsage & { calls: number };
}

export class LlmOperator implements Operator {
  readonly name = 'llm';
  /** The selection policy may hand this operator failed candidates: it can repair them. */
  readonly repairs = true;
  readonly client: LlmClient;
  private readonly kb: KnowledgeBase;
  private readonly meter: UsageMeter;
  private readonly prices: Record<string, ModelPrice>;
  private readonly specTexts = new Map<string, Promise<string>>();
  private pastWins?: Promise<PastWin[]>;
  private readonly recentInvalid: string[] = [];
  /** Set after the endpoint refused the key or the model: no more requests; every later proposal fails with it. */
  private disabledReason?: string;
  private refinements = 0;
  private readonly repeatsByParent = new Map<string, number>();
  /** Runs created after this are this run (its folder is made after the operators): not past wins. */
  private readonly createdAt = new Date();
  readonly stats: LlmOperatorStats = { calls: 0, proposals: 0, invalid: 0, byMode: { draft: 0, improve: 0, repair: 0, crossover: 0 },
    usage: { promptTokens: 0, completionTokens: 0, calls: 0 } };

  constructor(private readonly options: LlmOperatorOptions = {}) {
    this.client = options.client ?? new LlmClient(resolveClientOptions(options));
    this.prices = { ...DEFAULT_PRICES, ...options.llm?.prices, ...options.prices };
    this.meter = new UsageMeter(this.prices);
    this.kb = options.knowledgeBase ?? KnowledgeBase.load(options.knowledge ?? [], {
      onWarning: (message) => this.emit({ type: 'log', level: 'warn', message, at: Date.now() }),
    });
  }

  get usage(): TokenUsage & { calls: number } {
    return this.meter.totals();
  }

  async propose(ctx: ProposalContext, signal?: AbortSignal): Promise<ProposalBatch> {
    if (this.disabledReason) throw new LlmError(this.disabledReason, 'auth');
    await KernelLocator.get(); // the prompt and the answer parser find the kernel with tree-sitter
    const other = ctx.other ?? this.crossoverPartner(ctx);
    const mode = chooseMode(ctx.parent, other);
    const invalid = (reason: string, raw?: string): ProposalBatch => {
      this.stats.invalid += 1;
      this.recentInvalid.push(reason);
      if (this.recentInvalid.length > 5) this.recentInvalid.shift();
      const item: InvalidProposal = { operator: this.name, reason, ...(raw === undefined ? {} : { raw: raw.slice(0, 4000) }) };
      return { proposals: [], invalid: [item] };
    };
    const language = languageOf(ctx.spec.sourcePath);
    const messages = buildPrompt({
      mode,
      spec: ctx.spec,
      specText: await this.specText(ctx.spec.specPath),
      language,
      hardware: ctx.hardware,
      baselineSource: ctx.baselineSource,
      candidates: ctx.candidates,
      parent: ctx.parent,
      other: mode === 'crossover' ? other : undefined,
      notes: this.kb.select({
        hardware: ctx.hardware,
        backend: ctx.spec.backend,
        bottleneck: (ctx.parent ?? ctx.candidates[0])?.verdict?.profile?.bottleneck,
      }),
      pastWins: await this.loadPastWins(ctx),
      recentInvalid: this.recentInvalid,
      draftIndex: ctx.candidates.filter((c) => c.operator === this.name && c.mode === 'draft').length,
    });
    this.options.onPrompt?.(messages, mode);

    let answer;
    this.stats.calls += 1;
    this.stats.byMode[mode] += 1;
    try {
      answer = await this.client.complete(messages, signal);
    } catch (e) {
      if (e instanceof LlmError && e.kind === 'aborted') return { proposals: [] };
      const message = (e as Error).message;
      if (e instanceof LlmError && e.isConfiguration) {
        // A wrong key or model will not get better: fail now (the engine drops an operator that keeps
        // failing, with this message) and make no more requests.
        this.disabledReason = message;
        throw e;
      }
      this.emit({ type: 'log', level: 'warn', message: `LLM request failed: ${message}`, at: Date.now() });
      return invalid(`no answer from the LLM: ${message}`);
    }

    const usage = this.meter.add(pricedModel(answer.model, this.client.model, this.prices), answer.promptTokens, answer.completionTokens);
    this.stats.usage = this.meter.totals();

    const parentSource = mode === 'draft' ? ctx.baselineSource : ctx.parent!.source;
    const parsed = parseAnswer({ answer: answer.text, parentSource, kernel: ctx.spec.kernel, language, finishReason: answer.finishReason });
    const repeated = parsed.ok ? ctx.seen.has(sourceHash(parsed.source, language)) : /repeats the parent/.test(parsed.reason);
    if (repeated && ctx.parent) {
      // A model that keeps answering this parent with code the run has: let the policy pick another parent.
      const n = (this.repeatsByParent.get(ctx.parent.id) ?? 0) + 1;
      this.repeatsByParent.set(ctx.parent.id, n);
      if (n >= REPEATS_BEFORE_EXHAUSTED) {
        const reason = parsed.ok ? 'the answer repeats a candidate this run already has' : parsed.reason;
        return { ...invalid(`${reason} (${n} times from ${ctx.parent.id}; moving on from it)`, answer.text), usage, exhausted: true };
      }
    }
    if (!parsed.ok) return { ...invalid(parsed.reason, answer.text), usage };
    if (repeated) return { ...invalid('the answer repeats a candidate this run already has', answer.text), usage };
    const parents = mode === 'draft'
      ? (ctx.candidates[0] ? [ctx.candidates[0].id] : [])
      : [ctx.parent!.id, ...(mode === 'crossover' && other ? [other.id] : [])];
    const proposal: Proposal = { source: parsed.source, parents, operator: this.name, mode, rationale: parsed.rationale || undefined };
    this.stats.proposals += 1;
    return { proposals: [proposal], usage };
  }

  /**
   * The engine names one parent; now and then this operator picks a second one itself: the best correct
   * candidate outside the parent's own line of descent, so the two carry different ideas.
   */
  private crossoverPartner(ctx: ProposalContext): Candidate | undefined {
    const every = this.options.crossoverEvery ?? 4;
    const p = ctx.parent;
    if (!every || !p || fitness(p.verdict) <= 0) return undefined;
    this.refinements += 1;
    if (this.refinements % every !== 0) return undefined;
    const byId = new Map(ctx.candidates.map((c) => [c.id, c]));
    const lineOf = (c: Candidate): Set<string> => {
      const ids = new Set<string>();
      const stack = [c];
      while (stack.length) {
        const x = stack.pop()!;
        if (ids.has(x.id)) continue;
        ids.add(x.id);
        for (const id of x.parents) {
          const up = byId.get(id);
          if (up) stack.push(up);
        }
      }
      return ids;
    };
    const mine = lineOf(p);
    return ctx.candidates
      .filter((c) => c.operator !== 'baseline' && fitness(c.verdict) > 1 && !mine.has(c.id) && !lineOf(c).has(p.id))
      .sort((a, b) => fitness(b.verdict) - fitness(a.verdict))[0];
  }

  private emit(event: EngineEvent): void {
    this.options.onEvent?.(event);
  }

  private specText(specPath: string): Promise<string> {
    let t = this.specTexts.get(specPath);
    if (!t) {
      t = fs.readFile(specPath, 'utf8').catch(() => '');
      this.specTexts.set(specPath, t);
    }
    return t;
  }

  private loadPastWins(ctx: ProposalContext): Promise<PastWin[]> {
    this.pastWins ??= loadPastWins({
      workspaceDir: this.options.workspaceDir ?? process.cwd(),
      excludeRunDir: this.options.runDir,
      createdBefore: this.createdAt,
      spec: ctx.spec,
    }).catch(() => []);
    return this.pastWins;
  }
}

/** The server's model name when the price table knows it (a dated snapshot, say), else the name asked for. */
function pricedModel(answered: string, asked: string, prices: Record<string, ModelPrice>): string {
  return answered && priceOf(answered, prices) ? answered : asked;
}

/**
 * The CLI's precedence: --model over llm.model; OPENAI_BASE_URL (the openai client's own variable) over
 * llm.baseURL; OPENAI_API_KEY for the key.
 */
export function resolveClientOptions(o: LlmOperatorOptions): LlmClientOptions {
  const llm: LlmConfig = o.llm ?? {};
  const model = o.model ?? llm.model;
  if (!model) {
    throw new ConfigError('The llm operator needs a model: pass --model NAME (for example gpt-4o-mini, or the name your vLLM/Ollama server serves) or set "llm": {"model": "NAME"} in the config.');
  }
  return {
    model,
    baseURL: o.baseURL ?? (process.env.OPENAI_BASE_URL ? undefined : llm.baseURL),
    apiKey: o.apiKey,
    stream: o.stream ?? llm.stream,
    timeoutS: o.timeoutS ?? llm.timeoutS,
    maxRetries: o.maxRetries ?? llm.maxRetries,
    maxConcurrency: o.maxConcurrency ?? llm.maxConcurrency,
    temperature: o.temperature ?? llm.temperature,
    maxTokens: o.maxTokens ?? llm.maxTokens,
    retryBaseMs: o.retryBaseMs,
    onNotice: (message) => o.onEvent?.({ type: 'log', level: 'info', message, at: Date.now() }),
    onRetry: (r) => o.onEvent?.({
      type: 'log', level: 'warn', at: Date.now(),
      message: `LLM request attempt ${r.attempt} failed (${r.reason}); retrying in ${(r.delayMs / 1000).toFixed(1)} s`,
    }),
  };
}

/** What `kernelevolve evolve` hands every operator factory (src/cli/evolveCommand.ts). */
export interface OperatorFactoryContextLike {
  options: { model?: string };
  config: { llm?: LlmConfig; knowledge?: string[] };
  hardware?: string;
  /** Where the run's events go, when the front end passes it. */
  onEvent?: (event: EngineEvent) => void;
}

function isFactoryContext(x: unknown): x is OperatorFactoryContextLike {
  return typeof x === 'object' && x !== null && 'config' in x && 'options' in x;
}

/**
 * The hook the CLI and the editor use: `import('../engine/llm/llmOperator')`. Takes the operator's options,
 * or the CLI's operator factory context (--model, the config's llm and knowledge sections).
 */
export function createLlmOperator(options: LlmOperatorOptions | OperatorFactoryContextLike = {}): LlmOperator {
  if (!isFactoryContext(options)) return new LlmOperator(options);
  const ctx = options;
  return new LlmOperator({
    model: ctx.options.model ?? ctx.config.llm?.model,
    llm: ctx.config.llm,
    knowledge: ctx.config.knowledge,
    workspaceDir: process.cwd(),
    onEvent: ctx.onEvent ?? ((e) => {
      if (e.type === 'log') process.stderr.write(`kernelevolve: ${e.message}\n`);
    }),
  });
}
