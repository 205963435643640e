// A real VS Code for the end-to-end tests: code-server (installed once into a cache folder outside the repo)
// with the packaged VSIX installed, driven by headless Chromium through playwright-core.
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { chromium, type Browser, type Page } from 'playwright-core';
import { ensureCodeServer } from '../../scripts/e2e-install.mjs';
// @ts-expect-error plain .mjs helper shared with the command line
import { packageVsix } from '../../scripts/e2e-package.mjs';
import { alive, descendants } from '../support/sshd';

export const OUTPUT = path.resolve('.test-output', 'e2e');
const CHROMIUM = process.env.CHROMIUM || '/usr/bin/chromium';

let vsix: string | undefined;

/** Builds the VSIX once per test process. */
export function builtVsix(): string {
  if (!vsix) {
    mkdirSync(OUTPUT, { recursive: true });
    vsix = packageVsix(path.join(OUTPUT, 'kernelevolve-e2e.vsix')) as string;
  }
  return vsix;
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = createServer();
    srv.listen(0, '127.0.0.1', () => {
      const port = (srv.address() as { port: number }).port;
      srv.close(() => resolve(port));
    });
    srv.on('error', reject);
  });
}

/** A workspace with a copy of an example, outside the repo so runs and accepts never touch the repo. */
export function exampleWorkspace(example: string): string {
  const ws = mkdtempSync(path.join(tmpdir(), 'ke-e2e-ws-'));
  cpSync(path.resolve('examples', example), path.join(ws, path.basename(example)), {
    recursive: true, filter: (src) => !/[\\/](candidates|\.kernelevolve)([\\/]|$)/.test(src),
  });
  return ws;
}

export interface CodeServerOptions {
  workspace: string;
  settings?: Record<string, unknown>;
  env?: Record<string, string>;
}

export class CodeServer {
  private proc?: ChildProcess;
  private browser?: Browser;
  page!: Page;
  url = '';
  private readonly root = mkdtempSync(path.join(tmpdir(), 'ke-e2e-cs-'));
  private logText = '';

  constructor(private readonly opts: CodeServerOptions) {}

  get log(): string {
    return this.logText;
  }

  /** The code-server process (its extension host and the harness run under it). */
  get pid(): number {
    return this.proc?.pid ?? -1;
  }

  /** Where code-server keeps the User settings (User/settings.json) and its logs. */
  get userDataDir(): string {
    return path.join(this.root, 'user');
  }

  async start(): Promise<Page> {
    const cs = ensureCodeServer();
    const userData = path.join(this.root, 'user');
    const extensions = path.join(this.root, 'extensions');
    mkdirSync(path.join(userData, 'User'), { recursive: true });
    writeFileSync(path.join(userData, 'User', 'settings.json'), JSON.stringify({
      'workbench.startupEditor': 'none',
      'workbench.tips.enabled': false,
      'workbench.welcomePage.walkthroughs.openOnInstall': false,
      'security.workspace.trust.enabled': false,
      'extensions.ignoreRecommendations': true,
      'telemetry.telemetryLevel': 'off',
      'window.restoreWindows': 'none',
      'files.autoSave': 'off',
      'editor.codeLens': true,
      'workbench.colorTheme': 'Default Dark Modern',
      ...this.opts.settings,
    }, null, 2));
    const install = spawnSync(cs.node, [cs.codeServer, '--extensions-dir', extensions, '--user-data-dir', userData, '--install-extension', builtVsix()], { encoding: 'utf8' });
    if (install.status !== 0) throw new Error(`code-server could not install the VSIX:\n${install.stdout}\n${install.stderr}`);
    // code-server's and VS Code's own temporary files (the IPC and git sockets) go under this server's folder,
    // removed with it: a run of the end-to-end tests left a dozen sockets in /tmp
    const tmp = path.join(this.root, 'tmp');
    mkdirSync(tmp);
    const port = await freePort();
    this.proc = spawn(cs.node, [cs.codeServer, '--auth', 'none', '--bind-addr', `127.0.0.1:${port}`, '--disable-telemetry', '--disable-update-check',
      '--disable-workspace-trust', '--user-data-dir', userData, '--extensions-dir', extensions, this.opts.workspace], {
      env: { ...process.env, TMPDIR: tmp, ...this.opts.env }, stdio: ['ignore', 'pipe', 'pipe'],
    });
    this.proc.stdout!.on('data', (d) => { this.logText += d; });
    this.proc.stderr!.on('data', (d) => { this.logText += d; });
    this.url = `http://127.0.0.1:${port}/?folder=${encodeURIComponent(this.opts.workspace)}`;
    await this.waitForHttp(port);
    this.browser = await chromium.launch({
      executablePath: CHROMIUM,
      args: ['--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update', '--disable-sync', '--no-first-run', '--disable-dev-shm-usage'],
    });
    this.page = await this.browser.newPage({ viewport: { width: 1600, height: 1000 } });
    // A busy machine (several suites at once) can take long to serve the workbench's first load.
    await this.page.goto(this.url, { timeout: 180_000 });
    await this.page.locator('.monaco-workbench').waitFor({ timeout: 120_000 });
    return this.page;
  }

  private async waitForHttp(port: number): Promise<void> {
    const deadline = Date.now() + 120_000;
    while (Date.now() < deadline) {
      if (this.proc?.exitCode !== null && this.proc?.exitCode !== undefined) throw new Error(`code-server exited ${this.proc.exitCode}:\n${this.logText}`);
      try {
        const r = await fetch(`http://127.0.0.1:${port}/healthz`);
        if (r.ok) return;
      } catch {
        // not listening yet
      }
      await new Promise((r) => setTimeout(r, 300));
    }
    throw new Error(`code-server did not answer on port ${port} within 120 s:\n${this.logText}`);
  }

  /** The extension host's log lines of our extension (for failure messages). */
  extensionLog(): string {
    const logs = path.join(this.root, 'user', 'logs');
    if (!existsSync(logs)) return '';
    const found = spawnSync('sh', ['-c', `find '${logs}' -name '*KernelEvolve*' -o -name 'exthost*.log' | head -5 | xargs -r tail -n 80`], { encoding: 'utf8' });
    return found.stdout;
  }

  async stop(): Promise<void> {
    await this.browser?.close().catch(() => undefined);
    // code-server's children (the extension host, TypeScript's server) outlive it for a moment and still write
    // into its temporary folder: they are waited for (and killed after 5 s) before the folder is removed
    const tree = this.proc?.pid ? [this.proc.pid, ...descendants(this.proc.pid)] : [];
    if (this.proc && this.proc.exitCode === null) {
      this.proc.kill('SIGTERM');
      await new Promise((r) => { this.proc!.once('exit', r); setTimeout(r, 5000); });
    }
    for (const end = Date.now() + 5000; tree.some(alive) && Date.now() < end;) await new Promise((r) => setTimeout(r, 100));
    for (const pid of tree.filter(alive)) {
      try {
        process.kill(pid, 'SIGKILL');
      } catch {
        // gone already
      }
    }
    if (process.env.KERNELEVOLVE_E2E_KEEP === '1') {
      console.log(`kept code-server data in ${this.root} and the workspace ${this.opts.workspace}`);
      return;
    }
    rmSync(this.root, { recursive: true, force: true });
    // Workspaces made by exampleWorkspace are temporary copies; the one a caller passes in stays.
    if (path.basename(this.opts.workspace).startsWith('ke-e2e-ws-')) rmSync(this.opts.workspace, { recursive: true, force: true });
  }
}

export function readJson<T>(file: string): T {
  return JSON.parse(readFileSync(file, 'utf8')) as T;
}
