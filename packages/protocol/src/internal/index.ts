/**
 * `@berth/protocol/internal`: NOT public API. Shared plumbing of the toolkit's own packages (`@berth/server`,
 * `@berth/worker` and `@berth/cli`), outside the wire contract and free to change in any release. It lives in this package only so
 * the two sides share one copy. Do not import it from your code.
 *
 * - `sendCoalesced`: one `writev` per event-loop turn per WebSocket (reads `ws`'s private `_socket`).
 * - `prettyLine`, `parseJsonLogLine`, `lineBatcher`: the log line helpers `berth` uses to show workers' lines.
 *
 * @internal
 */
export { sendCoalesced, type CoalescableSocket } from './coalesce.js';
export { parseJsonLogLine, prettyLine, type ParsedLogLine } from '../log/log-line.js';
export { lineBatcher } from '../log/line-batcher.js';
