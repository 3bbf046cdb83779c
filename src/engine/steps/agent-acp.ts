/**
 * agent-acp step: one prompt (the step's messages) to an Agent Client Protocol agent started over
 * stdio — a named agent from settings `acp` (or the built-ins), or the step's `acp_config.command`.
 * The agent works in `cwd` (default the run's output folder), may read only there and in
 * `allowed_paths`, and may write or run permission-gated actions only with `write_enabled`.
 * Exports `acp_output`, `acp_stderr`, `acp_agent`.
 */
import { mkdirSync } from 'node:fs';
import { basename, isAbsolute, resolve } from 'node:path';
import type { LlmMessage, Step } from '../../workflow/types.js';
import { render, renderDeep } from '../../workflow/template.js';
import { acpAgents, resolveAcpAgent, type AcpSettings } from '../../llm/acp-agents.js';
import { AcpError, runAcpPrompt } from '../../llm/acp-client.js';
import { StepFailure, type DispatchResult, type Scope, type StepContext } from '../types.js';

/** Without a step timeout an ACP agent gets 30 minutes (as run_agent()). */
const DEFAULT_TIMEOUT_MS = 30 * 60_000;

/** The prompt text of a message list: the content alone for one message, `role: content` lines otherwise. */
export function promptOf(messages: Pick<LlmMessage, 'role' | 'content'>[]): string {
  const text = (c: LlmMessage['content']) => (typeof c === 'string' ? c : c.map((p) => p.text ?? '').join(''));
  const parts = messages.filter((m) => text(m.content).trim() !== '');
  if (parts.length === 1) return text(parts[0]!.content);
  return parts.map((m) => `${m.role}: ${text(m.content)}`).join('\n');
}

/** Runs an agent-acp step. */
export async function executeAgentAcp(step: Step, scope: Scope, ctx: StepContext): Promise<DispatchResult> {
  const vars = scope.vars;
  const settings = (scope.exec.settings.settings as { acp?: AcpSettings }).acp;
  let name: string;
  let command: string;
  let args: string[];
  let agentEnv: Record<string, string>;
  if (step.acp_config?.command) {
    command = render(step.acp_config.command, vars);
    args = (step.acp_config.args ?? []).map((a) => render(a, vars));
    agentEnv = step.acp_config.env ?? {};
    name = step.agent ? render(step.agent, vars) : basename(command);
  } else {
    const wanted = step.agent ? render(step.agent, vars) : undefined;
    const found = resolveAcpAgent(settings, wanted);
    if (!found) throw new StepFailure(`unknown ACP agent '${wanted}' (known: ${Object.keys(acpAgents(settings)).join(', ')}; add one under acp.agents in the settings)`);
    ({ name } = found);
    ({ command, args, env: agentEnv } = found.agent);
  }
  const prompt = promptOf(renderDeep(step.messages ?? [], vars));
  if (prompt.trim() === '') throw new StepFailure('agent-acp step must have messages with non-empty content');
  const output = resolve(String(vars.Output ?? '') || process.cwd());
  const cwdText = step.cwd ? render(step.cwd, vars).trim() : '';
  const cwd = cwdText ? (isAbsolute(cwdText) ? cwdText : resolve(output, cwdText)) : output;
  mkdirSync(cwd, { recursive: true });
  const allowedPaths = (step.allowed_paths ?? []).map((p) => render(p, vars).trim()).filter(Boolean).map((p) => (isAbsolute(p) ? p : resolve(output, p)));
  const shown = [`acp ${name}: ${[command, ...args].join(' ')} (cwd ${cwd})`];
  const log = (text: string) => {
    scope.exec.output.append(ctx.logFile, 1, text);
  };
  try {
    const res = await runAcpPrompt({
      command,
      args,
      env: { ...scope.exec.baseEnv, ...agentEnv },
      cwd,
      prompt,
      allowedPaths,
      writeEnabled: step.acp_config?.write_enabled === true,
      timeoutMs: ctx.timeoutMs ?? DEFAULT_TIMEOUT_MS,
      signal: scope.exec.signal,
      onText: log,
    });
    log(`\n[acp] stop reason: ${res.stopReason}\n`);
    return {
      output: res.output,
      lines: res.output ? res.output.split('\n').length : 0,
      autoExports: { acp_output: res.output, acp_stderr: res.stderr, acp_agent: name },
      commands: shown,
    };
  } catch (err) {
    if (err instanceof AcpError) {
      log(`\n[acp] ${err.message}\n${err.stderr}`);
      throw new StepFailure(err.stderr.trim() ? `${err.message}: ${err.stderr.trim().split('\n').slice(-3).join(' | ')}` : err.message, err.output, shown);
    }
    throw err;
  }
}
