import { describe, expect, it } from 'vitest';
import { PgStore } from '../store/postgres/pg-store.js';
import { dropSchema, PG_TEST_URL, pgUnavailable, testSchema } from '../store/postgres/pg-test-db.test-helpers.js';
import { API_KEY, listening, ScriptedWorker, WORKER_TOKEN } from '../testing.test-helpers.js';

const skip = await pgUnavailable();

/** Issue #35 on PostgreSQL: a big body streams through a spool file on one replica; every replica reads the job. */
describe.skipIf(skip !== undefined)(`big values across two PostgreSQL replicas ${skip ?? ''}`, () => {
  it('a 2 MB input sent to replica A reaches a worker of replica B, and B answers its 2 MB output to a reader of A', async () => {
    const schema = testSchema();
    try {
      await using a = await listening({ store: await PgStore.open({ url: PG_TEST_URL, schema, poolSize: 4 }) });
      await using b = await listening({ store: await PgStore.open({ url: PG_TEST_URL, schema, poolSize: 4 }) });
      const w = await ScriptedWorker.connect(b.url, { blobs: true });
      const welcome = await w.next('welcome');
      expect(welcome.blobs).toBe(true); // outputs are uploaded; inputs stay inline in PostgreSQL (in the frame)
      const input = JSON.stringify({ data: 'q'.repeat(2 * 1024 * 1024), n: 7 });
      const res = await fetch(`${a.url}/v2/echo/run`, {
        method: 'POST',
        headers: { authorization: `Bearer ${API_KEY}`, 'content-type': 'application/json' },
        body: `{"input":${input}}`,
      });
      expect(res.status).toBe(200);
      const { id } = (await res.json()) as { id: string };
      const assign = await w.next('job.assign', 10_000);
      expect(assign.id).toBe(id);
      expect(JSON.stringify(assign.input)).toBe(input);
      // The output is uploaded to replica B (spooled, checked, then stored inline), then named in job.complete.
      const up = await fetch(`${b.url}/v2/_worker/jobs/${id}/output?attempt=${assign.attempt}`, {
        method: 'POST',
        headers: { authorization: `Bearer ${WORKER_TOKEN}` },
        body: input,
      });
      expect(up.status).toBe(200);
      const { blob } = (await up.json()) as { blob: string };
      w.send({ type: 'job.complete', id, attempt: assign.attempt, output: null, outputBlob: blob });
      await w.next('job.ack');
      const status = await fetch(`${a.url}/v2/echo/status/${id}`, { headers: { authorization: `Bearer ${API_KEY}` } });
      const body = await status.text();
      expect(JSON.parse(body).status).toBe('COMPLETED');
      expect(body).toContain(`"output":${input}`);
      await w.close();
    } finally {
      await dropSchema(schema);
    }
  });
});
