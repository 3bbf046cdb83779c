import type { RunnerConfig, RunnerType } from '../../workflow/types.js';
import { targetEnvironment } from '../../workflow/target.js';
import { StepFailure, type Scope } from '../types.js';
import { shellQuote } from '../safe-render.js';

const SAFE_HOST = /^[A-Za-z0-9._:\[\]-]+$/;
const SAFE_USER = /^[A-Za-z0-9._-]+$/;
const SAFE_IMAGE = /^[A-Za-z0-9][A-Za-z0-9._\/:@-]*$/;

/**
 * The argv that runs `line` through a docker or ssh runner (reference §1.9). Values that reach
 * argv positions (host, user, image, port) are checked so none can be read as an option.
 */
export function runnerArgv(type: RunnerType, cfg: RunnerConfig, line: string, scope?: Scope): string[] {
  if (type === 'docker') return dockerArgv(cfg, line, scope);
  if (type === 'ssh') return sshArgv(cfg, line);
  return ['/bin/sh', '-c', line];
}

function dockerArgv(cfg: RunnerConfig, line: string, scope?: Scope): string[] {
  const image = String(cfg.image ?? '').trim();
  if (!image) throw new StepFailure('docker runner requires runner_config.image');
  if (!SAFE_IMAGE.test(image)) throw new StepFailure(`invalid docker image name: ${JSON.stringify(image)}`);
  const argv = ['docker', 'run', '--rm'];
  const env: Record<string, string> = { ...(scope ? targetEnvironment(scope.vars, scope.userParamKeys) : {}), ...(cfg.env ?? {}) };
  for (const [k, v] of Object.entries(env)) {
    if (!/^[A-Za-z_][A-Za-z0-9_]*$/.test(k)) throw new StepFailure(`invalid environment variable name for docker: ${JSON.stringify(k)}`);
    argv.push('-e', `${k}=${v}`);
  }
  for (const vol of cfg.volumes ?? []) {
    if (String(vol).startsWith('-')) throw new StepFailure(`invalid docker volume: ${JSON.stringify(vol)}`);
    argv.push('-v', String(vol));
  }
  if (cfg.network) {
    if (String(cfg.network).startsWith('-')) throw new StepFailure(`invalid docker network: ${JSON.stringify(cfg.network)}`);
    argv.push('--network', String(cfg.network));
  }
  if (cfg.workdir) argv.push('-w', String(cfg.workdir));
  argv.push(image, 'sh', '-c', line);
  return argv;
}

function sshArgv(cfg: RunnerConfig, line: string): string[] {
  const host = String(cfg.host ?? '').trim();
  if (!host) throw new StepFailure('ssh runner requires runner_config.host');
  if (!SAFE_HOST.test(host) || host.startsWith('-')) throw new StepFailure(`invalid ssh host: ${JSON.stringify(host)}`);
  const user = cfg.user ? String(cfg.user).trim() : '';
  if (user && (!SAFE_USER.test(user) || user.startsWith('-'))) throw new StepFailure(`invalid ssh user: ${JSON.stringify(user)}`);
  const port = cfg.port === undefined || cfg.port === '' ? 22 : Number(cfg.port);
  if (!Number.isInteger(port) || port <= 0 || port > 65535) throw new StepFailure(`invalid ssh port: ${JSON.stringify(cfg.port)}`);
  if (cfg.password && !cfg.key_file) throw new StepFailure('ssh password authentication is not supported; use runner_config.key_file');
  const argv = ['ssh', '-o', 'BatchMode=yes', '-o', 'StrictHostKeyChecking=accept-new', '-p', String(port)];
  if (cfg.key_file) {
    if (String(cfg.key_file).startsWith('-')) throw new StepFailure(`invalid ssh key_file: ${JSON.stringify(cfg.key_file)}`);
    argv.push('-i', String(cfg.key_file));
  }
  argv.push(user ? `${user}@${host}` : host, '--');
  argv.push(cfg.workdir ? `cd ${shellQuote(String(cfg.workdir))} && ${line}` : line);
  return argv;
}

/** argv copying a file out of the runner after a remote-bash step (docker cp / scp). */
export function copyOutArgv(type: RunnerType, cfg: RunnerConfig, remote: string, local: string, container?: string): string[] | undefined {
  if (type === 'docker' && container) return ['docker', 'cp', `${container}:${remote}`, local];
  if (type === 'ssh') {
    const host = String(cfg.host ?? '');
    const user = cfg.user ? `${cfg.user}@` : '';
    const argv = ['scp', '-o', 'BatchMode=yes', '-P', String(cfg.port ?? 22)];
    if (cfg.key_file) argv.push('-i', String(cfg.key_file));
    argv.push('--', `${user}${host}:${remote}`, local);
    return argv;
  }
  return undefined;
}
