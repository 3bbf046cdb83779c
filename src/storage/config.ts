/**
 * The `storage` settings turned into what an S3 client needs, per provider:
 *
 * | provider | endpoint when `endpoint` is empty                              | region          | addressing |
 * |----------|-----------------------------------------------------------------|-----------------|------------|
 * | s3       | AWS's own (`https://<bucket>.s3.<region>.amazonaws.com`)        | as set          | path_style |
 * | minio    | required                                                        | as set          | path (MinIO serves buckets by path unless MINIO_DOMAIN is set) |
 * | r2       | `https://<account_id>.r2.cloudflarestorage.com`                 | `auto`          | path_style |
 * | gcs      | `https://storage.googleapis.com` (XML API, HMAC keys)           | `auto`          | path_style |
 * | spaces   | `https://<region>.digitaloceanspaces.com` (region e.g. nyc3)    | us-east-1 signs | path_style |
 * | oci      | `https://<account_id>.compat.objectstorage.<region>.oraclecloud.com` (account_id = namespace) | as set | path (required by OCI) |
 *
 * An endpoint written without a scheme (`<id>.r2.cloudflarestorage.com`, as the reference's docs
 * show) gets `https://`, or `http://` when `use_ssl` is false; an explicit scheme wins.
 */
import { errors } from '../errors.js';
import { parseDuration } from '../util/duration.js';

/** The `storage` section as the settings file holds it (every field optional here). */
export interface StorageSettings {
  provider?: string;
  endpoint?: string;
  access_key_id?: string;
  secret_access_key?: string;
  bucket?: string;
  region?: string;
  account_id?: string;
  use_ssl?: boolean;
  path_style?: boolean;
  presign_expiry?: string | number;
  enabled?: boolean;
  prefix?: string;
  serve?: string;
  upload_outputs?: boolean;
}

/** Everything a storage client needs, resolved. */
export interface StorageConfig {
  provider: string;
  /** Full endpoint URL, or undefined for AWS's own endpoints. */
  endpoint?: string;
  region: string;
  bucket: string;
  accessKeyId: string;
  secretAccessKey: string;
  forcePathStyle: boolean;
  /** Default lifetime of presigned URLs, seconds (S3 allows at most 7 days). */
  presignSeconds: number;
  /** Key prefix of what osm stores itself ('' or ending in '/'). */
  prefix: string;
  serve: 'stream' | 'redirect';
  uploadOutputs: boolean;
}

const MAX_PRESIGN_SECONDS = 7 * 24 * 3600;

/** The storage section of any settings shape the code passes around (loaded, plain, or the section itself). */
export function storageSettingsOf(settings: unknown): StorageSettings {
  const s = settings as { settings?: { storage?: StorageSettings }; storage?: StorageSettings } | undefined;
  return s?.settings?.storage ?? s?.storage ?? {};
}

/** True when storage is switched on and names a bucket (the reference's storage_configured, less the endpoint AWS does not need). */
export function storageEnabled(settings: unknown): boolean {
  const st = storageSettingsOf(settings);
  return st.enabled === true && String(st.bucket ?? '').trim() !== '';
}

function withScheme(endpoint: string, useSsl: boolean): string {
  return /^[a-z][a-z0-9+.-]*:\/\//i.test(endpoint) ? endpoint : `${useSsl ? 'https' : 'http'}://${endpoint}`;
}

/** Joins the prefix setting into '' or 'a/b/' (no leading slash, no empty segments). */
export function normalisePrefix(prefix: string | undefined): string {
  const parts = String(prefix ?? '').split('/').filter((p) => p !== '');
  return parts.length ? `${parts.join('/')}/` : '';
}

/** The resolved configuration; throws storageDisabled / storageConfig when it cannot be used. */
export function resolveStorage(settings: unknown): StorageConfig {
  const st = storageSettingsOf(settings);
  if (!storageEnabled(settings)) throw errors.storageDisabled();
  const provider = String(st.provider ?? 's3');
  const useSsl = st.use_ssl !== false;
  let endpoint = String(st.endpoint ?? '').trim();
  let region = String(st.region ?? '').trim() || 'us-east-1';
  const account = String(st.account_id ?? '').trim();
  let forcePathStyle = st.path_style === true;
  const need = (what: string) => errors.storageConfig(`provider ${provider} needs ${what}`);
  switch (provider) {
    case 's3':
      break;
    case 'minio':
      if (!endpoint) throw need('storage.endpoint (e.g. minio.example.com:9000)');
      forcePathStyle = true;
      break;
    case 'r2':
      if (!endpoint) {
        if (!/^[A-Za-z0-9-]+$/.test(account)) throw need('storage.account_id (or storage.endpoint)');
        endpoint = `https://${account}.r2.cloudflarestorage.com`;
      }
      if (region === 'us-east-1') region = 'auto';
      break;
    case 'gcs':
      if (!endpoint) endpoint = 'https://storage.googleapis.com';
      if (region === 'us-east-1') region = 'auto';
      break;
    case 'spaces':
      if (!endpoint) {
        if (region === 'us-east-1' || !/^[a-z0-9-]+$/.test(region)) throw need('storage.endpoint or a Spaces region such as nyc3 in storage.region');
        endpoint = `https://${region}.digitaloceanspaces.com`;
        // Spaces signs with us-east-1 whatever the datacenter (DigitalOcean's SDK examples).
        region = 'us-east-1';
      }
      break;
    case 'oci':
      if (!endpoint) {
        if (!/^[A-Za-z0-9-]+$/.test(account) || region === 'us-east-1') throw need('storage.account_id (the namespace) and storage.region (e.g. eu-frankfurt-1), or storage.endpoint');
        endpoint = `https://${account}.compat.objectstorage.${region}.oraclecloud.com`;
      }
      forcePathStyle = true;
      break;
    default:
      throw errors.storageConfig(`unknown provider ${JSON.stringify(provider)} (s3, minio, r2, gcs, spaces or oci)`);
  }
  if (endpoint) {
    endpoint = withScheme(endpoint, useSsl);
    let url: URL;
    try {
      url = new URL(endpoint);
    } catch {
      throw errors.storageConfig(`storage.endpoint is not a URL: ${JSON.stringify(endpoint)}`);
    }
    if (url.protocol !== 'http:' && url.protocol !== 'https:') throw errors.storageConfig('storage.endpoint must be an http(s) URL');
    if (url.username || url.password) throw errors.storageConfig('storage.endpoint must not carry credentials (use access_key_id and secret_access_key)');
    endpoint = url.origin + url.pathname.replace(/\/+$/, '');
  }
  let presignMs: number | undefined;
  try {
    presignMs = parseDuration(st.presign_expiry ?? '1h');
  } catch {
    throw errors.storageConfig(`storage.presign_expiry is not a duration: ${JSON.stringify(st.presign_expiry)}`);
  }
  const presignSeconds = Math.min(MAX_PRESIGN_SECONDS, Math.max(1, Math.round((presignMs ?? 3_600_000) / 1000)));
  return {
    provider,
    ...(endpoint ? { endpoint } : {}),
    region,
    bucket: String(st.bucket).trim(),
    accessKeyId: String(st.access_key_id ?? ''),
    secretAccessKey: String(st.secret_access_key ?? ''),
    forcePathStyle,
    presignSeconds,
    prefix: normalisePrefix(st.prefix),
    serve: st.serve === 'redirect' ? 'redirect' : 'stream',
    uploadOutputs: st.upload_outputs === true,
  };
}
