import { execFile } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { sampleRequest } from '../../packages/cli/src/internal/sample-input.js';
import { REPO_ROOT, startBerthDev } from './harness.test-helpers.js';

const dir = mkdtempSync(join(tmpdir(), 'berth-banner-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const sh = (script: string) =>
  new Promise<string>((ok, fail) =>
    execFile('sh', ['-c', script], { timeout: 30_000 }, (err, stdout, stderr) =>
      err ? fail(new Error(`${err.message}\n${stderr}`)) : ok(stdout),
    ),
  );

describe("berth dev's sample curl", () => {
  it('sends the test_input.json of an endpoint with an input schema, and the job COMPLETES', async () => {
    // examples/basic/greet.ts refuses unknown keys and needs `name`: the generic {"hello":"world"} fails there.
    const config = join(dir, 'berth.config.json');
    writeFileSync(
      config,
      JSON.stringify({ endpoints: { greet: { worker: join(REPO_ROOT, 'examples/basic/greet.ts'), workers: 1 } } }),
    );
    writeFileSync(join(dir, 'test_input.json'), JSON.stringify({ input: { name: "O'Brien", times: 2 } }, null, 2));
    await using berth = await startBerthDev({ config, waitForWorkers: ['greet'] });
    const line = berth.lines.map((l) => l.text.trim()).find((l) => l.startsWith('curl') && l.includes('/runsync'));
    expect(line, berth.tail()).toBeDefined();
    expect(berth.output).toContain(`(input from ${join(dir, 'test_input.json')})`);
    const job = JSON.parse(await sh(line!));
    expect(job).toMatchObject({ status: 'COMPLETED', output: { greetings: ["Hello, O'Brien!", "Hello, O'Brien!"] } });
    // The worker's JSON log lines read like the control plane's: HH:MM:SS, no raw JSON (issues #19, #29).
    await berth.waitForLine(
      new RegExp(`^\\S*\\[greet/greet-1\\]\\S* \\d\\d:\\d\\d:\\d\\d info  job completed jobId=${job.id} attempt=1`),
      5_000,
    );
    expect(berth.output).not.toContain('{"level":');
    // The handler's console.log inside the job carries the job's id.
    expect(berth.output).toMatch(new RegExp(`info  console works too: 2 greeting\\(s\\) for O'Brien jobId=${job.id}`));
    // Once: the control plane does not repeat the worker's "job completed" line.
    expect(berth.lines.filter((l) => l.text.includes('job completed') && l.text.includes(job.id))).toHaveLength(1);
  }, 45_000);
});

describe("berth dev's sample curl without a test_input.json", () => {
  it('on an endpoint whose worker announces an input schema: a sample built from the schema, and the job COMPLETES', async () => {
    const sub = join(dir, 'no-input');
    mkdirSync(sub, { recursive: true });
    const config = join(sub, 'berth.config.json');
    writeFileSync(
      config,
      JSON.stringify({ endpoints: { greet: { worker: join(REPO_ROOT, 'examples/basic/greet.ts'), workers: 1 } } }),
    );
    await using berth = await startBerthDev({ config, waitForWorkers: ['greet'] });
    // Printed once the worker said hello (the schema comes with it).
    const [line] = await berth.waitForLine(/^\s*curl -s -X POST \S+\/runsync .*$/m, 20_000);
    expect(berth.output).toContain("(input built from the schema greet's worker announced)");
    expect(line).toContain(`-d '{"input":{"name":"hello"}}'`);
    const job = JSON.parse(await sh(line.trim()));
    expect(job).toMatchObject({ status: 'COMPLETED', output: { greetings: ['Hello, hello!'] } });
  }, 45_000);
});

describe('sampleRequest: which test_input.json', () => {
  it('next to the handler first, then folders above it up to the config folder; else the generic example', () => {
    const project = join(dir, 'project');
    mkdirSync(join(project, 'src/deep'), { recursive: true });
    const worker = join(project, 'src/deep/worker.ts');
    expect(sampleRequest(worker, project)).toEqual({ body: '{"input":{"hello":"world"}}' });
    writeFileSync(join(project, 'test_input.json'), '{"input": {"a": 1}}');
    expect(sampleRequest(worker, project)).toEqual({
      body: '{"input":{"a":1}}',
      file: join(project, 'test_input.json'),
    });
    writeFileSync(join(project, 'src/test_input.json'), '{"input": {"b": 2}}');
    expect(sampleRequest(worker, project).body).toBe('{"input":{"b":2}}');
    writeFileSync(join(project, 'src/test_input.json'), JSON.stringify({ input: { text: 'x'.repeat(500) } }));
    expect(sampleRequest(worker, project).body).toBe(`@${join(project, 'src/test_input.json')}`);
    writeFileSync(join(project, 'src/test_input.json'), '{"not": "a request"}');
    expect(sampleRequest(worker, project)).toEqual({ body: '{"input":{"hello":"world"}}' });
  });
});
