import { type ReadmeInput, run } from './readme.js';

/** The README of a generated load-balancing (`--template http`) project: how it runs here and on RunPod. */
export function httpReadme({ name, endpointId, pm, local }: ReadmeInput): string {
  return `# ${name}

A Berth load-balancing worker (template \`http\`): a plain Node HTTP server, no dependencies beyond Node. Berth's
proxy sends every request on \`/v2/${endpointId}/lb/<path>\` to one of its workers, starting them from zero and
stopping them when idle; the same image runs as a RunPod load-balancing endpoint.

## Next steps

\`\`\`sh
${[
  [`${pm} install`, 'if create-worker did not already (only @berth/cli, for berth dev)'],
  [run(pm, 'test'), 'the server on a free port (node --test, no Berth needed)'],
  [`BERTH_API_KEY=dev-key ${run(pm, 'dev')}`, 'the proxy on http://127.0.0.1:8080; workers start on the first request'],
]
  .map(([cmd, what]) => `${cmd!.padEnd(36)} # ${what}`)
  .join('\n')}
\`\`\`

Then, in another terminal:

\`\`\`sh
curl -s http://127.0.0.1:8080/v2/${endpointId}/lb/generate \\
  -H 'Authorization: Bearer dev-key' -H 'Content-Type: application/json' \\
  -d @test_input.json
\`\`\`

The answer carries \`X-Runpod-Worker-Id\`, the worker that served it. \`berth dev\` runs the endpoint's \`command\`
(\`node server.mjs\`) once per worker with its own \`PORT\` (and \`PORT_HEALTH\`, the same port), waits for
\`GET /ping\` to answer 200 (204 means "still loading": no traffic yet), and restarts the workers when
\`server.mjs\` changes.

## Files

| File | What |
| --- | --- |
| \`server.mjs\` | the worker: \`GET /ping\` (204 while \`loadModel()\` runs, then 200), \`POST /generate\`, \`GET /stats\`; listens on \`PORT\`, health on \`PORT_HEALTH\` (defaults to \`PORT\`) |
| \`server.test.mjs\` | its tests (\`node --test\`) |
| \`test_input.json\` | a \`/generate\` body |
| \`berth.config.json\` | endpoint \`${endpointId}\`, \`"type": "http"\`: \`command\` for \`berth dev\`, \`image\` for a container; 0 to \`maxWorkers\` workers, \`concurrency\` requests in flight each |
| \`Dockerfile\` | the image: \`node:22-bookworm-slim\`, \`EXPOSE 8080\` (\`PORT\` defaults to 8080) |

## Deploy

\`\`\`sh
docker build -t ${endpointId} .
docker run -p 8080:8080 ${endpointId}      # curl localhost:8080/ping
\`\`\`

On your own machine: \`npx berth serve --scale docker\` runs the image named by \`image\` in berth.config.json
(\`${endpointId}\`) as containers behind the same proxy, from zero to \`maxWorkers\` (each gets its own \`PORT\`).

On RunPod: create a **load-balancing** endpoint from the image, expose HTTP port 8080 and set \`PORT=8080\` (and
\`PORT_HEALTH\` if you split health onto its own port). Clients change only the base URL, from
\`http://<berth>/v2/${endpointId}/lb\` to \`https://<ENDPOINT_ID>.api.runpod.ai\`.

\`npx berth build\` checks that the Dockerfile exposes the port and writes Kubernetes manifests (a Deployment and
a Service on the worker's port) into \`build/${endpointId}/k8s/\`.
${local ? '\nThis project depends on Berth packages packed from a local checkout (`vendor/*.tgz`). To use the published\nversion, set `@berth/cli` to `^0.1.0` in package.json and delete `vendor/`.\n' : ''}`;
}
