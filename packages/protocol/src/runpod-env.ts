/**
 * The environment RunPod Serverless gives a worker, pointed at a Berth control plane: what an unmodified
 * runpod-python worker (or `@berth/worker` in RunPod mode) reads to find its job-take, job-done, job-stream and
 * ping URLs (docs/worker-protocol.md, "Pull protocol"). `$ID` and `$RUNPOD_POD_ID` stay literal: the worker
 * substitutes them (the query string is required: the worker appends `&...`). Machine checks (4 GB RAM, free disk, a TCP connect to 8.8.8.8:53, the GPU test) are skipped.
 */
export function runpodWorkerEnv(
  url: string,
  endpointId: string,
  workerId: string,
  workerToken: string,
  pingIntervalMs = 1000,
): Record<string, string> {
  const v2 = `${url.replace(/\/+$/, '')}/v2/${endpointId}`;
  return {
    RUNPOD_POD_ID: workerId,
    RUNPOD_AI_API_KEY: workerToken,
    RUNPOD_WEBHOOK_GET_JOB: `${v2}/job-take/$ID?gpu=berth`,
    RUNPOD_WEBHOOK_POST_OUTPUT: `${v2}/job-done/$RUNPOD_POD_ID/$ID?gpu=berth`,
    RUNPOD_WEBHOOK_POST_STREAM: `${v2}/job-stream/$RUNPOD_POD_ID/$ID?gpu=berth`,
    RUNPOD_WEBHOOK_PING: `${v2}/ping/$RUNPOD_POD_ID?gpu=berth`,
    RUNPOD_PING_INTERVAL: String(pingIntervalMs),
    RUNPOD_SKIP_AUTO_SYSTEM_CHECKS: 'true',
    RUNPOD_SKIP_GPU_CHECK: 'true',
    // Worker output reaches berth dev's console line by line.
    PYTHONUNBUFFERED: '1',
  };
}
