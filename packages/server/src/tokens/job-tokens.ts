import { BerthError, LIMITS, type JobTokenRequest } from '@berth/protocol';
import type { Clock } from '../clock.js';
import type { Principal } from '../http/guard.js';
import type { KeyStore } from '../keys/key-store.js';
import { JobTokenSigner, type JobTokenClaims } from './job-token.js';

/** Routes a job token may call, by the path segment after the endpoint; `cancel` only with the cancel scope. */
const TOKEN_ROUTES: ReadonlySet<string> = new Set(['status', 'status-sync', 'stream', 'logs', 'cancel']);

/** Ids of stored API keys (`berth_sk_<id>_...`): a token they issued dies with their revocation. */
const STORED_KEY_ID_RE = /^[a-z0-9]{12}$/;

/**
 * Issues and checks job tokens (docs/job-tokens.md): short-lived, read-only credentials for one job of one
 * endpoint, which a browser may hold instead of an API key. A token is not an API key: it has no admin scope, no
 * submit, no retry, no purge, no health, no webhook log; it counts against the rate limits of the key that asked
 * for it, and dies with that key's revocation (stored keys).
 */
export class JobTokens {
  private signer: Promise<JobTokenSigner> | undefined;

  constructor(
    /** The server secret the signing key is derived from (the same on every replica). */
    private readonly secret: () => Promise<string>,
    private readonly clock: Clock,
    private readonly keyStore: KeyStore | undefined,
  ) {}

  private sign(): Promise<JobTokenSigner> {
    return (this.signer ??= this.secret()
      .then((s) => new JobTokenSigner(s))
      .catch((err: unknown) => {
        this.signer = undefined;
        throw err;
      }));
  }

  /** A token for `jobId`, as `"token": {...}` of a submit asked for. Refused to a caller that is itself a token. */
  async issue(principal: Principal, endpointId: string, jobId: string, req: JobTokenRequest): Promise<string> {
    if (principal.jobToken) throw new BerthError('job_token_not_allowed', 'a job token cannot issue job tokens');
    const ttl = req.ttlSeconds ?? LIMITS.jobTokenTtlDefaultSeconds;
    const claims: JobTokenClaims = {
      keyId: principal.keyId,
      endpointId,
      jobId,
      cancel: req.cancel === true,
      expiresAt: this.clock.now() + ttl * 1000,
    };
    return (await this.sign()).sign(claims);
  }

  /**
   * The caller a job token stands for, or 401: `unauthorized` (not a token this server signed, or its issuing key
   * was revoked), `job_token_expired`. Its scope is checked per route by `assertTokenRoute`.
   */
  async authenticate(token: string): Promise<Principal> {
    const r = (await this.sign()).verify(token);
    if (!r.ok)
      throw new BerthError(
        'unauthorized',
        r.reason === 'signature' ? 'job token signature does not match' : 'malformed job token',
      );
    const c = r.claims;
    const now = this.clock.now();
    if (now >= c.expiresAt)
      throw new BerthError(
        'job_token_expired',
        `job token for job ${c.jobId} expired ${Math.ceil((now - c.expiresAt) / 1000)} s ago; ask the app for a new one`,
      );
    if (this.keyStore && STORED_KEY_ID_RE.test(c.keyId)) {
      const k = await this.keyStore.get(c.keyId);
      if (!k || k.revokedAt !== null)
        throw new BerthError('unauthorized', `API key ${c.keyId} that issued this job token was revoked`);
    }
    return {
      keyId: c.keyId,
      scope: { endpoints: [c.endpointId], readOnly: !c.cancel },
      jobToken: c,
    };
  }
}

/**
 * 403 `job_token_not_allowed` unless a job token's caller calls one of its routes (`status`, `status-sync`,
 * `stream`, `logs`, and `cancel` with the cancel scope) on its own job and endpoint. Nothing for API keys.
 */
export function assertTokenRoute(principal: Principal, endpointId: string, route: string, jobId: string | undefined) {
  const c = principal.jobToken;
  if (!c) return;
  if (c.endpointId !== endpointId || c.jobId !== jobId)
    throw new BerthError(
      'job_token_not_allowed',
      `this job token is for job ${c.jobId} of endpoint ${c.endpointId} only`,
    );
  if (!TOKEN_ROUTES.has(route) || (route === 'cancel' && !c.cancel))
    throw new BerthError(
      'job_token_not_allowed',
      `a job token may call status, status-sync, stream, logs${c.cancel ? ' and cancel' : ''} of its job, not ${route}`,
    );
}
