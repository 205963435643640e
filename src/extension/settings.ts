// The extension's settings (kernelEvolve.*) as the engine's config: hosts validated with the same
// validateConfig as the CLI's --config file, so both report the same problems in the same words.
import * as vscode from 'vscode';
import { ConfigError } from '../contract/config';
import { validateConfig, type KernelEvolveConfig } from '../remote/hostConfig';
import { OPERATOR_NAMES } from '../run/operatorRegistry';
import type { InputsMode } from '../contract/job';

export interface EvolveSettings {
  config: KernelEvolveConfig;
  operators: string[];
  budget: number;
  timeMinutes?: number;
  plateau?: number;
  targetSpeedup?: number;
  model?: string;
  baseURL?: string;
  /** kernelEvolve.inputs: `problem` judges by the spec's inputs alone (no robustness pass). */
  inputs?: InputsMode;
}

/** Reads and checks the settings; throws ConfigError with every problem in one message. */
export function readSettings(scope?: vscode.Uri): EvolveSettings {
  const c = vscode.workspace.getConfiguration('kernelEvolve', scope);
  const hosts = c.get<unknown[]>('hosts');
  const model = c.get<string>('llm.model') || undefined;
  const baseURL = c.get<string>('llm.baseURL') || undefined;
  const config = validateConfig({ hosts: hosts && hosts.length ? hosts : undefined, llm: { model, baseURL } }, 'The setting kernelEvolve.hosts');
  const operators = (c.get<string[]>('operators') ?? ['tune']).filter(Boolean);
  const unknown = operators.filter((o) => !OPERATOR_NAMES.includes(o));
  if (!operators.length || unknown.length) {
    throw new ConfigError(`The setting kernelEvolve.operators lists ${unknown.length ? unknown.map((o) => `"${o}"`).join(', ') + ', which are' : 'no operator, which is'} not known; use any of ${OPERATOR_NAMES.join(', ')}.`);
  }
  const budget = c.get<number>('budget.candidates') ?? 40;
  if (!Number.isInteger(budget) || budget < 1) throw new ConfigError('The setting kernelEvolve.budget.candidates must be a positive whole number of candidates.');
  const timeMinutes = c.get<number>('budget.minutes') || undefined;
  const plateau = c.get<number>('budget.plateau') || undefined;
  const targetSpeedup = c.get<number>('budget.targetSpeedup') || undefined;
  const inputs = c.get<string>('inputs') || 'wide';
  if (inputs !== 'wide' && inputs !== 'problem') throw new ConfigError(`The setting kernelEvolve.inputs is "${inputs}"; use "wide" (the default) or "problem".`);
  return { config, operators, budget, timeMinutes, plateau, targetSpeedup, model, baseURL, inputs };
}

/** A settings problem as the message a user sees, with a button to open the settings. */
export async function reportSettingsError(e: unknown): Promise<void> {
  const message = e instanceof ConfigError ? e.message : `KernelEvolve settings could not be read: ${(e as Error).message}`;
  const open = await vscode.window.showErrorMessage(message.split('\n').join(' '), 'Open Settings');
  if (open) await vscode.commands.executeCommand('workbench.action.openSettings', 'kernelEvolve');
}
