/** Encoding functions (reference §10.2 "encoding", plus the spec's urlEncode/urlDecode). */
import type { FnImpl } from './registry.js';
import { asText, isMissing } from './helpers.js';

const STD_BASE64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;

/** The encoding functions, by snake_case name (aliases come from the catalogue). */
export const encodingFunctions: Record<string, FnImpl> = {
  base64_encode: (_c, s) => (isMissing(s) ? '' : Buffer.from(asText(s), 'utf8').toString('base64')),
  // Standard alphabet with padding, as Go's StdEncoding; anything else answers "".
  base64_decode: (_c, s) => {
    if (isMissing(s)) return '';
    const text = asText(s).trim();
    if (!STD_BASE64.test(text)) return '';
    return Buffer.from(text, 'base64').toString('utf8');
  },
  // Component encoding (RFC 3986 unreserved characters kept); decode also maps '+' to a space.
  url_encode: (_c, s) => (isMissing(s) ? '' : encodeURIComponent(asText(s))),
  url_decode: (_c, s) => {
    if (isMissing(s)) return '';
    try {
      return decodeURIComponent(asText(s).replace(/\+/g, ' '));
    } catch {
      return '';
    }
  },
};
