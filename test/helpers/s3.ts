/**
 * A real S3-protocol server for tests: s3rver (npm) on loopback, with its own temporary folder,
 * bucket and key pair per call. Locally a server that cannot start skips the tests with a visible
 * message; under CI=true it fails them.
 *
 * s3rver 3.7 checks only that the access key id exists; s3-server.cjs puts a front before it that
 * verifies SigV4 signatures and presigned URL expiry as S3 does. s3rver normalises `..` and `//`
 * out of keys, so such keys cannot be planted in it. Multipart uploads, listing, HEAD and batch
 * delete work.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { createRequire } from 'node:module';
import { randomBytes } from 'node:crypto';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { tempDir } from './tmp.js';

const require = createRequire(import.meta.url);
// The SDK's Node 20 end-of-support notice, printed once per process, is noise in test output.
process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED ??= 'true';

/**
 * The server runs in its own process (s3-server.cjs): the cdn_* functions block their caller
 * while a child process talks to the server (they are synchronous), which would starve a server
 * living in the test's own event loop.
 */
const SERVER = fileURLToPath(new URL('./s3-server.cjs', import.meta.url));

export interface S3Fixture {
  endpoint: string;
  port: number;
  bucket: string;
  accessKeyId: string;
  secretAccessKey: string;
  /** The `storage` settings section pointing at this server (enabled). */
  storage: Record<string, unknown>;
  close: () => Promise<void>;
}

/** Starts s3rver with one fresh bucket and key pair; null (after a visible warning) when it cannot start locally. */
export async function startS3(extra: Record<string, unknown> = {}): Promise<S3Fixture | null> {
  const { dir, cleanup } = tempDir('osm-s3-');
  const bucket = `osm-test-${randomBytes(4).toString('hex')}`;
  const accessKeyId = `AKIA${randomBytes(8).toString('hex').toUpperCase()}`;
  const secretAccessKey = `s3cret-${randomBytes(16).toString('hex')}`;
  let child: ChildProcess;
  let port: number;
  try {
    child = spawn(process.execPath, [SERVER, require.resolve('s3rver'), require.resolve('s3rver/lib/models/account'), dir, bucket, accessKeyId, secretAccessKey], { stdio: ['pipe', 'pipe', 'inherit'] });
    const first = await new Promise<string>((resolve, reject) => {
      const rl = createInterface({ input: child.stdout! });
      rl.once('line', (l) => resolve(l));
      child.once('exit', (code) => reject(new Error(`s3rver exited (${code})`)));
      setTimeout(() => reject(new Error('s3rver did not start within 30 s')), 30_000).unref();
    });
    const msg = JSON.parse(first) as { port?: number; error?: string };
    if (!msg.port) throw new Error(msg.error ?? 'no port');
    port = msg.port;
  } catch (err) {
    cleanup();
    if (process.env.CI === 'true') throw new Error(`s3rver is required on CI for the storage tests: ${(err as Error).message}`);
    console.warn(`[storage tests] s3rver could not start: skipping (${(err as Error).message})`);
    return null;
  }
  const endpoint = `http://127.0.0.1:${port}`;
  return {
    endpoint,
    port,
    bucket,
    accessKeyId,
    secretAccessKey,
    storage: { enabled: true, provider: 'minio', endpoint, bucket, access_key_id: accessKeyId, secret_access_key: secretAccessKey, use_ssl: false, ...extra },
    close: async () => {
      const exited = new Promise((resolve) => child.once('exit', resolve));
      child.stdin?.end();
      const timer = setTimeout(() => child.kill('SIGKILL'), 5000);
      await exited;
      clearTimeout(timer);
      cleanup();
    },
  };
}

/** Sets `storage` keys (and other dotted `section.key` values) in a settings file, as a user editing it would. */
export async function editSettingsFile(file: string, storage: Record<string, unknown>, extra: Record<string, unknown> = {}): Promise<void> {
  const { parseDocument } = await import('yaml');
  const { readFileSync, writeFileSync } = await import('node:fs');
  const doc = parseDocument(readFileSync(file, 'utf8'));
  for (const [k, v] of Object.entries(storage)) doc.setIn(['storage', k], v);
  for (const [k, v] of Object.entries(extra)) doc.setIn(k.split('.'), v);
  writeFileSync(file, doc.toString(), { mode: 0o600 });
}

/** Creates a base folder's settings (first use) and sets its `storage` section (see editSettingsFile). */
export async function writeStorageSettings(base: string, storage: Record<string, unknown>, extra: Record<string, unknown> = {}): Promise<void> {
  const { createAppContext } = await import('../../src/services/context.js');
  const { join } = await import('node:path');
  createAppContext({ baseFolder: base }).close();
  await editSettingsFile(join(base, 'osm-settings.yaml'), storage, extra);
}
