import { timingSafeEqual } from 'node:crypto';
import { BerthError, LIMITS, type JobTokenRequest } from '@berth/protocol';
import type { Clock } from '../clock.js';
import type { Principal } from '../http/guard.js';
import { JobTokenSigner, type JobTokenClaims } from './job-token.js';
import type { IssuingKeys } from './issuing-keys.js';

/**
 * Issues and checks job tokens (docs/job-tokens.md): short-lived, read-only credentials for one job of one
 * endpoint, which a browser may hold instead of an API key. A token is not an API key: it has no admin scope, no
 * submit, no retry, no purge, no health, no webhook log; it has rate limits of its own (`rate-limit-guard.ts`),
 * and on every use the key that asked for it is looked up again (`IssuingKeys`): revoked, rotated (its
 * fingerprint differs) or no longer covering the endpoint, the token is refused; a key now read-only keeps its
 * tokens' reads but not their cancel.
 */
export class JobTokens {
  private signer: Promise<JobTokenSigner> | undefined;

  constructor(
    /** The server secret the signing key is derived from (the same on every replica). */
    private readonly secret: () => Promise<string>,
    private readonly clock: Clock,
    private readonly keys: IssuingKeys,
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
    const signer = await this.sign();
    const key = await this.keys.get(principal.keyId);
    if ('gone' in key) throw new BerthError('unauthorized', key.gone);
    const ttl = req.ttlSeconds ?? LIMITS.jobTokenTtlDefaultSeconds;
    const claims: JobTokenClaims = {
      keyId: principal.keyId,
      keyFp: signer.keyFingerprint(key.hash),
      endpointId,
      jobId,
      cancel: req.cancel === true,
      expiresAt: this.clock.now() + ttl * 1000,
    };
    return signer.sign(claims);
  }

  /**
   * The caller a job token stands for, or 401: `unauthorized` (not a token this server signed, or its issuing key
   * was revoked, rotated or removed), `job_token_expired`. Its scope is checked per route by `assertTokenRoute`.
   */
  async authenticate(token: string): Promise<Principal> {
    const r = (await this.sign()).verify(token);
    if (!r.ok)
      throw new BerthError(
        'unauthorized',
        r.reason === 'signature' ? 'job token signature does not match' : 'malformed job token',
      );
    return this.check(r.claims);
  }

  /**
   * The principal of verified claims, checked again now: expiry on the server clock, then the issuing key (its
   * fingerprint and its current scope). Throws like `authenticate`. An open `/stream` calls it again while it runs.
   */
  async check(c: JobTokenClaims): Promise<Principal> {
    const now = this.clock.now();
    if (now >= c.expiresAt)
      throw new BerthError(
        'job_token_expired',
        `job token for job ${c.jobId} expired ${Math.ceil((now - c.expiresAt) / 1000)} s ago; ask the app for a new one`,
      );
    const key = await this.keys.get(c.keyId);
    if ('gone' in key) throw new BerthError('unauthorized', key.gone);
    const fp = (await this.sign()).keyFingerprint(key.hash);
    if (!safeEqual(fp, c.keyFp))
      throw new BerthError('unauthorized', `API key ${c.keyId} that issued this job token has changed since`);
    const { endpoints, readOnly } = key.scope;
    return {
      keyId: c.keyId,
      // What the token allows, within what its key allows now (the scope guard answers 403 for the rest).
      scope: {
        endpoints: endpoints === null || endpoints.includes(c.endpointId) ? [c.endpointId] : [],
        readOnly: readOnly || !c.cancel,
      },
      jobToken: c,
    };
  }
}

const safeEqual = (a: string, b: string) => a.length === b.length && timingSafeEqual(Buffer.from(a), Buffer.from(b));

/**
 * 403 `job_token_not_allowed` unless a job token's caller calls one of its routes (`allowed`: the route table's
 * `auth: 'job-token'` routes, `status`, `status-sync`, `stream`, `logs`, and `cancel` with the cancel scope) on
 * its own job and endpoint. `route` is the path segment after the endpoint. Nothing for API keys.
 */
export function assertTokenRoute(
  principal: Principal,
  endpointId: string,
  route: string,
  jobId: string | undefined,
  allowed: boolean,
) {
  const c = principal.jobToken;
  if (!c) return;
  if (c.endpointId !== endpointId || c.jobId !== jobId)
    throw new BerthError(
      'job_token_not_allowed',
      `this job token is for job ${c.jobId} of endpoint ${c.endpointId} only`,
    );
  if (!allowed || (route === 'cancel' && !c.cancel))
    throw new BerthError(
      'job_token_not_allowed',
      `a job token may call status, status-sync, stream, logs${c.cancel ? ' and cancel' : ''} of its job, not ${route}`,
    );
}
