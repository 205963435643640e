// Runs the real `kernelevolve` CLI from the current sources: bundled once per test file with the same
// esbuild options as scripts/build.mjs, then started as a child process, as a user would start it.
import { spawn } from 'node:child_process';
import * as path from 'node:path';
import { build } from 'esbuild';
import { tempFolder } from './tempFolders';

const root = path.resolve(__dirname, '..', '..');

export async function bundleCli(): Promise<string> {
  const dir = tempFolder('ke-cli-');
  const outfile = path.join(dir, 'cli.js');
  await build({
    entryPoints: [path.join(root, 'src/cli/main.ts')], outfile, bundle: true, platform: 'node', format: 'cjs',
    target: 'node20', logLevel: 'error', external: ['cpu-features', './crypto/build/Release/sshcrypto.node'],
  });
  return outfile;
}

export interface CliResult {
  code: number | null;
  stdout: string;
  stderr: string;
}

export function runCli(cli: string, args: string[], env: NodeJS.ProcessEnv = {}, timeoutMs = 240_000): Promise<CliResult> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, ['-e', `require(${JSON.stringify(cli)}).main(process.argv.slice(1)).then((c) => { process.exitCode = c; })`, ...args], {
      cwd: root,
      env: { ...process.env, KERNELEVOLVE_HARNESS_DIR: path.join(root, 'harness'), ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
  });
}
