import type { Template } from './templates.js';

export interface ReadmeInput {
  name: string;
  endpointId: string;
  template: Template;
  /** `npm`, `pnpm` or `yarn`. */
  pm: string;
  local: boolean;
}

/** `npm run dev` / `pnpm dev` / `yarn dev`. */
export function run(pm: string, script: string): string {
  return pm === 'npm' ? `npm run ${script}` : `${pm} ${script}`;
}

/** The README of a generated project: what is in it and what to do next. */
export function readme({ name, endpointId, template, pm, local }: ReadmeInput): string {
  const notes = template.notes.length ? `\n${template.notes.map((n) => `> ${n}`).join('\n>\n')}\n` : '';
  return `# ${name}

A Berth worker (template \`${template.name}\`: ${template.description}).
${notes}
## Next steps

\`\`\`sh
${[
  [`${pm} install`, 'if create-worker did not already'],
  [run(pm, 'test'), "the handler's tests (vitest, no server needed)"],
  ['npx berth test', 'one job from test_input.json through the real worker runtime; exit 0/1'],
  [`BERTH_API_KEY=dev-key ${run(pm, 'dev')}`, 'the queue API on http://127.0.0.1:8080 and your workers, hot reload'],
]
  .map(([cmd, what]) => `${cmd!.padEnd(36)} # ${what}`)
  .join('\n')}
\`\`\`

Then, in another terminal:

\`\`\`sh
curl -s -X POST http://127.0.0.1:8080/v2/${endpointId}/runsync \\
  -H 'Authorization: Bearer dev-key' -H 'Content-Type: application/json' \\
  -d @test_input.json
\`\`\`

Edit \`src/handler.ts\` while \`${run(pm, 'dev')}\` runs: its workers restart on save, and a job that was running is
requeued, not lost.

## Files

| File | What |
| --- | --- |
| \`src/handler.ts\` | the handler: one call per job; its return value is the job's output |
| \`src/worker.ts\` | starts the worker runtime with the handler |
| \`src/handler.test.ts\` | tests with \`runJob\` from \`@berth/worker/testing\` |
| \`src/client.ts\` | calls the endpoint with \`@berth/client\`, typed by the handler's type (\`BERTH_API_KEY=dev-key npx tsx src/client.ts\` while \`${run(pm, 'dev')}\` runs with the same key) |
| \`test_input.json\` | the input \`berth test\` and the tests use |
| \`berth.config.json\` | endpoint \`${endpointId}\`: scales from 0 to \`maxWorkers\` on queue depth, back to 0 after \`idleTimeoutMs\` |

## Deploy

\`\`\`sh
${run(pm, 'build')}            # build/${endpointId}/: worker.mjs, package.json, Dockerfile, Dockerfile.cuda
docker build -t ${endpointId}-worker build/${endpointId}
docker run -e BERTH_URL=https://your-control-plane -e BERTH_WORKER_TOKEN=<token> ${endpointId}-worker
\`\`\`
${local ? '\nThis project depends on Berth packages packed from a local checkout (`vendor/*.tgz`). To use the published\nversions, set their versions to `^0.1.0` in package.json and delete `vendor/`.\n' : ''}`;
}
