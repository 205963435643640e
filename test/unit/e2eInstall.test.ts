// The end-to-end setup's installer (scripts/e2e-install.mjs), with the real npm and a package whose postinstall
// does what code-server's does: it reads the Node version npm announces in npm_config_user_agent and refuses
// another major than the one it runs on. Run under an outer npm's environment (as `npm test` runs it), the
// inner install used to inherit "node/v20" from the outer npm and fail; and a failed install left a half-made
// folder behind that broke the next try.
import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, rmSync, writeFileSync, mkdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { cleanNpmEnv, installAtomically, npmInstall } from '../../scripts/e2e-install.mjs';

const dirs: string[] = [];
function tempDir(): string {
  const d = mkdtempSync(path.join(tmpdir(), 'ke-e2e-install-'));
  dirs.push(d);
  return d;
}
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

/** A package tarball whose postinstall runs `check` (a Node script). */
function packageTarball(name: string, check: string): string {
  const src = tempDir();
  writeFileSync(path.join(src, 'package.json'), JSON.stringify({ name, version: '1.0.0', scripts: { postinstall: 'node check.js' } }));
  writeFileSync(path.join(src, 'check.js'), check);
  const out = tempDir();
  execFileSync('npm', ['pack', '--pack-destination', out, '--loglevel=error'], { cwd: src, env: cleanNpmEnv() });
  return path.join(out, `${name}-1.0.0.tgz`);
}

const SAME_NODE_AS_ANNOUNCED = `
const ua = process.env.npm_config_user_agent || '';
const announced = /node\\/v(\\d+)/.exec(ua)?.[1];
const running = process.versions.node.split('.')[0];
if (announced !== running) {
  console.error('ERROR: this package requires node v' + running + '. We have detected that you are on node v' + announced);
  process.exit(1);
}
`;

// What the npm running `npm test` exports to its scripts, when it runs on another Node than the inner install.
const OUTER_NPM_ENV = {
  ...process.env,
  npm_config_user_agent: 'npm/10.9.0 node/v18.20.4 linux x64 workspaces/false',
  npm_lifecycle_event: 'test',
  npm_lifecycle_script: 'node scripts/test.mjs',
  npm_package_name: 'kernelevolve',
  npm_config_prefix: '/nonexistent-outer-prefix',
  npm_command: 'test',
  INIT_CWD: process.cwd(),
};

describe('the end-to-end installer', () => {
  it('installs a package that checks the Node version npm announces, from inside an outer npm run', () => {
    const tgz = packageTarball('ua-check', SAME_NODE_AS_ANNOUNCED);
    const dir = tempDir();
    npmInstall(dir, [tgz], { env: OUTER_NPM_ENV });
    expect(existsSync(path.join(dir, 'node_modules', 'ua-check', 'check.js'))).toBe(true);
  });

  it('the outer environment itself would have failed that install (the check is real)', () => {
    const tgz = packageTarball('ua-check', SAME_NODE_AS_ANNOUNCED);
    const dir = tempDir();
    writeFileSync(path.join(dir, 'package.json'), '{"private":true}\n');
    expect(() => execFileSync('npm', ['install', '--no-audit', '--no-fund', '--loglevel=error', tgz],
      { cwd: dir, env: OUTER_NPM_ENV, stdio: 'pipe' })).toThrow(/requires node v\d+\. We have detected that you are on node v18/);
  });

  it('a failed install leaves nothing behind, shows npm\'s first error, and the next try starts clean', () => {
    const bad = packageTarball('fails-postinstall', 'console.error("postinstall broke: no headers"); process.exit(3);');
    const good = packageTarball('ua-check', SAME_NODE_AS_ANNOUNCED);
    const cache = tempDir();
    const target = path.join(cache, 'tool-1.0');
    expect(() => installAtomically(target, (staging) => {
      npmInstall(staging, [good], { env: OUTER_NPM_ENV });
      npmInstall(staging, [bad], { env: OUTER_NPM_ENV });
    })).toThrow(/postinstall broke: no headers/);
    expect(existsSync(target)).toBe(false);
    expect(readdirSync(cache)).toEqual([]);

    // a try killed halfway leaves its staging folder; the next one removes it and completes
    mkdirSync(path.join(cache, '.tool-1.0.partial-99999', 'node_modules'), { recursive: true });
    installAtomically(target, (staging) => npmInstall(staging, [good], { env: OUTER_NPM_ENV }));
    expect(readdirSync(cache)).toEqual(['tool-1.0']);
    expect(existsSync(path.join(target, 'node_modules', 'ua-check', 'check.js'))).toBe(true);
  });

  it('keeps the caller\'s PATH and HOME but none of the outer npm\'s variables', () => {
    const env = cleanNpmEnv(OUTER_NPM_ENV);
    expect(Object.keys(env).filter((k) => /^npm_/i.test(k) || k === 'INIT_CWD')).toEqual([]);
    expect(env.PATH).toBe(process.env.PATH);
    expect(env.HOME).toBe(process.env.HOME);
  });
});
