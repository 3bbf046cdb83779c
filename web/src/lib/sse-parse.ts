/** The Server-Sent Events wire format (no DOM, unit-tested): fields per line, a blank line ends a message. */

export interface SseMessage {
  event: string;
  data: string;
  id?: string;
}

/** Splits an SSE byte stream into messages (spec: fields per line, a blank line ends a message). */
export function sseParser(onMessage: (m: SseMessage) => void): (chunk: string) => void {
  let buf = '';
  let event = '';
  let data: string[] = [];
  let id: string | undefined;
  return (chunk: string) => {
    buf += chunk;
    let nl: number;
    while ((nl = buf.search(/\r\n|\r|\n/)) >= 0) {
      // A CR that ends the chunk may be the first half of CRLF: wait for the next chunk.
      if (buf[nl] === '\r' && nl === buf.length - 1) break;
      const line = buf.slice(0, nl);
      buf = buf.slice(nl + (buf[nl] === '\r' && buf[nl + 1] === '\n' ? 2 : 1));
      if (line === '') {
        if (data.length) onMessage({ event: event || 'message', data: data.join('\n'), id });
        event = '';
        data = [];
        continue;
      }
      if (line.startsWith(':')) continue;
      const c = line.indexOf(':');
      const field = c < 0 ? line : line.slice(0, c);
      const value = c < 0 ? '' : line.slice(c + 1).replace(/^ /, '');
      if (field === 'event') event = value;
      else if (field === 'data') data.push(value);
      else if (field === 'id') id = value;
    }
  };
}
