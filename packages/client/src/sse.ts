/** One server-sent event (https://html.spec.whatwg.org/multipage/server-sent-events.html), or a comment. */
export interface SseEvent {
  event: string;
  data: string;
  id?: string;
}

/**
 * The events of an SSE body, as they arrive. Comments (`: keep-alive`) come out as `{event: ''}` so a reader can
 * tell the connection is alive.
 */
export async function* readEvents(body: ReadableStream<Uint8Array>): AsyncGenerator<SseEvent> {
  const reader = body.getReader();
  const decoder = new TextDecoder();
  let buf = '';
  try {
    for (;;) {
      const { value, done } = await reader.read();
      if (done) return;
      buf += decoder.decode(value, { stream: true }).replace(/\r\n?/g, '\n');
      for (let end = buf.indexOf('\n\n'); end >= 0; end = buf.indexOf('\n\n')) {
        const block = buf.slice(0, end);
        buf = buf.slice(end + 2);
        yield parseBlock(block);
      }
    }
  } finally {
    reader.cancel().catch(() => {});
  }
}

function parseBlock(block: string): SseEvent {
  const ev: SseEvent = { event: 'message', data: '' };
  const data: string[] = [];
  let comment = true;
  for (const line of block.split('\n')) {
    if (line.startsWith(':')) continue;
    comment = false;
    const i = line.indexOf(':');
    const field = i < 0 ? line : line.slice(0, i);
    const value = i < 0 ? '' : line.slice(i + (line[i + 1] === ' ' ? 2 : 1));
    if (field === 'data') data.push(value);
    else if (field === 'event') ev.event = value;
    else if (field === 'id') ev.id = value;
  }
  if (comment) ev.event = '';
  ev.data = data.join('\n');
  return ev;
}
