/** Response headers of every server-sent event stream (`/stream` with `Accept: text/event-stream`, the OpenAI route). */
export const SSE_HEADERS = {
  'content-type': 'text/event-stream; charset=utf-8',
  'cache-control': 'no-cache',
  'x-accel-buffering': 'no',
};

/**
 * One server-sent event carrying `data`, any string: one `data:` line per line of it (an SSE line ends at CR, LF
 * or CRLF, and a client joins the data lines of one event with LF), so the client reads the same string back;
 * only a CR or CRLF inside it arrives as LF. `event` names the event type (none: `message`).
 */
export function sseEvent(data: string, event?: string, id?: string): string {
  const lines = data.split(/\r\n|\r|\n/);
  const head = `${id === undefined ? '' : `id: ${id}\n`}${event === undefined ? '' : `event: ${event}\n`}`;
  return `${head}data: ${lines.join('\ndata: ')}\n\n`;
}
