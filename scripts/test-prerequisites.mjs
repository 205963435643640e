// What `npm test` needs from the machine beyond npm: checked before any suite runs, so a fresh machine is told
// which Debian packages are missing and how to install them, instead of a suite failing halfway with a
// stack trace. `.ci/run` installs the same list (`node scripts/test-prerequisites.mjs --packages`).
import { spawnSync } from 'node:child_process';
import { accessSync, constants, existsSync } from 'node:fs';
import { delimiter, join } from 'node:path';
import { pathToFileURL } from 'node:url';

function onPath(name) {
  const dirs = [...(process.env.PATH ?? '').split(delimiter), '/usr/sbin', '/usr/bin'];
  return dirs.some((d) => {
    try {
      accessSync(join(d, name), constants.X_OK);
      return true;
    } catch {
      return false;
    }
  });
}

function imports(python, modules) {
  return spawnSync(python, ['-c', `import ${modules.join(', ')}`], { stdio: 'ignore' }).status === 0;
}

let chosen;
/** The Python the suites run: KERNELEVOLVE_PYTHON, else the first of python3 on PATH and Debian's that has numpy,
 * pytest and torch (Debian's python3-torch: pip's index is not reachable here, and the harness's tensor paths run
 * on torch for the CPU), else the first that has numpy and pytest. */
export function testPython() {
  if (process.env.KERNELEVOLVE_PYTHON) return process.env.KERNELEVOLVE_PYTHON;
  if (chosen) return chosen;
  const pythons = ['python3', ...(existsSync('/usr/bin/python3') ? ['/usr/bin/python3'] : [])];
  chosen = pythons.find((p) => imports(p, ['numpy', 'pytest', 'torch']))
    ?? pythons.find((p) => imports(p, ['numpy', 'pytest'])) ?? 'python3';
  return chosen;
}

const ALL = ['harness', 'unit', 'webview', 'integration', 'e2e'];

export const PREREQUISITES = [
  { what: 'g++ (the CPU kernels the tests compile)', suites: ['harness', 'unit', 'integration', 'e2e'], packages: ['g++'],
    present: () => onPath('g++') },
  { what: 'Python 3 with numpy and pytest (the harness)', suites: ['harness', 'unit', 'integration', 'e2e'], packages: ['python3-numpy', 'python3-pytest'],
    present: () => imports(testPython(), ['numpy', 'pytest']) },
  { what: 'torch for the CPU (the harness\'s tensor paths: outputs compared where they are, chunked comparison)', suites: ['harness'], packages: ['python3-torch'],
    present: () => imports(testPython(), ['torch']) },
  { what: 'an OpenSSH server and client (sshd on loopback)', suites: ['integration'], packages: ['openssh-server', 'openssh-client'],
    present: () => existsSync('/usr/sbin/sshd') && onPath('ssh-keygen') },
  { what: 'Slurm and munge (a one-node cluster on loopback)', suites: ['integration'], packages: ['slurm-wlm', 'munge'],
    present: () => ['/usr/sbin/munged', '/usr/sbin/slurmctld', '/usr/sbin/slurmd', '/usr/bin/sbatch'].every((p) => existsSync(p)) },
  { what: 'Chromium (drives the real VS Code)', suites: ['e2e'], packages: ['chromium'],
    present: () => existsSync(process.env.CHROMIUM || '/usr/bin/chromium') },
  { what: 'the Kerberos headers (code-server builds a module against them)', suites: ['e2e'], packages: ['libkrb5-dev'],
    present: () => existsSync('/usr/include/gssapi/gssapi.h') },
  // g++ alone does not bring make, and node-gyp builds code-server's native modules with it
  { what: 'make (node-gyp builds code-server\'s native modules with it)', suites: ['e2e'], packages: ['make'],
    present: () => onPath('make') },
];

/** The prerequisites of the given suites (all when none) that this machine lacks. */
export function missingPrerequisites(suites = ALL) {
  return PREREQUISITES.filter((p) => p.suites.some((s) => suites.includes(s)) && !p.present());
}

/** The one command that installs the packages: through sudo for an ordinary user (a fresh Debian container runs as root and has no sudo). */
export function aptGetInstall(packages) {
  return `${process.getuid?.() === 0 ? '' : 'sudo '}apt-get install -y ${packages.join(' ')}`;
}

/** What to tell the user: each missing part, and one command that installs them all. */
export function missingReport(missing) {
  const packages = [...new Set(missing.flatMap((p) => p.packages))];
  return [
    'npm test needs parts of the system this machine lacks:',
    ...missing.map((p) => `  - ${p.what} (${p.suites.join(', ')}): Debian package${p.packages.length > 1 ? 's' : ''} ${p.packages.join(' ')}`),
    `Install them with:  ${aptGetInstall(packages)}`,
    'or run .ci/run, which installs them and runs the tests; `npm test -- unit webview` runs only the suites this machine can.',
  ].join('\n');
}

if (import.meta.url === pathToFileURL(process.argv[1]).href) {
  if (process.argv[2] === '--packages') {
    // every package, for .ci/run to install what dpkg lacks
    console.log([...new Set(PREREQUISITES.flatMap((p) => p.packages))].join(' '));
  } else {
    const missing = missingPrerequisites(process.argv.slice(2).length ? process.argv.slice(2) : ALL);
    if (missing.length) {
      console.error(missingReport(missing));
      process.exit(1);
    }
    console.log('npm test finds every system part it needs.');
  }
}
