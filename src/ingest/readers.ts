/**
 * Streaming readers of tool output: bytes go in chunk by chunk, source records come out
 * synchronously, so one reader serves the CLI (async file stream) and workflow functions (sync
 * fixed-size reads). Memory stays bounded by one chunk plus one record, whatever the file size:
 *
 * - jsonLines: one JSON object per line (JSONL); `arrayTolerant` also reads tools that print a JSON
 *   array one element per line (masscan, whatweb), including masscan's invalid trailing commas and
 *   a file cut short before its closing `]`.
 * - jsonPaths: a JSON document streamed by @streamparser/json, emitting the values at given paths
 *   (ffuf's `$.results.*`, testssl's `$.*`).
 * - xmlElements: an XML document streamed by saxes, emitting each named element as a small tree
 *   (nmap's `<host>`, sslscan's `<ssltest>`). saxes never loads a DTD nor expands external
 *   entities, so a hostile document cannot read files or reach the network (no XXE).
 * - textLines: one record `{ line }` per non-blank line (gobuster, plain host lists).
 */
import { closeSync, createReadStream, openSync, readSync, statSync } from 'node:fs';
import { StringDecoder } from 'node:string_decoder';
import { JSONParser } from '@streamparser/json';
import { SaxesParser } from 'saxes';
import { DEFAULT_MAX_LINE_BYTES, LineSplitter } from './lines.js';
import { asObject } from './records.js';

/** One record of a source, or why one could not be read; `at` is its line (or element) number. */
export type SourceItem = { at: number; record: Record<string, unknown>; raw: string } | { at: number; error: string };
export type ItemHandler = (item: SourceItem) => void;

/** A push parser: chunks in, items out through the handler it was made with. */
export interface ChunkParser {
  push(chunk: Buffer): void;
  end(): void;
}
export type ReaderFactory = (emit: ItemHandler) => ChunkParser;

/** Caps of one XML element tree (a record); past them the element is reported, not kept. */
const MAX_ELEMENT_NODES = 50_000;
const MAX_ELEMENT_TEXT = 4 * 1024 * 1024;

/** JSON objects one per line; see the module comment for `arrayTolerant`. */
export function jsonLines(opts: { arrayTolerant?: boolean } = {}): ReaderFactory {
  return (emit) => {
    const splitter = new LineSplitter((no, text) => {
      if (text === null) {
        emit({ at: no, error: 'line too long' });
        return;
      }
      let t = text.trim();
      if (opts.arrayTolerant) t = t.replace(/^[[,\s]+/, '').replace(/[\],\s]+$/, '');
      // `{}` closes whatweb's array; `{finished: 1}` (not JSON) closes masscan 1.0's.
      if (t === '' || (opts.arrayTolerant && (t === '{}' || /^\{\s*finished\s*:\s*1\s*\}$/.test(t)))) return;
      let value: unknown;
      try {
        value = JSON.parse(t);
      } catch (err) {
        emit({ at: no, error: `invalid JSON: ${(err as Error).message}` });
        return;
      }
      const obj = asObject(value);
      if (obj) emit({ at: no, record: obj, raw: t });
      else emit({ at: no, error: 'not a JSON object' });
    }, DEFAULT_MAX_LINE_BYTES);
    return { push: (c) => splitter.push(c), end: () => splitter.end() };
  };
}

/** The values of a JSON document at `paths` (JSONPath-like, e.g. `$.results.*`); non-objects are errors. */
export function jsonPaths(paths: string[]): ReaderFactory {
  return (emit) => {
    const parser = new JSONParser({ paths, keepStack: false });
    let n = 0;
    let failed = false;
    parser.onValue = ({ value }) => {
      n++;
      const obj = asObject(value);
      if (obj) emit({ at: n, record: obj, raw: JSON.stringify(obj) });
      else emit({ at: n, error: 'not a JSON object' });
    };
    parser.onError = (err) => {
      if (failed) return;
      failed = true;
      emit({ at: n + 1, error: `invalid JSON: ${err.message}` });
    };
    return {
      push: (c) => {
        if (!failed && !parser.isEnded) parser.write(c);
      },
      end: () => {
        if (!failed && !parser.isEnded) parser.end();
      },
    };
  };
}

/** A small element tree: name, attributes, children and text (CDATA included). */
export interface XmlNode {
  name: string;
  attrs: Record<string, string>;
  children: XmlNode[];
  text: string;
}

/** The first child named `name`. */
export function child(node: XmlNode | undefined, name: string): XmlNode | undefined {
  return node?.children.find((c) => c.name === name);
}

