import { paint } from './io.js';
import type { SampleRequest } from './sample-input.js';

/** The one line that says the control plane is up. Tools (and the e2e tests) look for `ready` and the URL. */
export function readyLine(url: string, endpoints: readonly string[], color: boolean): string {
  const c = paint(color);
  const eps = endpoints.length ? endpoints.join(', ') : 'none yet; workers register theirs when they connect';
  return `${c('green', 'berth ready')} at ${c('bold', url)} (endpoints: ${eps})`;
}

/** The base URL workers should dial: a wildcard listen address is not something to connect to. */
export function dialableUrl(url: string): string {
  const u = new URL(url);
  if (u.hostname === '0.0.0.0') u.hostname = '127.0.0.1';
  else if (u.hostname === '[::]') u.hostname = '[::1]';
  return u.origin;
}

const shellQuote = (s: string) => `'${s.replace(/'/g, `'\\''`)}'`;

/**
 * Copy-paste curl lines for one endpoint: runsync, run, status. `sample` is the body (see sampleRequest: the
 * endpoint's test_input.json when it has one); without it, the generic `{"input":{"hello":"world"}}`.
 */
export function curlExamples(
  url: string,
  apiKey: string,
  endpoint: string,
  sample: SampleRequest = { body: '{"input":{"hello":"world"}}' },
): string[] {
  const base = `${dialableUrl(url)}/v2/${endpoint}`;
  const auth = `-H 'Authorization: Bearer ${apiKey}'`;
  const json = `-H 'Content-Type: application/json'`;
  const data = `-d ${shellQuote(sample.body)}`;
  const from = sample.file
    ? ` (input from ${sample.file})`
    : (sample.note ?? ' (replace the input with what your handler expects)');
  return [
    `# submit a job and wait for its result${from}`,
    `curl -s -X POST ${base}/runsync ${auth} ${json} ${data}`,
    `# submit a job, then poll its status with the id it returns`,
    `curl -s -X POST ${base}/run ${auth} ${json} ${data}`,
    `curl -s ${base}/status/<job id> ${auth}`,
  ];
}
