/**
 * Named Agent Client Protocol agents: the built-in names the reference knows, each mapped to the
 * command that speaks ACP on stdio, overridden or extended by settings `acp.agents`.
 */
export interface AcpAgentCommand {
  command: string;
  args: string[];
  env: Record<string, string>;
}

/** Built-in agents (the commands must be installed separately; none is downloaded by osm). */
export const BUILTIN_ACP_AGENTS: Record<string, AcpAgentCommand> = {
  'claude-code': { command: 'claude-code-acp', args: [], env: {} },
  codex: { command: 'codex-acp', args: [], env: {} },
  gemini: { command: 'gemini', args: ['--experimental-acp'], env: {} },
  opencode: { command: 'opencode', args: ['acp'], env: {} },
};

export interface AcpSettings {
  default_agent?: string;
  agents?: Record<string, Partial<AcpAgentCommand>>;
}

/** Every agent name known with these settings → its command. */
export function acpAgents(settings: AcpSettings | undefined): Record<string, AcpAgentCommand> {
  const out: Record<string, AcpAgentCommand> = { ...BUILTIN_ACP_AGENTS };
  for (const [name, a] of Object.entries(settings?.agents ?? {})) {
    if (a?.command) out[name] = { command: a.command, args: a.args ?? [], env: a.env ?? {} };
  }
  return out;
}

/** The agent `name` (or the default agent); undefined when the name is unknown. */
export function resolveAcpAgent(settings: AcpSettings | undefined, name?: string): { name: string; agent: AcpAgentCommand } | undefined {
  const all = acpAgents(settings);
  const chosen = name?.trim() || settings?.default_agent || 'claude-code';
  const agent = all[chosen];
  return agent ? { name: chosen, agent } : undefined;
}
