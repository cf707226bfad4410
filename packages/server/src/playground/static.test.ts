import { readdirSync, readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import type { ApiRequest } from '../http/types.js';
import { PLAYGROUND_CSP, PLAYGROUND_DIR, servePlayground } from './static.js';

const get = (path: string, method = 'GET') =>
  servePlayground({ method, path, query: new URLSearchParams(), headers: {} } satisfies ApiRequest);
const text = (res: ReturnType<typeof get>) =>
  res && 'bytes' in res ? Buffer.from(res.bytes).toString('utf8') : undefined;
const names = readdirSync(PLAYGROUND_DIR);

describe('servePlayground', () => {
  it('GET / is index.html with the CSP, no-cache and nosniff', () => {
    const res = get('/');
    expect(res?.status).toBe(200);
    expect(res?.headers).toMatchObject({
      'content-type': 'text/html; charset=utf-8',
      'cache-control': 'no-cache',
      'content-security-policy': PLAYGROUND_CSP,
      'x-content-type-options': 'nosniff',
    });
    expect(text(res)).toBe(readFileSync(`${PLAYGROUND_DIR}index.html`, 'utf8'));
    expect(PLAYGROUND_CSP).toContain("script-src 'self'");
    expect(PLAYGROUND_CSP).toContain("connect-src 'self'");
  });

  it('serves every file of the folder under /playground/ with its content type', () => {
    const types: Record<string, string> = {
      js: 'text/javascript; charset=utf-8',
      css: 'text/css; charset=utf-8',
      html: 'text/html; charset=utf-8',
    };
    expect(names).toEqual(expect.arrayContaining(['index.html', 'app.js', 'api.js', 'style.css']));
    for (const name of names) {
      const res = get(`/playground/${name}`);
      expect(res?.status, name).toBe(200);
      expect(res?.headers?.['content-type'], name).toBe(types[name.split('.').pop()!]);
      expect(text(res), name).toBe(readFileSync(PLAYGROUND_DIR + name, 'utf8'));
    }
  });

  it('refuses traversal, sub-folders, hidden and unknown names with 404 route_not_found', () => {
    for (const path of [
      '/playground/../package.json',
      '/playground/..%2fpackage.json',
      '/playground/%2e%2e/src/index.ts',
      '/playground/sub/app.js',
      '/playground/.env',
      '/playground/',
      '/playground/App.js',
      '/playground/app.js.map',
      '/playground/nope.js',
      '/playground/app.js/',
      '/playground/index.html\0.js',
    ]) {
      const res = get(path);
      expect(res?.status, path).toBe(404);
      expect(res && 'json' in res ? res.json : undefined, path).toMatchObject({ code: 'route_not_found' });
    }
  });

  it('leaves other paths and methods to the API', () => {
    expect(get('/', 'POST')).toBeUndefined();
    expect(get('/playground/app.js', 'DELETE')).toBeUndefined();
    expect(get('/v2/echo/run')).toBeUndefined();
    expect(get('/playground')).toBeUndefined();
    expect(get('/index.html')).toBeUndefined();
  });

  it('the page works under its CSP: no inline scripts, styles or handlers; every reference is a served file', () => {
    const html = readFileSync(`${PLAYGROUND_DIR}index.html`, 'utf8');
    expect(html).not.toMatch(/<script(?![^>]*\bsrc=)[^>]*>/i);
    expect(html).not.toMatch(/\sstyle=|<style|\son[a-z]+=/i);
    for (const [, ref] of html.matchAll(/(?:src|href)="\/playground\/([^"]+)"/g))
      expect(get(`/playground/${ref}`)?.status, ref).toBe(200);
    for (const name of names.filter((n) => n.endsWith('.js'))) {
      const js = readFileSync(PLAYGROUND_DIR + name, 'utf8');
      expect(js, name).not.toMatch(/\beval\(|new Function\(|setAttribute\('style'|innerHTML/);
      for (const [, ref] of js.matchAll(/from '\.\/([^']+)'/g)) expect(names, `${name} imports ${ref}`).toContain(ref);
    }
  });

  // 100 KB until the queued job's place and reason and the GPU holders were shown (issues #38, #39: 103 KB); 110 KB
  // until the Monitor view showed load-balancing endpoints (issue #39: 111.5 KB); 115 KB until load-balancing
  // endpoints got their request panel (lb.js, issue #39: 116.6 KB).
  it('stays small: under 118 KB in all', () => {
    const total = names.reduce((n, name) => n + readFileSync(PLAYGROUND_DIR + name).byteLength, 0);
    expect(total).toBeLessThan(118_000);
  });
});
