/**
 * Baseline of the step-overhead benchmark: a plain Node loop that spawns a program N times, one
 * after the other, capturing its output through pipes as the engine does, and prints the elapsed
 * milliseconds as JSON. Usage: node spawn-loop.mjs <count> <program> [args...]
 */
import { spawn } from 'node:child_process';

const count = Number(process.argv[2]);
const [program, ...args] = process.argv.slice(3);
if (!Number.isInteger(count) || count < 1 || !program) {
  process.stderr.write('usage: spawn-loop.mjs <count> <program> [args...]\n');
  process.exitCode = 2;
} else {
  const started = performance.now();
  for (let i = 0; i < count; i++) {
    await new Promise((resolve, reject) => {
      const child = spawn(program, args, { stdio: ['ignore', 'pipe', 'pipe'] });
      child.stdout.resume();
      child.stderr.resume();
      child.on('error', reject);
      child.on('close', (code) => (code === 0 ? resolve() : reject(new Error(`${program} exited with ${code}`))));
    });
  }
  process.stdout.write(`${JSON.stringify({ count, ms: performance.now() - started })}\n`);
}
