import { describe, expect, it } from 'vitest';
import { readEvents, type SseEvent } from './sse.js';

/** A body delivered in the given pieces, as a network would split it. */
const body = (pieces: string[]) =>
  new ReadableStream<Uint8Array>({
    start(c) {
      for (const p of pieces) c.enqueue(new TextEncoder().encode(p));
      c.close();
    },
  });
const all = async (pieces: string[]) => {
  const out: SseEvent[] = [];
  for await (const e of readEvents(body(pieces))) out.push(e);
  return out;
};

describe('readEvents', () => {
  it('parses ids, event names, multi-line data and comments, whatever the split', async () => {
    const text = 'id: 1.1\ndata: {"output":"a"}\n\n: keep-alive\n\nevent: done\ndata: {"x":\ndata: 1}\n\n';
    const expected = [
      { event: 'message', data: '{"output":"a"}', id: '1.1' },
      { event: '', data: '' },
      { event: 'done', data: '{"x":\n1}' },
    ];
    expect(await all([text])).toEqual(expected);
    expect(await all(text.split(''))).toEqual(expected); // one byte at a time
    expect(await all([text.replaceAll('\n', '\r\n')])).toEqual(expected);
  });

  it('drops an unfinished last event (the connection ended mid-event)', async () => {
    expect(await all(['data: 1\n\ndata: 2\n'])).toEqual([{ event: 'message', data: '1' }]);
  });
});
