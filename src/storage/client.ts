/**
 * The S3 client of the live `storage` settings (@aws-sdk/client-s3), and the one place SDK errors
 * become messages: those never carry the secret key, the access key id, a signature or a
 * presigned query string, whatever the SDK or the server put in them.
 */
import { Agent as HttpAgent } from 'node:http';
import { Agent as HttpsAgent } from 'node:https';
import { S3Client } from '@aws-sdk/client-s3';
import { errors, OsmError } from '../errors.js';
import { outboundGuard, type OutboundPolicy } from '../util/outbound.js';
import { resolveStorage, type StorageConfig } from './config.js';

// The SDK warns on every process start under Node < 22 (its releases after January 2027 will
// need 22); this project supports Node 20 with the pinned version, and the warning would land in
// every CLI command's stderr.
process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED ??= 'true';

export interface ClientOptions {
  /** Judge the endpoint and every address connected to by this outbound policy (API evaluations). */
  outbound?: OutboundPolicy;
}

/** A client and the configuration it was made from. */
export interface StorageHandle {
  cfg: StorageConfig;
  s3: S3Client;
  close(): void;
}

/** Builds a client from a resolved configuration. */
export function clientFor(cfg: StorageConfig, opts: ClientOptions = {}): StorageHandle {
  let requestHandler: { httpAgent: HttpAgent; httpsAgent: HttpsAgent; connectionTimeout: number; requestTimeout: number } | undefined;
  if (opts.outbound) {
    const guard = outboundGuard(opts.outbound);
    const target = cfg.endpoint ? new URL(cfg.endpoint) : new URL(`https://s3.${cfg.region}.amazonaws.com`);
    const why = guard.checkUrl(target);
    if (why) throw errors.storageConfig(`the storage endpoint is refused: ${why}`);
    const lookup = guard.lookup();
    requestHandler = {
      httpAgent: new HttpAgent({ keepAlive: true, lookup } as ConstructorParameters<typeof HttpAgent>[0]),
      httpsAgent: new HttpsAgent({ keepAlive: true, lookup } as ConstructorParameters<typeof HttpsAgent>[0]),
      connectionTimeout: 30_000,
      requestTimeout: 300_000,
    };
  }
  const s3 = new S3Client({
    region: cfg.region,
    ...(cfg.endpoint ? { endpoint: cfg.endpoint } : {}),
    forcePathStyle: cfg.forcePathStyle,
    credentials: { accessKeyId: cfg.accessKeyId, secretAccessKey: cfg.secretAccessKey },
    maxAttempts: 3,
    // The SDK's default CRC checksums (since 3.729) are refused by several S3-compatible stores
    // (GCS interop, older MinIO and R2, s3rver): send and check them only where S3 requires one.
    requestChecksumCalculation: 'WHEN_REQUIRED',
    responseChecksumValidation: 'WHEN_REQUIRED',
    ...(requestHandler ? { requestHandler } : {}),
  });
  return {
    cfg,
    s3,
    close: () => {
      s3.destroy();
      requestHandler?.httpAgent.destroy();
      requestHandler?.httpsAgent.destroy();
    },
  };
}

/** A client of the settings' storage; throws storageDisabled / storageConfig when it cannot be made. */
export function storageClient(settings: unknown, opts: ClientOptions = {}): StorageHandle {
  return clientFor(resolveStorage(settings), opts);
}

/** Removes what must never be shown from a message: the configured keys, signatures, credentials in URLs. */
export function scrubStorageText(text: string, cfg?: Pick<StorageConfig, 'accessKeyId' | 'secretAccessKey'>): string {
  let out = String(text);
  for (const secret of [cfg?.secretAccessKey, cfg?.accessKeyId]) {
    if (secret && secret.length >= 4) out = out.split(secret).join('[REDACTED]');
  }
  return out
    .replace(/(X-Amz-(?:Signature|Credential|Security-Token)=)[^&\s"'<]*/gi, '$1[REDACTED]')
    .replace(/((?<![-\w])(?:Signature|AWSAccessKeyId|Credential)=)[^&,\s"'<]*/g, '$1[REDACTED]')
    .replace(/(<(?:StringToSign|StringToSignBytes|CanonicalRequest|CanonicalRequestBytes|SignatureProvided|AWSAccessKeyId)>)[^<]*/g, '$1[REDACTED]');
}

/** The HTTP status of an SDK error, if it has one. */
export function statusOf(err: unknown): number | undefined {
  return (err as { $metadata?: { httpStatusCode?: number } })?.$metadata?.httpStatusCode;
}

/** True for "no such key" answers (GET 404 NoSuchKey, HEAD 404 NotFound). */
export function isNotFound(err: unknown): boolean {
  const name = (err as { name?: string })?.name ?? '';
  return name === 'NoSuchKey' || name === 'NotFound' || statusOf(err) === 404;
}

/** An SDK (or network) error as a catalogue error whose message is safe to show and record. */
export function storageFailure(err: unknown, cfg?: Pick<StorageConfig, 'accessKeyId' | 'secretAccessKey'>, what = ''): OsmError {
  if (err instanceof OsmError) return new OsmError(err.code, err.status, scrubStorageText(err.message, cfg));
  const e = err as { name?: string; message?: string; Code?: string; code?: string; cause?: { message?: string } };
  const status = statusOf(err);
  const name = e?.Code ?? e?.name ?? 'Error';
  let message = e?.message ?? String(err);
  if (!message || message === 'UnknownError') message = status ? `HTTP ${status}` : 'no answer';
  if (e?.cause?.message && !message.includes(e.cause.message)) message += `: ${e.cause.message}`;
  const detail = `${what ? `${what}: ` : ''}${name === 'Error' || message.startsWith(name) ? '' : `${name}: `}${message}${status && !message.includes(String(status)) ? ` (HTTP ${status})` : ''}`;
  return errors.storageFailed(scrubStorageText(detail, cfg).slice(0, 2000));
}
