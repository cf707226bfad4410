import { BerthError } from '@berth/protocol';
import type { Guard, Operation, Principal } from '../http/guard.js';

/** What a read-only key may call. `status` covers `/status`, `/status-sync` and the webhook delivery log. */
export const READ_ONLY_OPERATIONS: ReadonlySet<Operation> = new Set<Operation>([
  'status',
  'stream',
  'health',
  'requests',
]);

/** Refuses what a key's scope does not allow: 403 `key_endpoint_not_allowed` or `key_read_only`. */
export const scopeGuard: Guard = ({ principal, endpointId, operation, read }) => {
  const scope = principal.scope;
  if (!scope) return undefined;
  if (scope.endpoints !== null && !scope.endpoints.includes(endpointId)) {
    return {
      error: new BerthError(
        'key_endpoint_not_allowed',
        `API key ${principal.keyId} may not use endpoint ${endpointId}`,
      ),
    };
  }
  if (scope.readOnly && !read && !READ_ONLY_OPERATIONS.has(operation)) {
    return {
      error: new BerthError(
        'key_read_only',
        `API key ${principal.keyId} is read-only: ${operation} is not allowed (only status, stream, health)`,
      ),
    };
  }
  return undefined;
};

/**
 * A write riding on a read route (`/status?ttl=` changes when the job is deleted): 403 `key_read_only` for read-only
 * keys, `job_token_not_allowed` for job tokens.
 */
export function assertMayWrite(principal: Principal, what: string): void {
  if (principal.jobToken)
    throw new BerthError(
      'job_token_not_allowed',
      `a job token is read-only: ${what} is a write (only cancel, if granted)`,
    );
  if (principal.scope?.readOnly)
    throw new BerthError(
      'key_read_only',
      `API key ${principal.keyId} is read-only: ${what} is a write (only status, stream, health)`,
    );
}
