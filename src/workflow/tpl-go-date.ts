/**
 * Go's reference-time layouts (`2006-01-02 15:04:05`), because workflows written for the
 * reference pass them to the `currentDate` generator. Local time, like Go's time.Now().Format.
 */

const MONTHS = ['January', 'February', 'March', 'April', 'May', 'June', 'July', 'August', 'September', 'October', 'November', 'December'];
const DAYS = ['Sunday', 'Monday', 'Tuesday', 'Wednesday', 'Thursday', 'Friday', 'Saturday'];

const pad = (n: number, width = 2, fill = '0') => String(n).padStart(width, fill);

function zoneAbbrev(d: Date): string {
  try {
    const part = new Intl.DateTimeFormat('en-US', { timeZoneName: 'short' }).formatToParts(d).find((p) => p.type === 'timeZoneName');
    return part?.value ?? 'UTC';
  } catch {
    return 'UTC';
  }
}

function offset(d: Date, colon: boolean, zulu: boolean, hoursOnly = false): string {
  const minutes = -d.getTimezoneOffset();
  if (zulu && minutes === 0) return 'Z';
  const sign = minutes < 0 ? '-' : '+';
  const abs = Math.abs(minutes);
  if (hoursOnly) return `${sign}${pad(Math.floor(abs / 60))}`;
  return `${sign}${pad(Math.floor(abs / 60))}${colon ? ':' : ''}${pad(abs % 60)}`;
}

// Longest tokens first so `2006` wins over `2`, `January` over `Jan`, `-07:00` over `-07`.
const TOKENS: Array<[string, (d: Date) => string]> = [
  ['January', (d) => MONTHS[d.getMonth()]!],
  ['Monday', (d) => DAYS[d.getDay()]!],
  ['Z07:00', (d) => offset(d, true, true)],
  ['-07:00', (d) => offset(d, true, false)],
  ['Z0700', (d) => offset(d, false, true)],
  ['-0700', (d) => offset(d, false, false)],
  ['2006', (d) => pad(d.getFullYear(), 4)],
  ['.000', (d) => `.${pad(d.getMilliseconds(), 3)}`],
  ['-07', (d) => offset(d, false, false, true)],
  ['Jan', (d) => MONTHS[d.getMonth()]!.slice(0, 3)],
  ['Mon', (d) => DAYS[d.getDay()]!.slice(0, 3)],
  ['MST', (d) => zoneAbbrev(d)],
  ['01', (d) => pad(d.getMonth() + 1)],
  ['02', (d) => pad(d.getDate())],
  ['_2', (d) => pad(d.getDate(), 2, ' ')],
  ['03', (d) => pad(d.getHours() % 12 || 12)],
  ['04', (d) => pad(d.getMinutes())],
  ['05', (d) => pad(d.getSeconds())],
  ['06', (d) => pad(d.getFullYear() % 100)],
  ['15', (d) => pad(d.getHours())],
  ['PM', (d) => (d.getHours() >= 12 ? 'PM' : 'AM')],
  ['pm', (d) => (d.getHours() >= 12 ? 'pm' : 'am')],
  ['1', (d) => String(d.getMonth() + 1)],
  ['2', (d) => String(d.getDate())],
  ['3', (d) => String(d.getHours() % 12 || 12)],
  ['4', (d) => String(d.getMinutes())],
  ['5', (d) => String(d.getSeconds())],
];

/** Formats `date` with a Go layout string (the common tokens; anything else is copied as is). */
export function formatGoLayout(date: Date, layout: string): string {
  let out = '';
  let i = 0;
  outer: while (i < layout.length) {
    for (const [token, fn] of TOKENS) {
      if (layout.startsWith(token, i)) {
        out += fn(date);
        i += token.length;
        continue outer;
      }
    }
    out += layout[i];
    i++;
  }
  return out;
}
