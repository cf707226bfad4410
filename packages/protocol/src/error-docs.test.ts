import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { ERROR_STATUS, WS_ERROR_CODES } from './errors.js';

const doc = readFileSync(new URL('../../../docs/errors.md', import.meta.url), 'utf8');

describe('docs/errors.md', () => {
  it.each(Object.entries(ERROR_STATUS))('documents %s with status %i', (code, status) => {
    const row = doc.split('\n').find((l) => l.startsWith(`| \`${code}\` |`));
    expect(row, `no row for ${code}`).toBeDefined();
    expect(row).toContain(`| ${status} |`);
  });
  it.each(WS_ERROR_CODES)('documents the worker code %s', (code) => {
    expect(doc).toContain(`| \`${code}\` |`);
  });
});
