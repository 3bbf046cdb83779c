/**
 * A loopback TCP proxy that a test can cut and restore, to simulate a network partition between
 * one process and a service (Redis): `cut()` destroys every open connection and refuses new ones
 * (they are accepted and destroyed at once, like a reset), `restore()` forwards again.
 * `cutOnNext('reply')` lets the next request through and cuts every connection instead of
 * forwarding its answer (the server did the work, the client never hears of it);
 * `cutOnNext('request')` cuts them instead of forwarding the next request (the server never sees it).
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
  /** Cuts every open connection at the next chunk going that way, which is dropped (new connections are forwarded). */
  cutOnNext(direction: 'request' | 'reply'): void;
  /** Whether a cutOnNext is still waiting for its chunk. */
  armed(): boolean;
  close(): Promise<void>;
}

export async function startTcpProxy(targetHost: string, targetPort: number): Promise<TcpProxy> {
  const open = new Set<net.Socket>();
  let isCut = false;
  let count = 0;
  let armedFor: 'request' | 'reply' | undefined;
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
    const relay = (from: net.Socket, to: net.Socket, direction: 'request' | 'reply') =>
      from.on('data', (chunk: Buffer) => {
        if (armedFor === direction) {
          armedFor = undefined;
          for (const s of open) s.destroy();
          open.clear();
          return;
        }
        to.write(chunk);
      });
    relay(client, upstream, 'request');
    relay(upstream, client, 'reply');
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
    cutOnNext(direction) {
      armedFor = direction;
    },
    armed: () => armedFor !== undefined,
    close() {
      cut();
      return new Promise((resolve) => server.close(() => resolve()));
    },
  };
}
