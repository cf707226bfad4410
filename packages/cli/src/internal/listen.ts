import type { ServerOptions } from '@berth/server';
import { EXIT } from './usage-error.js';
import type { Io } from './io.js';

type BerthServer = ReturnType<typeof import('@berth/server').createServer>;

export interface Started {
  server: BerthServer;
  url: string;
  /** What the store held at start. */
  recovered: { queued: number; running: number; endpoints: string[] };
}

/**
 * Creates the control plane and listens. On a listen error prints a message that says what to do and
 * returns the exit code instead.
 */
export async function startServer(
  options: ServerOptions,
  port: number,
  host: string,
  io: Io,
): Promise<Started | number> {
  const { createServer } = await import('@berth/server');
  const server = createServer(options);
  try {
    const { url, recovered } = await server.listen({ port, host });
    return { server, url, recovered };
  } catch (err) {
    const code = (err as NodeJS.ErrnoException | undefined)?.code;
    const where = `${host}:${port}`;
    const message =
      code === 'EADDRINUSE'
        ? `port ${port} on ${host} is already in use; stop whatever holds it or pass --port <n> (--port 0 picks a free port)`
        : code === 'EACCES'
          ? `not allowed to listen on ${where}; use a port above 1023 (--port 8080)`
          : code === 'EADDRNOTAVAIL' || code === 'ENOTFOUND'
            ? `cannot listen on ${host}: no such local address (try --host 127.0.0.1)`
            : `could not listen on ${where}: ${err instanceof Error ? err.message : String(err)}`;
    io.stderr.write(`berth: ${message}\n`);
    // Bounded: close() after a failed listen() does not settle by itself when nothing else holds the event loop.
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([
      server.close({ drainMs: 0 }).catch(() => {}),
      new Promise((r) => (timer = setTimeout(r, 1_000))),
    ]);
    clearTimeout(timer);
    return EXIT.failure;
  }
}
