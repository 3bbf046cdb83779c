/** The asset row of one discovered or probed URL (content discovery, crawling, fingerprinting). */
import type { AssetInput } from '../store/index.js';
import { classifyAsset, hostOf } from './classify.js';
import { accept, reject, type Mapped } from './records.js';

/** An http(s) URL's asset: value = host name, url as given, type `http` when probed (status known). */
export function urlAsset(url: string, fields: Partial<AssetInput> & { source: string }): Mapped<AssetInput> {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return reject(`url: not a URL: ${JSON.stringify(url.slice(0, 200))}`);
  }
  if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') return reject(`url: not http(s): ${JSON.stringify(url.slice(0, 200))}`);
  const probed = (fields.status_code ?? 0) > 0 || (fields.content_length ?? 0) > 0;
  return accept({
    asset_value: hostOf(url),
    url,
    scheme: parsed.protocol.slice(0, -1),
    path: parsed.pathname,
    asset_type: classifyAsset(url, probed),
    ...fields,
  });
}
