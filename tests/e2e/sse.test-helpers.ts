/** One Server-Sent Event, with the time it arrived. */
export interface SseEvent {
  event: string;
  data: string;
  id: string | undefined;
  at: number;
}

/** Reads a `text/event-stream` body to its end (or until `stop` returns true), parsing events as they arrive. */
export async function readSse(res: Response, stop: (e: SseEvent) => boolean = () => false): Promise<SseEvent[]> {
  if (!res.body) throw new Error('response has no body');
  const events: SseEvent[] = [];
  const decoder = new TextDecoder();
  let buffer = '';
  const reader = res.body.getReader();
  try {
    for (;;) {
      const { value, done } = await reader.read();
      if (done) break;
      buffer += decoder.decode(value, { stream: true }).replace(/\r\n?/g, '\n');
      let end: number;
      while ((end = buffer.indexOf('\n\n')) >= 0) {
        const block = buffer.slice(0, end);
        buffer = buffer.slice(end + 2);
        const e = parseBlock(block);
        if (!e) continue;
        events.push(e);
        if (stop(e)) return events;
      }
    }
  } finally {
    await reader.cancel().catch(() => {});
  }
  return events;
}

function parseBlock(block: string): SseEvent | undefined {
  let event = 'message';
  let id: string | undefined;
  const data: string[] = [];
  for (const line of block.split('\n')) {
    if (line === '' || line.startsWith(':')) continue;
    const i = line.indexOf(':');
    const field = i < 0 ? line : line.slice(0, i);
    const value = i < 0 ? '' : line.slice(i + 1).replace(/^ /, '');
    if (field === 'event') event = value;
    else if (field === 'data') data.push(value);
    else if (field === 'id') id = value;
  }
  if (data.length === 0) return undefined;
  return { event, data: data.join('\n'), id, at: Date.now() };
}
