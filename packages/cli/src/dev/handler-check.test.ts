import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { checkHandler } from './handler-check.js';

const tmp = mkdtempSync(join(tmpdir(), 'berth-check-'));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

describe('checkHandler', () => {
  it('lists the handler and the local files it imports (".js" specifiers of .ts files too), not packages', async () => {
    writeFileSync(join(tmp, 'util.ts'), `export const x: number = 1;\n`);
    writeFileSync(
      join(tmp, 'h.ts'),
      `import { start } from '@berth/worker';\nimport { x } from './util.js';\nstart({ handler: () => ({ x }) });\n`,
    );
    const r = await checkHandler(join(tmp, 'h.ts'), tmp);
    expect(r).toEqual({ ok: true, inputs: expect.arrayContaining([join(tmp, 'h.ts'), join(tmp, 'util.ts')]) });
    expect(r.ok && r.inputs).toHaveLength(2);
  });

  it('a syntax error or a missing local import: file:line:column and the text', async () => {
    writeFileSync(join(tmp, 'bad.ts'), `const a = ;\n`);
    const bad = await checkHandler(join(tmp, 'bad.ts'), tmp);
    expect(bad.ok).toBe(false);
    expect(!bad.ok && bad.message).toMatch(/^bad\.ts:1:11: Unexpected ";"/);
    writeFileSync(join(tmp, 'gone.ts'), `import './nothing.js';\n`);
    const gone = await checkHandler(join(tmp, 'gone.ts'), tmp);
    expect(!gone.ok && gone.message).toMatch(/gone\.ts:1:\d+: Could not resolve "\.\/nothing\.js"/);
  });
});