/** Every child named `name`. */
export function children(node: XmlNode | undefined, name: string): XmlNode[] {
  return node ? node.children.filter((c) => c.name === name) : [];
}

/** Each `<element>` (any depth) as a record `{ node: XmlNode }`; `raw` is empty (XML is not kept). */
export function xmlElements(element: string): ReaderFactory {
  return (emit) => {
    const parser = new SaxesParser({ xmlns: false, position: true });
    const decoder = new StringDecoder('utf8');
    const stack: XmlNode[] = [];
    let count = 0;
    let nodes = 0;
    let textSize = 0;
    let oversized = false;
    let failed = false;
    parser.on('opentag', (tag) => {
      if (stack.length === 0 && tag.name !== element) return;
      if (stack.length === 0) {
        nodes = 0;
        textSize = 0;
        oversized = false;
      }
      const node: XmlNode = { name: tag.name, attrs: { ...(tag.attributes as Record<string, string>) }, children: [], text: '' };
      if (++nodes > MAX_ELEMENT_NODES) oversized = true;
      if (!oversized && stack.length > 0) stack[stack.length - 1]!.children.push(node);
      stack.push(node);
      if (tag.isSelfClosing) return;
    });
    const addText = (t: string) => {
      if (stack.length === 0 || oversized) return;
      textSize += t.length;
      if (textSize > MAX_ELEMENT_TEXT) oversized = true;
      else stack[stack.length - 1]!.text += t;
    };
    parser.on('text', addText);
    parser.on('cdata', addText);
    parser.on('closetag', () => {
      if (stack.length === 0) return;
      const node = stack.pop()!;
      if (stack.length > 0) return;
      count++;
      if (oversized) emit({ at: count, error: `<${element}> element too large` });
      else emit({ at: count, record: { node }, raw: '' });
    });
    parser.on('error', (err) => {
      if (failed) return;
      failed = true;
      emit({ at: count + 1, error: `invalid XML: ${err.message}` });
    });
    const write = (s: string) => {
      if (failed || s === '') return;
      try {
        parser.write(s);
      } catch (err) {
        if (!failed) {
          failed = true;
          emit({ at: count + 1, error: `invalid XML: ${(err as Error).message}` });
        }
      }
    };
    return {
      push: (c) => write(decoder.write(c)),
      end: () => {
        write(decoder.end());
        if (failed) return;
        try {
          parser.close();
        } catch (err) {
          failed = true;
          emit({ at: count + 1, error: `invalid XML: ${(err as Error).message}` });
        }
      },
    };
  };
}

/** One record `{ line }` per non-blank line (trimmed). */
export function textLines(): ReaderFactory {
  return (emit) => {
    const splitter = new LineSplitter((no, text) => {
      if (text === null) {
        emit({ at: no, error: 'line too long' });
        return;
      }
      const t = text.trim();
      if (t !== '') emit({ at: no, record: { line: t }, raw: t });
    }, DEFAULT_MAX_LINE_BYTES);
    return { push: (c) => splitter.push(c), end: () => splitter.end() };
  };
}

const READ_SIZE = 1 << 20;

/** Bytes read so far and the file size, after each chunk. */
export type ProgressHandler = (bytesRead: number, totalBytes: number) => void;

/** Streams a file through a parser; rejects when the file cannot be read. */
export async function feedFileAsync(file: string, parser: ChunkParser, onProgress?: ProgressHandler, afterChunk?: () => Promise<void>): Promise<void> {
  const total = statSync(file).size;
  let read = 0;
  for await (const chunk of createReadStream(file, { highWaterMark: READ_SIZE })) {
    parser.push(chunk as Buffer);
    await afterChunk?.();
    read += (chunk as Buffer).length;
    onProgress?.(read, total);
  }
  parser.end();
  await afterChunk?.();
}

/** Reads a file through a parser synchronously (workflow functions are synchronous). */
export function feedFileSync(file: string, parser: ChunkParser, onProgress?: ProgressHandler): void {
  const total = statSync(file).size;
  const fd = openSync(file, 'r');
  const buf = Buffer.alloc(READ_SIZE);
  let read = 0;
  try {
    for (;;) {
      const n = readSync(fd, buf, 0, buf.length, null);
      if (n === 0) break;
      // Parsers may keep references to the chunk (line tails are copied, JSON/XML decode at once).
      parser.push(Buffer.from(buf.subarray(0, n)));
      read += n;
      onProgress?.(read, total);
    }
    parser.end();
  } finally {
    closeSync(fd);
  }
}
