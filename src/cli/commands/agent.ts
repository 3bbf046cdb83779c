import { Option, type Command } from 'commander';

/** `osm agent [message…]`: ask an Agent Client Protocol agent from the terminal (reference `agent`). */
export function registerAgent(program: Command): void {
  program
    .command('agent')
    .description('ask an ACP agent (settings acp.agents, or claude-code, codex, gemini, opencode) and print its answer as it streams')
    .argument('[message...]', 'the prompt (or --stdin)')
    .option('--agent <name>', 'agent name (default: settings acp.default_agent)')
    .option('--cwd <dir>', 'folder the agent works in (default: the current folder)')
    .option('--stdin', 'read the prompt from standard input')
    .option('--timeout <duration>', 'give up after this long', '30m')
    .option('--write', 'let the agent write files in --cwd and approve its permission requests (default: read-only, requests rejected)')
    .addOption(new Option('--list', 'list the known agents and their commands'))
    .action(async (message: string[], _opts, command: Command) => {
      const { agentAction } = await import('../actions/agent.js');
      await agentAction(command, message);
    });
}
