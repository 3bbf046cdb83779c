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

let tableWidth: number | undefined;

/** `--width`: tables are wrapped to this many terminal columns. */
export function setTableWidth(columns: number | undefined): void {
  tableWidth = columns;
}

/**
 * Column widths (padding included) that fit `total` terminal columns: the widest columns give
 * up space first, none below `min`. Undefined when the natural widths already fit.
 */
export function fitColumns(natural: number[], total: number, min = 6): number[] | undefined {
  const widths = natural.map((w) => w + 2);
  const borders = widths.length + 1;
  let excess = widths.reduce((a, b) => a + b, 0) + borders - total;
  if (excess <= 0) return undefined;
  while (excess > 0) {
    let widest = 0;
    for (let i = 1; i < widths.length; i++) if (widths[i]! > widths[widest]!) widest = i;
    if (widths[widest]! <= min) break;
    widths[widest]! -= 1;
    excess -= 1;
  }
  return widths;
}

/** Renders a box-drawn table (cli-table3), plain when colours are off; wrapped to `--width`. */
export async function renderTable(head: string[], rows: (string | number)[][], opts: { color?: boolean; width?: number } = {}): Promise<string> {
  const { default: Table } = await import('cli-table3');
  const cells = rows.map((r) => r.map((c) => String(c)));
  const width = opts.width ?? tableWidth;
  const natural = head.map((h, i) => Math.max(displayWidth(h), ...cells.map((r) => longestLine(r[i] ?? ''))));
  const colWidths = width !== undefined ? fitColumns(natural, width) : undefined;
  const table = new Table({
    head,
    style: { head: opts.color ? ['cyan'] : [], border: opts.color ? ['grey'] : [] },
    ...(colWidths ? { colWidths, wordWrap: true } : {}),
  });
  for (const r of cells) table.push(r);
  return table.toString();
}

function longestLine(text: string): number {
  let max = 0;
  for (const l of text.split('\n')) max = Math.max(max, displayWidth(l));
  return max;
}

function displayWidth(text: string): number {
  // eslint-disable-next-line no-control-regex
  return [...text.replace(/\u001b\[[0-9;]*m/g, '')].length;
}
