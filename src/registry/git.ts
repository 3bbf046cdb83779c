/**
 * `git clone --depth 1` of a workflow repository, hardened for URLs that come from an API caller:
 * only `https://…` and `git@host:path` forms, nothing starting with `-` (argument injection), the
 * URL passed after `--`, local/ext transports and submodules off, no prompts. Unless private
 * addresses are allowed the host's DNS answers are checked first. A GitHub token travels in an
 * environment-provided config header scoped to https://github.com/, never in the URL or argv.
 */
import { lookup } from 'node:dns/promises';
import { isIP } from 'node:net';
import { isPrivateAddress } from '../util/outbound.js';
import { failureText, runProgram } from './exec.js';
import { envGithubToken } from './fetch.js';

export const GIT_TIMEOUT_MS = 5 * 60_000;

const SCP_FORM = /^git@([A-Za-z0-9.-]+):([A-Za-z0-9._~/-]+)$/;

/** The host of a git URL we accept, or an Error explaining why not. */
export function gitUrlHost(url: string): string {
  if (/[\s\u0000-\u001f\u007f]/.test(url)) throw new Error('git URL must not contain spaces or control characters');
  if (url.startsWith('-')) throw new Error('git URL must not start with "-"');
  const scp = SCP_FORM.exec(url);
  if (scp) {
    if (scp[2]!.startsWith('-') || scp[2]!.split('/').includes('..')) throw new Error('invalid git@ repository path');
    return scp[1]!;
  }
  if (!url.startsWith('https://')) throw new Error('git sources must start with https:// or git@');
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw new Error('invalid git URL');
  }
  return parsed.hostname.replace(/^\[|\]$/g, '');
}

/** Refuses a host that is, or resolves to, a loopback/link-local/private address. */
export async function checkPublicHost(host: string): Promise<void> {
  const addresses = isIP(host) ? [{ address: host }] : await lookup(host, { all: true }).catch((err: Error) => {
    throw new Error(`cannot resolve ${host}: ${err.message}`);
  });
  const bad = addresses.find((a) => isPrivateAddress(a.address));
  if (bad) throw new Error(`${host} (${bad.address}) is a loopback, link-local or private address; set server.allow_private_registry: true to allow it`);
}

/** Environment for git: no prompts, and a GitHub token (if any) as a header scoped to github.com. */
export function gitEnv(url: string, token = envGithubToken()): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...process.env, GIT_TERMINAL_PROMPT: '0', GIT_SSH_COMMAND: 'ssh -o BatchMode=yes -o StrictHostKeyChecking=accept-new' };
  let host = '';
  try {
    host = url.startsWith('https://') ? new URL(url).hostname.toLowerCase() : '';
  } catch {
    // not an https URL: no token
  }
  if (token && host === 'github.com') {
    const basic = Buffer.from(`x-access-token:${token}`).toString('base64');
    env.GIT_CONFIG_COUNT = '1';
    env.GIT_CONFIG_KEY_0 = 'http.https://github.com/.extraheader';
    env.GIT_CONFIG_VALUE_0 = `Authorization: Basic ${basic}`;
  }
  return env;
}

/** Clones `url` (depth 1) into the not-yet-existing folder `dest`. */
export async function gitClone(url: string, dest: string, opts: { allowPrivate: boolean; token?: string }): Promise<void> {
  const host = gitUrlHost(url);
  if (!opts.allowPrivate) await checkPublicHost(host);
  const args = ['-c', 'protocol.file.allow=never', '-c', 'protocol.ext.allow=never', 'clone', '--depth', '1', '--no-recurse-submodules', '--quiet', '--', url, dest];
  const env = gitEnv(url, opts.token ?? envGithubToken());
  const r = await runProgram('git', args, { timeoutMs: GIT_TIMEOUT_MS, env });
  if (r.code !== 0) {
    const token = opts.token ?? envGithubToken();
    const text = failureText(r, GIT_TIMEOUT_MS);
    throw new Error(`git clone failed (${token ? text.split(token).join('***') : text})`);
  }
}
