#!/usr/bin/env node
/**
 * Why step commands do not go through execa: 500 sequential spawns of `true`, awaited one by one,
 * with node:child_process.spawn and with execa (same stdio and process group), three repetitions.
 * `node bench/extra/execa-vs-spawn.mjs` — prints ms per spawn and the ratio.
 */
import { spawn } from 'node:child_process';
import { execa } from 'execa';

const N = Number(process.argv[2] ?? 500);

async function viaSpawn() {
  for (let i = 0; i < N; i++) {
    await new Promise((ok) => spawn('true', [], { stdio: ['ignore', 'pipe', 'pipe'], detached: true }).on('close', ok));
  }
}

async function viaExeca() {
  for (let i = 0; i < N; i++) await execa('true', [], { stdin: 'ignore', detached: true, reject: false });
}

for (let rep = 1; rep <= 3; rep++) {
  let t = performance.now();
  await viaSpawn();
  const a = (performance.now() - t) / N;
  t = performance.now();
  await viaExeca();
  const b = (performance.now() - t) / N;
  console.log(`rep ${rep}: child_process.spawn ${a.toFixed(2)} ms/spawn, execa ${b.toFixed(2)} ms/spawn, ratio ${(b / a).toFixed(2)}`);
}
