import { BerthError } from '@berth/protocol';
import type { Guard, Operation } from '../http/guard.js';

/** What a read-only key may call. `status` covers `/status`, `/status-sync` and the webhook delivery log. */
export const READ_ONLY_OPERATIONS: ReadonlySet<Operation> = new Set<Operation>(['status', 'stream', 'health']);

/** Refuses what a key's scope does not allow: 403 `key_endpoint_not_allowed` or `key_read_only`. */
export const scopeGuard: Guard = ({ principal, endpointId, operation }) => {
  const scope = principal.scope;
  if (!scope) return undefined;
  if (scope.endpoints !== null && !scope.endpoints.includes(endpointId)) {
    return { error: new BerthError('key_endpoint_not_allowed', `API key ${principal.keyId} may not use endpoint ${endpointId}`) };
  }
  if (scope.readOnly && !READ_ONLY_OPERATIONS.has(operation)) {
    return { error: new BerthError('key_read_only', `API key ${principal.keyId} is read-only: ${operation} is not allowed (only status, stream, health)`) };
  }
  return undefined;
};
