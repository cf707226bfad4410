/**
 * Completion notifications for the PostgreSQL peers' fronts: one connection LISTENs on a channel whose payloads are
 * `<key> <output as JSON>`, counts them, and resolves the `/runsync` call waiting for that key. The key is chosen
 * by the front before the job is queued, so a notification never arrives before its waiter.
 */
import type pg from 'pg';

export interface DoneListener {
  /** Resolves with the output once the notification for `key` arrives (rejects after `timeoutMs`). */
  wait(key: string, timeoutMs?: number): Promise<unknown>;
  /** Notifications received so far. */
  count(): number;
}

export async function listenDone(client: pg.Client, channel: string): Promise<DoneListener> {
  const waiters = new Map<string, (output: unknown) => void>();
  let count = 0;
  client.on('notification', (m) => {
    if (m.channel !== channel || !m.payload) return;
    count++;
    const sp = m.payload.indexOf(' ');
    const key = m.payload.slice(0, sp);
    const resolve = waiters.get(key);
    if (!resolve) return;
    waiters.delete(key);
    resolve(JSON.parse(m.payload.slice(sp + 1)));
  });
  await client.query(`LISTEN "${channel}"`);
  return {
    count: () => count,
    wait: (key, timeoutMs = 60_000) =>
      new Promise((resolve, reject) => {
        const timer = setTimeout(() => {
          waiters.delete(key);
          reject(new Error(`no completion of ${key} in ${timeoutMs} ms`));
        }, timeoutMs);
        waiters.set(key, (output) => {
          clearTimeout(timer);
          resolve(output);
        });
      }),
  };
}
