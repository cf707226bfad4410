// The size a page pays for the client: the whole package bundled and minified by esbuild, then gzip-compressed.
import { gzipSync } from 'node:zlib';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';
import { describe, expect, it } from 'vitest';

describe('bundle size', () => {
  it('the whole client is under 6 kB minified + gzip', async () => {
    const out = await build({
      entryPoints: [fileURLToPath(new URL('./index.ts', import.meta.url))],
      bundle: true,
      minify: true,
      format: 'esm',
      platform: 'browser',
      target: 'es2022',
      write: false,
    });
    const min = out.outputFiles[0]!.contents;
    const gz = gzipSync(min, { level: 9 }).length;
    console.log(`@berth/client: ${min.length} B minified, ${gz} B minified + gzip`);
    expect(gz).toBeLessThan(6 * 1024);
  });
});
