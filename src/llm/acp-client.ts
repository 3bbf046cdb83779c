/**
 * An Agent Client Protocol client over stdio (the official `@agentclientprotocol/sdk`): start the
 * agent command in its own process group, initialize, open a session in `cwd`, send one prompt,
 * collect the agent's message text until the turn stops. The agent may read files only inside
 * `allowedPaths`, write them only when `writeEnabled`, and its permission requests are answered
 * "allow once" only when `writeEnabled` (otherwise rejected). No terminal capability is offered.
 */
import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, realpathSync, writeFileSync } from 'node:fs';
import { dirname, isAbsolute, resolve, sep } from 'node:path';
import { Readable, Writable } from 'node:stream';
import * as acp from '@agentclientprotocol/sdk';
import { killGroup } from '../engine/process-registry.js';

export interface AcpRunOptions {
  command: string;
  args: string[];
  /** The full environment of the agent process. */
  env: Record<string, string>;
  cwd: string;
  prompt: string;
  /** Folders the agent may read (and write, with writeEnabled); cwd is always one. */
  allowedPaths?: string[];
  writeEnabled?: boolean;
  timeoutMs?: number;
  signal?: AbortSignal;
  /** Each chunk of the agent's message text as it arrives. */
  onText?: (text: string) => void;
  /** Called with the agent's process group id after spawn. */
  onPid?: (pid: number) => void;
}

export interface AcpRunResult {
  output: string;
  stderr: string;
  stopReason: string;
}

/** The agent failed, timed out or was cancelled; `stderr` and the text so far are kept. */
export class AcpError extends Error {
  constructor(
    message: string,
    readonly output: string,
    readonly stderr: string,
  ) {
    super(message);
    this.name = 'AcpError';
  }
}

const STDERR_CAP = 64 * 1024;
const READ_CAP = 4 * 1024 * 1024;

function realish(p: string): string {
  let cur = p;
  const rest: string[] = [];
  while (!existsSync(cur) && dirname(cur) !== cur) {
    rest.unshift(cur.slice(dirname(cur).length).replace(/^[/\\]/, ''));
    cur = dirname(cur);
  }
  let real = cur;
  try {
    real = realpathSync(cur);
  } catch {
    /* keep */
  }
  return rest.length ? resolve(real, ...rest) : real;
}

/** Resolves an agent's file path and refuses it outside the roots (symlinks followed). */
function inside(path: string, roots: string[]): string {
  if (typeof path !== 'string' || !isAbsolute(path) || path.includes('\0')) throw acp.RequestError.invalidParams(undefined, 'path must be an absolute path');
  const real = realish(resolve(path));
  if (!roots.some((r) => real === r || real.startsWith(r.endsWith(sep) ? r : r + sep))) {
    throw acp.RequestError.invalidParams(undefined, `path '${path}' is outside the folders this agent may use`);
  }
  return real;
}

