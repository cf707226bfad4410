// berth serve and an incoming W3C traceparent, through the real binary exporting to a real OTLP/HTTP receiver:
// continued by default; with BERTH_TRUST_TRACEPARENT=off, a new trace (the caller's is only linked).
import { spawn } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { BIN, pollUntil, REPO_ROOT } from './harness.test-helpers.js';
import { OtlpReceiver } from './otlp-receiver.test-helpers.js';

const KEY = 'berth_trace_trust_key';
const CALLER_TRACE = '4bf92f3577b34da6a3ce929d0e0e4736';
const CALLER_SPAN = '00f067aa0ba902b7';

/** Starts berth serve tracing to `receiver`, sends one /run with the caller's traceparent, answers its request span. */
async function requestSpan(receiver: OtlpReceiver, env: NodeJS.ProcessEnv) {
  const child = spawn(process.execPath, [BIN, 'serve', '--port', '0', '--store', 'memory', '--endpoint', 'echo'], {
    cwd: REPO_ROOT,
    env: {
      ...process.env,
      BERTH_API_KEY: KEY,
      NO_COLOR: '1',
      OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url,
      OTEL_BSP_SCHEDULE_DELAY: '50',
      ...env,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  child.stdout.on('data', (d: Buffer) => (out += d.toString()));
  child.stderr.on('data', (d: Buffer) => (out += d.toString()));
  try {
    const url = await pollUntil(
      async () => {
        if (child.exitCode !== null) throw new Error(`berth serve exited:\n${out}`);
        return /berth ready at (http:\/\/[^\s"()]+)/.exec(out)?.[1];
      },
      (u) => u !== undefined,
      20_000,
      50,
    );
    const res = await fetch(`${url}/v2/echo/run`, {
      method: 'POST',
      headers: {
        authorization: `Bearer ${KEY}`,
        'content-type': 'application/json',
        traceparent: `00-${CALLER_TRACE}-${CALLER_SPAN}-01`,
      },
      body: JSON.stringify({ input: {} }),
    });
    expect(res.status).toBe(200);
    // One berth serve per receiver: the only request span is this run's.
    return await pollUntil(
      async () => receiver.spans.find((s) => s.name === 'POST /v2/:endpoint/run' && s.service === 'berth-server'),
      (s) => s !== undefined,
      20_000,
      50,
    );
  } finally {
    child.kill('SIGTERM');
    await new Promise((r) => child.once('exit', r));
  }
}

describe('berth serve: incoming traceparent', () => {
  it('is continued by default', { timeout: 60_000 }, async () => {
    await using receiver = await OtlpReceiver.start();
    const span = (await requestSpan(receiver, {}))!;
    expect(span).toMatchObject({ traceId: CALLER_TRACE, parentSpanId: CALLER_SPAN });
  });

  it('with BERTH_TRUST_TRACEPARENT=off starts a new trace: the caller neither joins nor samples it', {
    timeout: 60_000,
  }, async () => {
    await using receiver = await OtlpReceiver.start();
    const span = (await requestSpan(receiver, { BERTH_TRUST_TRACEPARENT: 'off' }))!;
    expect(span.traceId).toMatch(/^[0-9a-f]{32}$/);
    expect(span.traceId).not.toBe(CALLER_TRACE);
    expect(span.parentSpanId).toBe('');
    expect(receiver.spans.filter((s) => s.traceId === CALLER_TRACE)).toEqual([]);
  });
});
