import { BerthError } from '@berth/protocol';
import { ClientGone } from '../http/client-gone.js';
import type { RouteContext } from '../http/routes/route-context.js';
import { sseEvent } from '../http/sse-frame.js';
import type { JobTokenClaims } from './job-token.js';
import type { JobTokens } from './job-tokens.js';

/** How often an open token stream checks its token again (its key revoked, rotated or narrowed), ms. */
const TOKEN_RECHECK_MS = 5_000;

/**
 * The SSE events of `events` for a caller holding a job token, ended when the token stops being valid while the
 * stream is open: at its expiry, or at the next check (every `TOKEN_RECHECK_MS`) after its key was revoked,
 * rotated or narrowed. The stream then ends with an `error` event carrying the code (`job_token_expired`,
 * `unauthorized`, `key_endpoint_not_allowed`) and the client must reconnect with a new token. The inner events
 * see an abort signal that fires when the client goes or the token ends, so they stop at once, taking nothing.
 */
export async function* untilTokenEnds(
  rc: RouteContext,
  tokens: JobTokens,
  claims: JobTokenClaims,
  events: (rc: RouteContext) => AsyncGenerator<string>,
): AsyncGenerator<string> {
  const stop = new ClientGone();
  const onGone = () => stop.abort();
  rc.req.signal?.addEventListener('abort', onGone);
  if (rc.req.signal?.aborted) stop.abort();
  let ended: BerthError | undefined;
  let timer: NodeJS.Timeout | undefined;
  const arm = () => {
    // Real time to the expiry as the server clock reads it now, or the next check, whichever comes first.
    const toExpiry = claims.expiresAt - Date.now();
    timer = setTimeout(check, Math.max(0, Math.min(TOKEN_RECHECK_MS, toExpiry + 1)));
    timer.unref();
  };
  const check = () => {
    tokens.check(claims).then(
      (p) => {
        if (p.scope?.endpoints?.includes(claims.endpointId) === false)
          end(new BerthError('key_endpoint_not_allowed', `API key ${claims.keyId} may no longer use this endpoint`));
        else if (!stop.aborted) arm();
      },
      (err: unknown) => end(err instanceof BerthError ? err : new BerthError('unauthorized', String(err))),
    );
  };
  const end = (err: BerthError) => {
    ended = err;
    stop.abort();
  };
  arm();
  try {
    for await (const chunk of events({ ...rc, req: { ...rc.req, signal: stop } })) {
      if (ended) break;
      yield chunk;
    }
    if (ended && !rc.req.signal?.aborted)
      yield sseEvent(JSON.stringify({ error: ended.message, code: ended.code }), 'error');
  } finally {
    clearTimeout(timer);
    rc.req.signal?.removeEventListener('abort', onGone);
  }
}
