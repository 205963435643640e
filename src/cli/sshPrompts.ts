// How the CLI answers what an SSH host asks: an unknown host key is trusted only with
// --accept-new-host-key, a key's passphrase comes from KERNELEVOLVE_SSH_PASSPHRASE or the terminal.
import type { HostOptions } from '../remote/hostConfig';

/** Reads a line from the terminal without echoing it. */
export function readSecret(prompt: string): Promise<string | undefined> {
  const stdin = process.stdin;
  if (!stdin.isTTY) return Promise.resolve(undefined);
  return new Promise((resolve) => {
    process.stderr.write(prompt);
    let value = '';
    stdin.setRawMode(true);
    stdin.resume();
    stdin.setEncoding('utf8');
    const done = (v: string | undefined) => {
      stdin.setRawMode(false);
      stdin.pause();
      stdin.removeListener('data', onData);
      process.stderr.write('\n');
      resolve(v);
    };
    const onData = (chunk: string) => {
      for (const ch of chunk) {
        if (ch === '\r' || ch === '\n') return done(value);
        if (ch === '\u0003' || ch === '\u0004') return done(undefined); // Ctrl-C / Ctrl-D: skip this key
        if (ch === '\u007f' || ch === '\b') value = value.slice(0, -1);
        else value += ch;
      }
    };
    stdin.on('data', onData);
  });
}

export function cliHostOptions(opts: { acceptNewHostKey?: boolean } = {}): HostOptions {
  const accept = opts.acceptNewHostKey || process.env.KERNELEVOLVE_ACCEPT_NEW_HOST_KEY === '1';
  return {
    onUnknownHostKey: async (host, fp) => {
      if (accept) process.stderr.write(`kernelevolve: trusting the new host key of "${host}" (${fp}) and recording it in known_hosts.\n`);
      return !!accept;
    },
    askPassphrase: async (keyFile) => {
      const fromEnv = process.env.KERNELEVOLVE_SSH_PASSPHRASE;
      if (fromEnv) return fromEnv; // empty counts as unset: a key with an empty passphrase is not encrypted
      return readSecret(`Passphrase for ${keyFile}: `);
    },
  };
}
