import { createParser, type EventSourceMessage } from 'eventsource-parser';
import { describe, expect, it } from 'vitest';
import { API_KEY, ScriptedWorker, call, listening } from '../testing.test-helpers.js';
import { sseEvent } from './sse-frame.js';

/** The events an SSE client (eventsource-parser, as the `openai` and `eventsource` clients use) reads from `text`. */
function parse(text: string): EventSourceMessage[] {
  const events: EventSourceMessage[] = [];
  const parser = createParser({ onEvent: (e) => events.push(e) });
  parser.feed(text);
  return events;
}

/** Strings an SSE frame written as one `data:` line would cut: newlines of every kind, blank and indented lines. */
const STRINGS = [
  'a\nb',
  'one\n\ntwo',
  'x\n',
  '\nlead',
  '  indented\n  twice',
  'tab\there',
  '',
  'plain',
  'é ✓ 😀\nünïcode',
];

describe('sseEvent: one event per string, read back whole by a real SSE parser', () => {
  it.each(STRINGS.map((s) => [JSON.stringify(s), s]))('%s', (_name, s) => {
    const events = parse(sseEvent(s as string) + sseEvent('next', 'done'));
    expect(events.map((e) => [e.event, e.data])).toEqual([
      [undefined, s],
      ['done', 'next'],
    ]);
  });

  it('CR and CRLF end lines too (SSE spec): they arrive as LF, never as a cut line or a stray field', () => {
    expect(sseEvent('a\r\nb\rc')).toBe('data: a\ndata: b\ndata: c\n\n');
    expect(parse(sseEvent('a\r\nb\rc')).map((e) => e.data)).toEqual(['a\nb\nc']);
  });
});

async function readAll(res: Response): Promise<EventSourceMessage[]> {
  expect(res.headers.get('content-type')).toContain('text/event-stream');
  return parse(await res.text());
}

describe('SSE routes over a real socket: string chunks with newlines reach the client unchanged', () => {
  it('OpenAI route (stream: true): each string chunk is one event whose data is the string', async () => {
    await using t = await listening();
    const w = await ScriptedWorker.connect(t.url);
    const pending = fetch(`${t.url}/v2/echo/openai/v1/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${API_KEY}` },
      body: JSON.stringify({ model: 'm', prompt: 'hi', stream: true }),
    });
    const a = await w.next('job.assign');
    w.send({ type: 'job.stream', id: a.id, attempt: a.attempt, seq: 0, chunks: STRINGS });
    w.send({ type: 'job.complete', id: a.id, attempt: a.attempt, output: null });
    const events = await readAll(await pending);
    expect(events.map((e) => e.data)).toEqual([...STRINGS, '[DONE]']);
    await w.close();
  });

  it('/stream with Accept: text/event-stream: string outputs with newlines, then the done event', async () => {
    await using t = await listening();
    const w = await ScriptedWorker.connect(t.url);
    const { id } = (await call(t.server, 'POST', '/v2/echo/run', { body: { input: {} } })).body as { id: string };
    const a = await w.next('job.assign');
    w.send({ type: 'job.stream', id, attempt: a.attempt, seq: 0, chunks: STRINGS });
    w.send({ type: 'job.complete', id, attempt: a.attempt, output: null });
    const res = await fetch(`${t.url}/v2/echo/stream/${id}`, {
      headers: { authorization: `Bearer ${API_KEY}`, accept: 'text/event-stream' },
    });
    const events = await readAll(res);
    expect(events.filter((e) => e.event === undefined).map((e) => JSON.parse(e.data).output)).toEqual(STRINGS);
    expect(events.at(-1)?.event).toBe('done');
    expect(JSON.parse(events.at(-1)!.data)).toMatchObject({ id, status: 'COMPLETED' });
    await w.close();
  });
});
