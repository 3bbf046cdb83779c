/** Asset classification and host helpers shared by the importers (reference §3.5). */
import { isIP } from 'node:net';

/** The reference's asset_type of a value: url (http when probed), ip, repo_name, domain or unknown. */
export function classifyAsset(value: string, probed = false): string {
  const v = value.trim();
  if (/^https?:\/\//i.test(v)) return probed ? 'http' : 'url';
  if (isIP(stripBrackets(v)) !== 0) return 'ip';
  if (/^[^/\s]+\/[^/\s]+$/.test(v) && !v.includes('.')) return 'repo_name';
  if (v.includes('.') && !/\s/.test(v)) return 'domain';
  return 'unknown';
}

/** True for an IPv4 or IPv6 literal (brackets allowed). */
export function isIpLiteral(value: string): boolean {
  return isIP(stripBrackets(value.trim())) !== 0;
}

/** The host name of a URL, or '' when it does not parse. */
export function hostOf(url: string): string {
  try {
    return stripBrackets(new URL(url).hostname);
  } catch {
    return '';
  }
}

function stripBrackets(v: string): string {
  return v.startsWith('[') && v.endsWith(']') ? v.slice(1, -1) : v;
}

const CLOUD_WORDS = ['aws', 'amazon', 'cloudfront', 'google', 'gcp', 'cloud cdn', 'azure', 'microsoft', 'akamai', 'fastly', 'oracle', 'alibaba', 'aliyun', 'tencent', 'digitalocean'];

/** True when a CDN name names a cloud provider (reference list). */
export function isCloudProvider(cdnName: string): boolean {
  const n = cdnName.toLowerCase();
  return n !== '' && CLOUD_WORDS.some((w) => n.includes(w));
}
