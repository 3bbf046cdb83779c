/** Read-only text with line numbers and messages shown under the lines they are about (lint, errors). */

export interface LineMessage {
  line: number;
  severity: 'error' | 'warning' | 'info';
  message: string;
}

export function CodeLines({ text, messages, label }: { text: string; messages: LineMessage[]; label: string }) {
  const lines = text.replace(/\n$/, '').split('\n');
  const byLine = new Map<number, LineMessage[]>();
  const unplaced: LineMessage[] = [];
  for (const m of messages) {
    if (m.line >= 1 && m.line <= lines.length) byLine.set(m.line, [...(byLine.get(m.line) ?? []), m]);
    else unplaced.push(m);
  }
  return (
    <div class="code" role="region" aria-label={label} tabIndex={0}>
      {unplaced.map((m) => (
        <div class={`code-msg ${m.severity}`}>
          {m.severity}: {m.message}
        </div>
      ))}
      <ol class="code-lines">
        {lines.map((l, i) => {
          const msgs = byLine.get(i + 1);
          return (
            <li class={msgs ? `has-msg ${msgs.some((m) => m.severity === 'error') ? 'error' : 'warning'}` : undefined} id={`L${i + 1}`}>
              <span class="code-text">{l || ' '}</span>
              {msgs?.map((m) => (
                <div class={`code-msg ${m.severity}`} role="note">
                  {m.severity} (line {i + 1}): {m.message}
                </div>
              ))}
            </li>
          );
        })}
      </ol>
    </div>
  );
}
