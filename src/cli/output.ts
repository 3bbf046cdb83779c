import { Chalk } from 'chalk';

/** True when colours should be used on stdout. */
export function colorEnabled(disableFlag?: boolean): boolean {
  if (disableFlag) return false;
  if (process.env.NO_COLOR !== undefined && process.env.NO_COLOR !== '') return false;
  if (process.env.FORCE_COLOR && process.env.FORCE_COLOR !== '0') return true;
  return Boolean(process.stdout.isTTY);
}

/** A small printer with the reference's symbols; colours only on a TTY. */
export function createUi(opts: { disableColor?: boolean; silent?: boolean } = {}) {
  const chalk = new Chalk({ level: colorEnabled(opts.disableColor) ? 1 : 0 });
  const out = (s: string) => process.stdout.write(`${s}\n`);
  const err = (s: string) => process.stderr.write(`${s}\n`);
  return {
    chalk,
    out,
    err,
    info: (s: string) => { if (!opts.silent) out(`${chalk.cyan('◆')} ${s}`); },
    success: (s: string) => { if (!opts.silent) out(`${chalk.green('✔')} ${s}`); },
    warn: (s: string) => { if (!opts.silent) out(`${chalk.yellow('⚠')} ${s}`); },
    error: (s: string) => err(`${chalk.red('✘')} ${s}`),
    json: (value: unknown) => out(JSON.stringify(value, null, 2)),
  };
}
export type Ui = ReturnType<typeof createUi>;

/** Renders a box-drawn table (cli-table3), plain when colours are off. */
export async function renderTable(head: string[], rows: (string | number)[][], opts: { color?: boolean } = {}): Promise<string> {
  const { default: Table } = await import('cli-table3');
  const table = new Table({ head, style: { head: opts.color ? ['cyan'] : [], border: opts.color ? ['grey'] : [] } });
  for (const r of rows) table.push(r.map((c) => String(c)));
  return table.toString();
}
