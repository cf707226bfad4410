import { randomUUID } from 'node:crypto';

/** `<uuid v4>-u1` for /run, `sync-<uuid v4>-u1` for /runsync. */
export function newJobId(sync: boolean): string {
  return `${sync ? 'sync-' : ''}${randomUUID()}-u1`;
}
