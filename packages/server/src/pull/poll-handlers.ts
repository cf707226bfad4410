import { BerthError } from '@berth/protocol';
import type { Dispatcher } from '../jobs/dispatcher.js';
import type { ApiRequest, ApiResponse } from '../http/types.js';
import { HeldPoll } from './held-poll.js';
import type { PullSession, PulledJob } from './pull-session.js';

/** 204: no job (or no stop) now; the worker polls again. */
export const NO_CONTENT: ApiResponse = { status: 204, bytes: new Uint8Array(0) };

/**
 * `GET /v2/<ep>/job-take/<worker>` (one job, answered as an object) and `job-take-batch/<worker>?batch_size=N`
 * (up to N, answered as an array). Held until a job is assigned or `holdMs` passes (204); never answered at
 * once when there is nothing to do. A newer poll of the same worker replaces a held one (which gets 204).
 */
export async function takeJobs(
  s: PullSession,
  req: ApiRequest,
  batch: number | undefined,
  holdMs: number,
  dispatcher: Dispatcher,
): Promise<ApiResponse> {
  if (s.draining) throw new BerthError('rate_limited', 'the control plane is shutting down; poll again later');
  const want = batch ?? 1;
  const reply = (jobs: PulledJob[]): ApiResponse => ({ status: 200, json: batch === undefined ? jobs[0] : jobs });
  if (s.take) {
    const old = s.take;
    s.take = undefined;
    s.offered = 0;
    old.answer([]);
  }
  if (s.undelivered.length > 0) {
    const jobs = s.undelivered.splice(0, want);
    s.markDelivered(jobs);
    return reply(jobs);
  }
  const poll = new HeldPoll<PulledJob[]>(holdMs, req.signal);
  s.take = poll;
  s.offered = want;
  s.concurrency = s.inflight.size + want;
  dispatcher.pump(s.endpointId);
  const end = await poll.done;
  if (s.take === poll) {
    s.take = undefined;
    s.offered = 0;
  }
  s.lastActive = performance.now();
  if (end.kind === 'answered' && end.value.length > 0) return reply(end.value);
  if (end.kind === 'aborted') s.abandoned = true;
  return NO_CONTENT;
}

/**
 * `GET /v2/<ep>/job-stop/<worker>`: `{"jobsToStop": [ids]}` as soon as a job of this worker is cancelled, times
 * out or expires, else 204 after `holdMs`. A stop is offered again every second while the job is still this
 * worker's (the worker drops a stop that arrives before it started the job).
 */
export async function pollStops(s: PullSession, req: ApiRequest, holdMs: number): Promise<ApiResponse> {
  const reply = (ids: string[]): ApiResponse => ({ status: 200, json: { jobsToStop: ids } });
  const first = s.dueStops(performance.now());
  if (first.due.length > 0) return reply(first.due);
  if (s.draining) return NO_CONTENT; // shutting down: held polls would keep the server waiting (the worker waits 1 s)
  const poll: HeldPoll<string[]> = new HeldPoll<string[]>(holdMs, req.signal, () => {
    const now = performance.now();
    const r = s.dueStops(now);
    if (r.due.length > 0) poll.answer(r.due);
    else if (r.nextAt !== undefined) poll.wakeIn(r.nextAt - now);
  });
  if (first.nextAt !== undefined) poll.wakeIn(first.nextAt - performance.now());
  if (s.stopPoll?.open) s.stopPoll.answer([]);
  s.stopPoll = poll;
  const end = await poll.done;
  if (s.stopPoll === poll) s.stopPoll = undefined;
  s.lastActive = performance.now();
  if (end.kind === 'answered' && end.value.length > 0) return reply(end.value);
  if (end.kind === 'aborted') s.abandoned = true;
  return NO_CONTENT;
}
