/**
 * A child process for run_agent(): function scripts are synchronous, so the function spawns this
 * file, which runs the ACP exchange and prints `{"output": …}` or `{"error": …}` as one JSON line.
 * Input (stdin): the AcpRunOptions fields as JSON.
 */
import { runAcpPrompt, type AcpRunOptions } from './acp-client.js';

async function main(): Promise<void> {
  let text = '';
  for await (const chunk of process.stdin) text += chunk;
  const o = JSON.parse(text) as AcpRunOptions;
  try {
    const r = await runAcpPrompt(o);
    process.stdout.write(`${JSON.stringify({ output: r.output })}\n`);
  } catch (err) {
    process.stdout.write(`${JSON.stringify({ error: (err as Error).message })}\n`);
  }
}

void main();
