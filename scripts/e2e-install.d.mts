// Types of scripts/e2e-install.mjs for the tests that import it.
export const CODE_SERVER_VERSION: string;
export interface CodeServerPaths { cache: string; root: string; node: string; codeServer: string }
export function e2eCacheDir(): string;
export function codeServerPaths(cache?: string): CodeServerPaths;
export function cleanNpmEnv(env?: NodeJS.ProcessEnv): Record<string, string | undefined>;
export function npmInstall(dir: string, specs: string[],
  opts?: { node?: string; extraEnv?: Record<string, string>; env?: NodeJS.ProcessEnv }): void;
export function installAtomically(target: string, install: (staging: string) => void): void;
export function ensureCodeServer(): CodeServerPaths;
