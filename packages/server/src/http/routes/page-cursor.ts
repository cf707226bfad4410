import { BerthError } from '@berth/protocol';

/** Where a page of a newest-first list ended: the last row's createdAt (epoch ms) and id. */
export interface PagePosition {
  createdAt: number;
  id: string;
}

/** The `nextCursor` of the page after `last`: its createdAt and id, base64url. */
export const pageCursor = (last: PagePosition): string =>
  Buffer.from(`${last.createdAt}:${last.id}`).toString('base64url');

/**
 * The position a `cursor` query parameter names (undefined when absent or empty); anything that is not a cursor
 * this server gave is 400 `invalid_request` naming the list (`/requests`, `/batch`).
 */
export function readPageCursor(raw: string | null, list: string): PagePosition | undefined {
  if (raw === null || raw === '') return undefined;
  const text = Buffer.from(raw, 'base64url').toString('utf8');
  const at = text.indexOf(':');
  const createdAt = Number(text.slice(0, at));
  const id = text.slice(at + 1);
  if (at < 1 || !Number.isSafeInteger(createdAt) || id === '' || id.length > 200)
    throw new BerthError('invalid_request', `cursor must be the nextCursor of a previous ${list} answer`);
  return { createdAt, id };
}
