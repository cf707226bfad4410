import { describe, expect, it } from 'vitest';

// What other packages see (packages/protocol/dist, through package.json `exports`): `npm test` builds first. The
// root is the wire contract; the logger and tracing are subpaths; a new export is a decision, made here.
describe('@berth/protocol package surface', () => {
  it('the root exports the wire schemas, errors and limits by name, and nothing internal', async () => {
    const root = await import('@berth/protocol');
    expect(Object.keys(root).sort()).toEqual([
      'AssignMessage',
      'BerthError',
      'CancelMessage',
      'ConfigError',
      'ENDPOINT_ID_RE',
      'ERROR_STATUS',
      'ErrorBodySchema',
      'ExecutionPolicy',
      'HealthReplySchema',
      'HelloMessage',
      'JOB_ID_RE',
      'JobObject',
      'JobRequest',
      'JobStatus',
      'JobTokenRequest',
      'LIMITS',
      'LOG_LINES_PER_MESSAGE',
      'LOG_MESSAGE_MAX_CHARS',
      'LogLine',
      'LogMessage',
      'PROTOCOL_VERSION',
      'PurgeReplySchema',
      'RunReplySchema',
      'S3Config',
      'ScalingReplySchema',
      'ServerMessage',
      'StreamReplySchema',
      'WORKER_ID_RE',
      'WORKER_WS_PATH',
      'WebhookEvent',
      'WelcomeMessage',
      'WorkerMessage',
      'decode',
      'decodeJobRequest',
      'decodeServerMessage',
      'decodeWorkerMessage',
      'describeValue',
      'isTerminal',
      'runpodWorkerEnv',
      'toErrorBody',
    ]);
    // Socket corking (reads ws's private `_socket`) and the CLI's UsageError are not part of the contract.
    expect(root).not.toHaveProperty('sendCoalesced');
    expect(root).not.toHaveProperty('UsageError');
    expect(root).not.toHaveProperty('createLogger');
    expect(root).not.toHaveProperty('startTracing');
  });

  it('the logger is @berth/protocol/log and tracing @berth/protocol/tracing', async () => {
    expect(Object.keys(await import('@berth/protocol/log')).sort()).toEqual([
      'LOG_FORMATS',
      'LOG_LEVELS',
      'createLogger',
      'errorText',
      'isLogFormat',
      'isLogLevel',
      'safeJson',
      'silentLogger',
    ]);
    expect(Object.keys(await import('@berth/protocol/tracing')).sort()).toEqual([
      'berthTracer',
      'formatTraceparent',
      'parseTraceparent',
      'startTracing',
      'stopTracing',
    ]);
  });

  it("socket corking and the CLI's log line helpers are only in the internal subpath", async () => {
    expect(Object.keys(await import('@berth/protocol/internal')).sort()).toEqual([
      'lineBatcher',
      'parseJsonLogLine',
      'prettyLine',
      'sendCoalesced',
    ]);
  });
});