/** Runs one prompt through an ACP agent and returns its answer. */
export async function runAcpPrompt(o: AcpRunOptions): Promise<AcpRunResult> {
  const roots = [o.cwd, ...(o.allowedPaths ?? [])].map((p) => realish(resolve(p)));
  let stderr = '';
  let output = '';
  const child = spawn(o.command, o.args, { cwd: o.cwd, env: o.env, stdio: ['pipe', 'pipe', 'pipe'], detached: true });
  const spawned = new Promise<void>((res, rej) => {
    child.once('spawn', () => res());
    child.once('error', (err) => rej(err));
  });
  child.stderr.on('data', (d: Buffer) => {
    if (stderr.length < STDERR_CAP) stderr += d.toString('utf8').slice(0, STDERR_CAP - stderr.length);
  });
  const exited = new Promise<number | null>((res) => child.once('close', (code) => res(code)));
  try {
    await spawned;
  } catch (err) {
    throw new AcpError(`cannot start ACP agent '${o.command}': ${(err as Error).message}`, '', stderr);
  }
  if (child.pid) o.onPid?.(child.pid);

  const signals: AbortSignal[] = [];
  if (o.signal) signals.push(o.signal);
  if (o.timeoutMs) signals.push(AbortSignal.timeout(o.timeoutMs));
  const stop = signals.length ? AbortSignal.any(signals) : undefined;
  const kill = () => {
    if (child.pid && child.exitCode === null) killGroup(child.pid);
  };
  stop?.addEventListener('abort', kill, { once: true });

  const client = acp
    .client({ name: 'osm' })
    .onRequest(acp.methods.client.session.requestPermission, ({ params }) => {
      const wanted = o.writeEnabled ? ['allow_once', 'allow_always'] : ['reject_once', 'reject_always'];
      const option = params.options.find((opt) => wanted.includes(opt.kind));
      return { outcome: option ? { outcome: 'selected', optionId: option.optionId } : { outcome: 'cancelled' } };
    })
    .onRequest(acp.methods.client.fs.readTextFile, ({ params }) => {
      const file = inside(params.path, roots);
      const text = readFileSync(file, 'utf8').slice(0, READ_CAP);
      if (params.line == null && params.limit == null) return { content: text };
      const lines = text.split('\n');
      const from = Math.max(0, (params.line ?? 1) - 1);
      return { content: lines.slice(from, params.limit == null ? undefined : from + params.limit).join('\n') };
    })
    .onRequest(acp.methods.client.fs.writeTextFile, ({ params }) => {
      if (!o.writeEnabled) throw acp.RequestError.invalidRequest(undefined, 'writing files is not enabled for this agent (acp_config.write_enabled)');
      const file = inside(params.path, roots);
      mkdirSync(dirname(file), { recursive: true });
      writeFileSync(file, params.content);
      return {};
    });

  const stream = acp.ndJsonStream(Writable.toWeb(child.stdin) as WritableStream<Uint8Array>, Readable.toWeb(child.stdout) as ReadableStream<Uint8Array>);
  const aborted = new Promise<never>((_, rej) => {
    const fail = () => rej(new Error(o.signal?.aborted ? 'ACP agent was cancelled' : `ACP agent timed out after ${(o.timeoutMs ?? 0) / 1000}s`));
    if (stop?.aborted) fail();
    stop?.addEventListener('abort', fail, { once: true });
  });
  const died = exited.then((code) => {
    throw new Error(`ACP agent exited (code ${code ?? 'signal'}) before answering`);
  });
  aborted.catch(() => {});
  died.catch(() => {});
  try {
    const stopReason = await Promise.race([
      aborted,
      died,
      client.connectWith(stream, async (ctx) => {
        await ctx.request(acp.methods.agent.initialize, {
          protocolVersion: acp.PROTOCOL_VERSION,
          clientCapabilities: { fs: { readTextFile: true, writeTextFile: Boolean(o.writeEnabled) }, terminal: false },
          clientInfo: { name: 'osm', version: '1' },
        });
        return ctx.buildSession(o.cwd).withSession(async (session) => {
          const turn = session.prompt(o.prompt);
          // Updates arrive before the prompt's response, whose `stop` message ends the reading;
          // a rejected prompt ends it too.
          const failed = turn.then(() => new Promise<never>(() => {}));
          const reading = (async () => {
            for (;;) {
              const msg = await session.nextUpdate();
              if (msg.kind === 'stop') return msg.stopReason;
              const u = msg.update;
              if (u.sessionUpdate === 'agent_message_chunk' && u.content.type === 'text') {
                output += u.content.text;
                o.onText?.(u.content.text);
              }
            }
          })();
          return Promise.race([reading, failed]);
        });
      }),
    ]);
    return { output, stderr, stopReason: String(stopReason) };
  } catch (err) {
    let message = (err as Error).message;
    if (!stop?.aborted) {
      // A closed connection usually means the agent died: say how.
      const code = await Promise.race([exited, new Promise<undefined>((r) => setTimeout(() => r(undefined), 500).unref())]);
      if (code !== undefined) message = `ACP agent exited (code ${code ?? 'signal'}) before answering`;
    }
    throw new AcpError(message, output, stderr);
  } finally {
    stop?.removeEventListener('abort', kill);
    child.stdin.end();
    // An agent that stays after its answer is ended with its whole process group.
    const done = await Promise.race([exited.then(() => true), new Promise<boolean>((r) => setTimeout(() => r(false), 2000).unref())]);
    if (!done) kill();
  }
}
