/**
 * `@berth/protocol/internal`: NOT public API. Shared plumbing of the toolkit's own packages (`@berth/server` and
 * `@berth/worker`), outside the wire contract and free to change in any release. It lives in this package only so
 * the two sides share one copy. Do not import it from your code.
 *
 * - `sendCoalesced`: one `writev` per event-loop turn per WebSocket (reads `ws`'s private `_socket`).
 *
 * @internal
 */
export { sendCoalesced, type CoalescableSocket } from './coalesce.js';
