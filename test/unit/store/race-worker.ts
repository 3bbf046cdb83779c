/**
 * A child process for the store race tests: opens the store, says "ready", waits for "go" on
 * stdin, performs its attempt and prints the result as one JSON line. Bundled by the test.
 */
import { openStore } from '../../../src/store/index.js';

const [file, action, arg] = process.argv.slice(2) as [string, string, string];
const store = openStore(file);
process.stdout.write('ready\n');
process.stdin.once('data', () => {
  let result: unknown;
  if (action === 'transition') {
    const [id, to] = arg.split(':') as [string, 'completed' | 'failed' | 'cancelled'];
    result = store.runs.transition(Number(id), to)?.status ?? null;
  } else if (action === 'import') {
    const rows = Array.from({ length: Number(arg) }, (_, i) => ({ asset_value: `h${i}.example.com`, title: `pid ${process.pid}` }));
    const vulns = rows.map((r) => ({ vuln_info: 'exposed', asset_value: r.asset_value, severity: 'low' }));
    const a = store.assets.upsertMany('race.com', rows);
    const v = store.vulns.upsertMany('race.com', vulns);
    result = { assetsNew: a.new, vulnsNew: v.new };
  } else {
    const claimed: number[] = [];
    for (let r = store.runs.claimNext(process.pid); r; r = store.runs.claimNext(process.pid)) claimed.push(r.id);
    result = claimed;
  }
  store.close();
  process.stdout.write(`${JSON.stringify(result)}\n`);
  process.stdin.destroy();
});
