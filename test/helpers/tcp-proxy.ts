/**
 * A loopback TCP proxy that a test can cut and restore, to simulate a network partition between
 * one process and a service (Redis): `cut()` destroys every open connection and refuses new ones
 * (they are accepted and destroyed at once, like a reset), `restore()` forwards again.
 */
import net from 'node:net';

export interface TcpProxy {
  /** The proxy's loopback port (listening on port 0, so always a free one). */
  port: number;
  /** Connections forwarded so far. */
  accepted(): number;
  /** Destroys every open connection and refuses new ones until `restore()`. */
  cut(): void;
  restore(): void;
  close(): Promise<void>;
}

export async function startTcpProxy(targetHost: string, targetPort: number): Promise<TcpProxy> {
  const open = new Set<net.Socket>();
  let isCut = false;
  let count = 0;
  const server = net.createServer((client) => {
    if (isCut) {
      client.destroy();
      return;
    }
    count++;
    const upstream = net.connect(targetPort, targetHost);
    open.add(client);
    open.add(upstream);
    const drop = () => {
      client.destroy();
      upstream.destroy();
      open.delete(client);
      open.delete(upstream);
    };
    client.on('error', drop).on('close', drop);
    upstream.on('error', drop).on('close', drop);
    client.pipe(upstream);
    upstream.pipe(client);
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });
  const port = (server.address() as net.AddressInfo).port;
  const cut = () => {
    isCut = true;
    for (const s of open) s.destroy();
    open.clear();
  };
  return {
    port,
    accepted: () => count,
    cut,
    restore() {
      isCut = false;
    },
    close() {
      cut();
      return new Promise((resolve) => server.close(() => resolve()));
    },
  };
}
