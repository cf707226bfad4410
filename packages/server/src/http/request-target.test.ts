import { describe, expect, it } from 'vitest';
import { splitTarget } from './request-target.js';

/** What the adapter did before: `new URL(target, 'http://localhost')`. */
function viaUrl(target: string) {
  const url = new URL(target, 'http://localhost');
  return { path: url.pathname, query: [...url.searchParams] };
}

const TARGETS = [
  '/v2/echo/runsync',
  '/v2/echo/runsync?wait=5000',
  '/v2/echo/status/0b9c2c2e-6f5d-4a57-9d35-0d4b1f0e7c11?ttl=60000&wait=10',
  '/v2/echo/run?',
  '/v2/my-ep_1/openai/v1/chat/completions',
  '/v2/echo/status/a.b',
  '/v2/echo/../other/run',
  '/v2/echo/./run',
  '/v2/echo/%2e%2e/run',
  '/v2/echo/.%2E/run',
  '/v2\\echo\\run',
  '//evil.example/v2/echo/run',
  '/v2/echo//run',
  '/v2/echo/run?a=b c&x=%41&y=+1',
  '/v2/echo/run?a=1#frag',
  '/v2/echo/run#frag?x=1',
  '/v2/ech o/run',
  '/v2/echo/r\u00e9sum\u00e9',
  '/v2/echo/run?q=%zz&k=%',
  '/v2/echo/run?a=1&a=2&b',
  '*',
  'http://other.example/v2/echo/run?wait=1',
  '/ping',
  '/',
];

describe('splitTarget', () => {
  it('splits every target as new URL does (path and query parameters), plain or not', () => {
    for (const t of TARGETS) {
      const { path, search } = splitTarget(t);
      expect({ path, query: [...new URLSearchParams(search)] }, t).toEqual(viaUrl(t));
    }
  });
});
