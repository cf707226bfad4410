import type { RunpodEnv } from './runpod-env.js';
import { errorText } from '@berth/protocol/log';

/** A job as job-take answers it: RunPod's `{"id", "input", ...}`. */
export interface PulledJob {
  id: string;
  input: Record<string, unknown>;
  s3Config?: unknown;
}

export type TakeResult =
  | { kind: 'jobs'; jobs: PulledJob[] }
  | { kind: 'none' }
  | { kind: 'slow-down' }
  | { kind: 'error'; error: string };

/** Longest a held poll may take before the client gives up (runpod-python: 90 s). */
const POLL_TIMEOUT_MS = 90_000;
const REPORT_TIMEOUT_MS = 60_000;

/**
 * The requests of RunPod's worker protocol, shaped exactly as runpod-python 1.12 sends them (same methods, URLs,
 * query parameters and bodies; see docs/worker-protocol.md, "Pull protocol"), with the bare token as
 * `Authorization`. URLs come from the environment, so they work against RunPod and Berth alike.
 */
export class PullClient {
  private readonly takeUrl: string;
  private readonly stopUrl: string;

  constructor(
    private readonly env: RunpodEnv,
    private readonly sdkVersion: string,
  ) {
    this.takeUrl = env.getJob.replaceAll('$ID', env.workerId);
    this.stopUrl = this.takeUrl.replace('/job-take/', '/job-stop/');
  }

  private headers(options: { json: boolean }): Record<string, string> {
    return { authorization: this.env.token, ...(options.json ? { 'content-type': 'application/json' } : {}) };
  }

  private signal(ms: number, outer?: AbortSignal): AbortSignal {
    const t = AbortSignal.timeout(ms);
    return outer ? AbortSignal.any([t, outer]) : t;
  }

  /** `GET job-take` (one) or `job-take-batch` (`batch_size` > 1); `inProgress`: other jobs are running here. */
  async take(options: { batchSize: number; inProgress: boolean; signal: AbortSignal }): Promise<TakeResult> {
    const { batchSize, inProgress, signal } = options;
    const url =
      batchSize > 1
        ? `${this.takeUrl.replace('/job-take/', '/job-take-batch/')}&batch_size=${batchSize}`
        : this.takeUrl;
    let res: Response;
    try {
      res = await fetch(`${url}&job_in_progress=${inProgress ? 1 : 0}`, {
        headers: this.headers({ json: false }),
        signal: this.signal(POLL_TIMEOUT_MS, signal),
      });
    } catch (err) {
      return { kind: 'error', error: errorText(err) };
    }
    if (res.status === 204 || res.status === 400) return drop(res, { kind: 'none' });
    if (res.status === 429) return drop(res, { kind: 'slow-down' });
    if (res.status !== 200) return drop(res, { kind: 'error', error: `job-take answered ${res.status}` });
    const body: unknown = await res.json().catch(() => undefined);
    const list = Array.isArray(body) ? body : body && typeof body === 'object' ? [body] : [];
    const jobs = list.filter(
      (j): j is PulledJob =>
        !!j &&
        typeof j === 'object' &&
        typeof (j as PulledJob).id === 'string' &&
        typeof (j as PulledJob).input === 'object',
    );
    return jobs.length > 0 ? { kind: 'jobs', jobs } : { kind: 'none' };
  }

  /** `GET job-stop`: ids of jobs to stop (empty on 204); throws on errors. */
  async stops(signal: AbortSignal): Promise<{ ids: string[]; slowDown: boolean }> {
    const res = await fetch(this.stopUrl, {
      headers: this.headers({ json: false }),
      signal: this.signal(POLL_TIMEOUT_MS, signal),
    });
    if (res.status === 204) return drop(res, { ids: [], slowDown: false });
    if (res.status === 429) return drop(res, { ids: [], slowDown: true });
    if (res.status !== 200) {
      await res.body?.cancel();
      throw new Error(`job-stop answered ${res.status}`);
    }
    const body = (await res.json().catch(() => undefined)) as { jobsToStop?: unknown } | undefined;
    const ids = Array.isArray(body?.jobsToStop)
      ? body.jobsToStop.filter((x): x is string => typeof x === 'string')
      : [];
    return { ids, slowDown: false };
  }

  /** `POST job-done?isStream=`: `{"output"}`, `{"error"}` or progress `{"status": "IN_PROGRESS", "output"}`. */
  done(jobId: string, body: Record<string, unknown>, options: { isStream: boolean }): Promise<void> {
    return this.post(this.env.postOutput, jobId, body, options);
  }

  /** `POST job-stream?isStream=false`: one chunk, `{"output": chunk}`. */
  chunk(jobId: string, output: unknown): Promise<void> {
    return this.post(this.env.postStream, jobId, { output }, { isStream: false });
  }

  /** `GET ping?job_id=a,b&runpod_version=` (`job_id` left out when idle). */
  async ping(jobIds: string[]): Promise<void> {
    if (!this.env.ping) return;
    const url = this.env.ping.replaceAll('$RUNPOD_POD_ID', this.env.workerId);
    const q = new URLSearchParams();
    if (jobIds.length > 0) q.set('job_id', jobIds.join(','));
    q.set('runpod_version', this.sdkVersion);
    const res = await fetch(`${url}${url.includes('?') ? '&' : '?'}${q}`, {
      headers: this.headers({ json: false }),
      signal: this.signal(this.env.pingIntervalMs * 2),
    });
    await res.body?.cancel();
  }

  /** A report: retried twice on 5xx (after 2 s, then 3 s), like runpod-python; a 4xx or network error drops it. */
  private async post(
    template: string,
    jobId: string,
    body: Record<string, unknown>,
    options: { isStream: boolean },
  ): Promise<void> {
    const url = `${template.replaceAll('$RUNPOD_POD_ID', this.env.workerId).replaceAll('$ID', jobId)}&isStream=${options.isStream}`;
    const text = JSON.stringify(body);
    for (const delay of [2000, 3000, -1]) {
      const res = await fetch(url, {
        method: 'POST',
        headers: this.headers({ json: true }),
        body: text,
        signal: this.signal(REPORT_TIMEOUT_MS),
      });
      await res.body?.cancel();
      if (res.ok) return;
      if (res.status < 500 || delay < 0) throw new Error(`${url.split('?')[0]} answered ${res.status}`);
      await new Promise((r) => setTimeout(r, delay));
    }
  }
}

async function drop<T>(res: Response, value: T): Promise<T> {
  await res.body?.cancel();
  return value;
}
