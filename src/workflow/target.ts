/**
 * Checks for untrusted input — targets and param values — used at EVERY entry point (CLI, API,
 * events, schedules). Targets are rendered into operator-written bash commands, so a character
 * the shell treats as syntax would turn data into code (field-notes §4.2 item 1: reNgine
 * CVE-2023-50094, rengine#1561 — the secondary creation path is the one that gets missed).
 * The engine additionally exposes values as environment variables (`targetEnvironment`) so
 * workflows can write `"$OSM_TARGET"` instead of splicing text.
 */
import { errors } from '../errors.js';
import { detectTargetType, type TargetKind } from './heuristics.js';
import { valueToString } from './template.js';
import { isIP } from 'node:net';

// Shell metacharacters: command separators, quoting, substitution, grouping, redirection, escape.
const SHELL_CHARS = new Set([';', "'", '"', '|', '&', '`', '$', '(', ')', '{', '}', '<', '>', '\\']);
const PARAM_KEY_RE = /^[A-Za-z_][A-Za-z0-9_.-]*$/;
const MAX_SHOWN = 80;

function isControl(code: number): boolean {
  return code < 0x20 || code === 0x7f || (code >= 0x80 && code <= 0x9f);
}

/** A character as shown in messages: JSON-escaped, so a newline reads `"\n"`. */
function showChar(ch: string): string {
  return JSON.stringify(ch);
}

function showValue(value: string): string {
  const cut = value.length > MAX_SHOWN ? `${value.slice(0, MAX_SHOWN)}…` : value;
  return JSON.stringify(cut);
}

/** First forbidden character of `value`, or undefined. Spaces/tabs are allowed only when `allowBlank`. */
function forbiddenChar(value: string, allowBlank: boolean): string | undefined {
  for (const ch of value) {
    if (allowBlank && (ch === ' ' || ch === '\t')) continue;
    if (ch === ' ' || SHELL_CHARS.has(ch) || isControl(ch.codePointAt(0)!)) return ch;
  }
  return undefined;
}

/**
 * `[`/`]` are legitimate only around an IPv6 literal host in a URL (`http://[::1]:8080/x`);
 * anywhere else they are glob characters. Returns the text with that one literal removed.
 */
function withoutIpv6Host(value: string): string {
  const m = /^([a-z][a-z0-9+.-]*:\/\/(?:[^/?#@[\]]*@)?)\[([0-9A-Fa-f:.]+)\](.*)$/i.exec(value);
  if (!m || isIP(m[2]!) !== 6) return value;
  const rest = m[3]!;
  if (rest !== '' && !/^(:\d{1,5})?([/?#].*)?$/.test(rest)) return value;
  return `${m[1]}host${rest}`;
}

/**
 * Throws `invalidTarget` unless `value` is a plausible target: non-empty, no shell metacharacters,
 * whitespace or control characters, no leading `-` (argument injection such as `-oProxyCommand=`).
 */
export function validateTarget(value: string, field = 'target'): void {
  if (typeof value !== 'string' || value.trim() === '') throw errors.invalidTarget(`${field} must not be empty`);
  const bad = forbiddenChar(value, false);
  if (bad !== undefined) throw errors.invalidTarget(`${field} ${showValue(value)} contains forbidden character ${showChar(bad)}`);
  if (value.startsWith('-')) {
    throw errors.invalidTarget(`${field} ${showValue(value)} must not start with "-" (it would be read as a command-line option)`);
  }
  const rest = withoutIpv6Host(value);
  const bracket = /[[\]]/.exec(rest);
  if (bracket) {
    throw errors.invalidTarget(`${field} ${showValue(value)} contains forbidden character ${showChar(bracket[0])} (brackets are only allowed around an IPv6 host in a URL)`);
  }
}

/**
 * Throws `invalidTarget` for a bad param key or a value containing shell metacharacters or control
 * characters. Unlike targets, spaces/tabs and a leading `-` are allowed: params commonly carry
 * tool options (`-t 10 --rate 50`) meant to be spliced as separate words, and an empty value is a
 * valid "unset". The value itself is never echoed (it may be a secret).
 */
export function validateParamValue(key: string, value: string): void {
  if (typeof key !== 'string' || !PARAM_KEY_RE.test(key)) {
    throw errors.invalidTarget(`params key ${showValue(String(key))} is invalid (expected letters, digits, "_", "." or "-", not starting with a digit)`);
  }
  if (typeof value !== 'string') throw errors.invalidTarget(`params[${JSON.stringify(key)}] must be a string`);
  const bad = forbiddenChar(value, true);
  if (bad !== undefined) throw errors.invalidTarget(`params[${JSON.stringify(key)}] contains forbidden character ${showChar(bad)}`);
  if (/[[\]]/.test(withoutIpv6Host(value))) {
    const ch = /[[\]]/.exec(value)![0];
    throw errors.invalidTarget(`params[${JSON.stringify(key)}] contains forbidden character ${showChar(ch)}`);
  }
}

/** Validates every entry of a params object (all keys and values). */
export function validateParams(params: Record<string, string>): void {
  for (const [key, value] of Object.entries(params)) validateParamValue(key, value);
}

/** The kind of a target: domain, ip, cidr, url, file (existing regular file) or unknown. */
export function classifyTarget(value: string): TargetKind {
  return detectTargetType(value);
}

/** `paramFromFlow-file.x` → `PARAM_FROM_FLOW_FILE_X` (env-var safe, upper snake case). */
export function envKey(key: string): string {
  return key
    .replace(/([a-z0-9])([A-Z])/g, '$1_$2')
    .toUpperCase()
    .replace(/[^A-Z0-9_]/g, '_');
}

/**
 * Environment variables that carry untrusted values into bash as data: `OSM_TARGET`,
 * `OSM_OUTPUT`, `OSM_WORKSPACE`, `OSM_TARGET_SPACE` and `OSM_PARAM_<KEY>` per user param.
 */
export function targetEnvironment(vars: Record<string, unknown>, userParamKeys: string[] = []): Record<string, string> {
  // NUL cannot be passed through execve; strip rather than fail the whole step.
  const text = (v: unknown) => valueToString(v).replace(/\u0000/g, '');
  const env: Record<string, string> = {
    OSM_TARGET: text(vars.Target ?? vars.target),
    OSM_OUTPUT: text(vars.Output),
    OSM_WORKSPACE: text(vars.Workspace ?? vars.TargetSpace),
    OSM_TARGET_SPACE: text(vars.TargetSpace),
  };
  for (const key of userParamKeys) env[`OSM_PARAM_${envKey(key)}`] = text(vars[key]);
  return env;
}
