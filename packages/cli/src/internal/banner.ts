import { paint } from './io.js';

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

/** Copy-paste curl lines for one endpoint: runsync, run, status. */
export function curlExamples(url: string, apiKey: string, endpoint: string): string[] {
  const base = `${dialableUrl(url)}/v2/${endpoint}`;
  const auth = `-H 'Authorization: Bearer ${apiKey}'`;
  const json = `-H 'Content-Type: application/json'`;
  return [
    `# submit a job and wait for its result`,
    `curl -s -X POST ${base}/runsync ${auth} ${json} -d '{"input":{"hello":"world"}}'`,
    `# submit a job, then poll its status with the id it returns`,
    `curl -s -X POST ${base}/run ${auth} ${json} -d '{"input":{"hello":"world"}}'`,
    `curl -s ${base}/status/<job id> ${auth}`,
  ];
}
