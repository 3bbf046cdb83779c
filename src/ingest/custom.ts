/**
 * Generic asset JSONL (reference `db_import_custom_asset`): osm-shaped records (asset_value, url,
 * …) or httpx-shaped ones, optionally wrapped in `{"type":"http_record","data":{…}}` envelopes —
 * envelopes of other types are skipped. A given asset_type or source overrides the record's.
 */
import type { AssetInput } from '../store/index.js';
import { assetRecordToInput, httpxToAsset, looksLikeHttpx } from './httpx.js';
import { accept, asObject, skip, type Mapped } from './records.js';

export interface CustomOptions {
  assetType?: string;
  source?: string;
}

/** Maps one generic record. */
export function customToAsset(record: Record<string, unknown>, raw: string, opts: CustomOptions = {}): Mapped<AssetInput> {
  let rec = record;
  const data = asObject(record.data);
  if (typeof record.type === 'string' && data) {
    if (record.type !== 'http_record') return skip(`record type ${record.type} is not an asset`);
    rec = data;
  }
  const mapped = looksLikeHttpx(rec) ? httpxToAsset(rec, raw, { source: opts.source || 'custom' }) : assetRecordToInput(rec, raw);
  if (!mapped.ok) return mapped;
  const value: AssetInput = { ...mapped.value };
  if (opts.assetType) value.asset_type = opts.assetType;
  if (opts.source) value.source = opts.source;
  else if (!value.source) value.source = 'custom';
  return accept(value);
}
