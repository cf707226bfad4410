// `npm test`: the server on a free port, through real sockets (node:test, no dependencies).
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { loadModel, start } from './server.mjs';

test('/ping says 204 while the model loads, then 200; /generate echoes its input', async () => {
  let loaded;
  const gate = new Promise((resolve) => {
    loaded = resolve;
  });
  const w = await start({ worker: 'w1', load: () => gate.then(() => loadModel(0)) });
  const url = `http://127.0.0.1:${w.port}`;
  try {
    assert.equal((await fetch(`${url}/ping`)).status, 204);
    assert.equal((await fetch(`${url}/generate`, { method: 'POST', body: '{"prompt": "x"}' })).status, 503);
    loaded();
    while ((await fetch(`${url}/ping`)).status !== 200) await new Promise((r) => setTimeout(r, 20));
    const r = await fetch(`${url}/generate`, { method: 'POST', body: JSON.stringify({ prompt: 'hi', n: 1 }) });
    assert.equal(r.status, 200);
    assert.deepEqual(await r.json(), {
      generated_text: 'Generated text for: hi',
      input: { prompt: 'hi', n: 1 },
      worker: 'w1',
    });
    const bad = await fetch(`${url}/generate`, { method: 'POST', body: '{"prompt": 1}' });
    assert.equal(bad.status, 400);
    assert.deepEqual(await (await fetch(`${url}/stats`)).json(), { requests: 1, worker: 'w1' });
  } finally {
    await w.close();
  }
});

test('PORT_HEALTH apart from PORT: /ping answers there, and only /ping', async () => {
  const w = await start({ healthPort: 0 });
  try {
    assert.notEqual(w.healthPort, w.port);
    while ((await fetch(`http://127.0.0.1:${w.healthPort}/ping`)).status !== 200)
      await new Promise((r) => setTimeout(r, 20));
    assert.equal(
      (await fetch(`http://127.0.0.1:${w.healthPort}/generate`, { method: 'POST', body: '{}' })).status,
      404,
    );
  } finally {
    await w.close();
  }
});
