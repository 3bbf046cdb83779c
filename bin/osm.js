#!/usr/bin/env node
// Tiny launcher: everything heavy is imported lazily by the command that needs it.
import('../dist/cli/main.js')
  .then((m) => m.main(process.argv))
  .catch((err) => {
    process.stderr.write(`Error: ${err && err.message ? err.message : String(err)}\n`);
    process.exitCode = 1;
  });
