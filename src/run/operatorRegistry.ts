// The operators a run can use, by name: what the CLI's --operators and the editor's kernelEvolve.operators
// list. Adding an operator is one entry here.
import { ConfigError, type LlmConfig } from '../contract/config';
import type { EngineEvent } from '../engine/events';
import type { Operator } from '../engine/operator';
import type { KernelSpec } from '../engine/spec';
import { TuneOperator } from '../engine/tuneOperator';
import type { RunSettings } from './runSettings';

/** Everything an operator factory may need. */
export interface OperatorContext {
  spec: KernelSpec;
  settings: RunSettings;
  /** The config's sections operators read. */
  config: { llm?: LlmConfig; knowledge?: string[]; tuneStarts?: boolean; tunePastTrend?: boolean };
  /** An endpoint and key the front end holds (the editor's setting and secret storage); else the environment. */
  llmEndpoint?: { baseURL?: string; apiKey?: string };
  hardware?: string;
  /** Whose `.kernelevolve/runs/` holds the earlier runs (past wins). */
  workspaceDir: string;
  /** A resumed run's folder, left out of the past wins. */
  runDir?: string;
  /** Where an operator's own news (the llm operator's retries) goes: the run's listeners. */
  onEvent: (event: EngineEvent) => void;
}

type OperatorFactory = (ctx: OperatorContext) => Operator | Promise<Operator>;

const REGISTRY: Record<string, OperatorFactory> = {
  tune: (ctx) => new TuneOperator({ fileName: ctx.spec.sourcePath, seed: ctx.settings.seed, knowledgeFolders: ctx.config.knowledge,
    ...(ctx.config.tuneStarts === false ? { knowledgeDir: null } : {}), ...(ctx.config.tunePastTrend === false ? { pastTrend: false } : {}) }),
  // loaded only when asked for: the openai client is not needed for a tune-only run
  llm: async (ctx) => (await import('../engine/llm/llmOperator')).createLlmOperator({
    model: ctx.settings.model ?? ctx.config.llm?.model,
    llm: ctx.config.llm,
    knowledge: ctx.config.knowledge,
    baseURL: ctx.llmEndpoint?.baseURL,
    apiKey: ctx.llmEndpoint?.apiKey,
    workspaceDir: ctx.workspaceDir,
    runDir: ctx.runDir,
    onEvent: ctx.onEvent,
  }),
};

export const OPERATOR_NAMES: readonly string[] = Object.keys(REGISTRY);

/** The names that are not operators. */
export function unknownOperators(names: readonly string[]): string[] {
  return names.filter((n) => !Object.hasOwn(REGISTRY, n));
}

/** The run's operators, in the order named; throws ConfigError for a name that is not one. */
export async function createOperators(ctx: OperatorContext): Promise<Operator[]> {
  const unknown = unknownOperators(ctx.settings.operators);
  if (unknown.length) throw new ConfigError(`Unknown operator "${unknown[0]}"; use any of ${OPERATOR_NAMES.join(', ')}.`);
  const ops: Operator[] = [];
  for (const name of ctx.settings.operators) ops.push(await REGISTRY[name](ctx));
  return ops;
}
