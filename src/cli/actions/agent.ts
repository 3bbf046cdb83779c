/** `osm agent`: one prompt to an ACP agent, its answer streamed to stdout (stderr of the agent kept for errors). */
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import type { Command } from 'commander';
import { errors } from '../../errors.js';
import { loadSettings } from '../../settings/load.js';
import { acpAgents, resolveAcpAgent, type AcpSettings } from '../../llm/acp-agents.js';
import { AcpError, runAcpPrompt } from '../../llm/acp-client.js';
import { parseDuration } from '../../util/duration.js';
import { optionsOf } from '../context.js';

interface AgentFlags {
  agent?: string;
  cwd?: string;
  stdin?: boolean;
  timeout?: string;
  write?: boolean;
  list?: boolean;
}

/** Runs `osm agent`. */
export async function agentAction(command: Command, words: string[]): Promise<void> {
  const o = optionsOf<AgentFlags>(command);
  const loaded = loadSettings({ baseFolder: o.baseFolder, settingsFile: o.settingsFile, workflowFolder: o.workflowFolder });
  const acp = (loaded.settings as { acp?: AcpSettings }).acp;
  if (o.list) {
    const all = acpAgents(acp);
    if (o.json) process.stdout.write(`${JSON.stringify({ default_agent: acp?.default_agent ?? 'claude-code', agents: all }, null, 2)}\n`);
    else for (const [name, a] of Object.entries(all)) process.stdout.write(`${name === (acp?.default_agent ?? 'claude-code') ? '*' : ' '} ${name.padEnd(14)} ${[a.command, ...a.args].join(' ')}\n`);
    return;
  }
  const prompt = o.stdin ? readFileSync(0, 'utf8') : words.join(' ');
  if (prompt.trim() === '') throw errors.badRequest("a message is required: osm agent '<message>' (or --stdin)");
  const found = resolveAcpAgent(acp, o.agent);
  if (!found) throw errors.validation(`unknown ACP agent '${o.agent}' (known: ${Object.keys(acpAgents(acp)).join(', ')}; add one under acp.agents in the settings)`);
  let timeoutMs: number | undefined;
  try {
    timeoutMs = parseDuration(o.timeout ?? '30m');
  } catch (err) {
    throw errors.validation(`--timeout: ${(err as Error).message}`);
  }
  const ac = new AbortController();
  const onSigint = () => ac.abort();
  process.once('SIGINT', onSigint);
  let streamed = false;
  try {
    const res = await runAcpPrompt({
      command: found.agent.command,
      args: found.agent.args,
      env: { ...(process.env as Record<string, string>), ...found.agent.env },
      cwd: resolve(o.cwd ?? process.cwd()),
      prompt,
      writeEnabled: Boolean(o.write),
      timeoutMs,
      signal: ac.signal,
      onText: o.json
        ? undefined
        : (t) => {
            streamed = true;
            process.stdout.write(t);
          },
    });
    if (o.json) process.stdout.write(`${JSON.stringify({ agent: found.name, output: res.output, stop_reason: res.stopReason })}\n`);
    else if (streamed && !res.output.endsWith('\n')) process.stdout.write('\n');
  } catch (err) {
    if (streamed) process.stdout.write('\n');
    if (err instanceof AcpError && err.stderr.trim()) process.stderr.write(`${err.stderr.trim().split('\n').slice(-5).join('\n')}\n`);
    if (ac.signal.aborted) process.exitCode = 130;
    throw err;
  } finally {
    process.removeListener('SIGINT', onSigint);
  }
}
