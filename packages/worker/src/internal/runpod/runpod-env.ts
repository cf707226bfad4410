import { ConfigError } from '../../options.js';

/** How RunPod Serverless (or `berth dev` for a `command` endpoint) tells a worker where its jobs are. */
export interface RunpodEnv {
  /** `RUNPOD_WEBHOOK_GET_JOB`: job-take URL; `$ID` is this worker's id. Must contain `?` and `/job-take/`. */
  getJob: string;
  /** `RUNPOD_WEBHOOK_POST_OUTPUT`: results; `$ID` is the job id, `$RUNPOD_POD_ID` the worker id. */
  postOutput: string;
  /** `RUNPOD_WEBHOOK_POST_STREAM`: stream chunks, same placeholders. */
  postStream: string;
  /** `RUNPOD_WEBHOOK_PING`: heartbeat with the running job ids. Unset: no pings. */
  ping: string | undefined;
  /** `RUNPOD_AI_API_KEY`: sent as the bare `Authorization` header. */
  token: string;
  /** `RUNPOD_POD_ID`: the worker id. */
  workerId: string;
  /** `RUNPOD_PING_INTERVAL`, ms (default 10000, at least 1000). */
  pingIntervalMs: number;
}

const value = (env: NodeJS.ProcessEnv, name: string): string | undefined => {
  const v = env[name]?.trim();
  return v === undefined || v === '' ? undefined : v;
};

/**
 * RunPod's worker environment, or undefined when `RUNPOD_WEBHOOK_GET_JOB` is not set (not started by RunPod).
 *
 * @throws ConfigError naming the variable that is missing or malformed.
 */
export function runpodEnvOf(env: NodeJS.ProcessEnv, fallbackWorkerId: string): RunpodEnv | undefined {
  const getJob = value(env, 'RUNPOD_WEBHOOK_GET_JOB');
  if (getJob === undefined) return undefined;
  const need = (name: string): string => {
    const v = value(env, name);
    if (v === undefined) throw new ConfigError(`${name} must be set when RUNPOD_WEBHOOK_GET_JOB is (RunPod sets both)`);
    return v;
  };
  const postOutput = need('RUNPOD_WEBHOOK_POST_OUTPUT');
  for (const [name, url] of [
    ['RUNPOD_WEBHOOK_GET_JOB', getJob],
    ['RUNPOD_WEBHOOK_POST_OUTPUT', postOutput],
  ] as const) {
    if (!/^https?:\/\//.test(url) || !url.includes('?'))
      throw new ConfigError(`${name} must be an http(s) URL with a query string (got ${JSON.stringify(url)})`);
  }
  if (!getJob.includes('/job-take/'))
    throw new ConfigError(`RUNPOD_WEBHOOK_GET_JOB must contain /job-take/ (got ${JSON.stringify(getJob)})`);
  const interval = Number(value(env, 'RUNPOD_PING_INTERVAL') ?? 10_000);
  if (!Number.isFinite(interval) || interval < 1000)
    throw new ConfigError(
      `RUNPOD_PING_INTERVAL must be a number of ms, at least 1000 (got ${JSON.stringify(env['RUNPOD_PING_INTERVAL'])})`,
    );
  return {
    getJob,
    postOutput,
    postStream: value(env, 'RUNPOD_WEBHOOK_POST_STREAM') ?? postOutput.replace('/job-done/', '/job-stream/'),
    ping: value(env, 'RUNPOD_WEBHOOK_PING'),
    token: need('RUNPOD_AI_API_KEY'),
    workerId: value(env, 'RUNPOD_POD_ID') ?? fallbackWorkerId,
    pingIntervalMs: interval,
  };
}
