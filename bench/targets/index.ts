/**
 * The table of targets, in the order they run within each round (A B C A B C ...). To add one, append a
 * `Target` (see ./types.ts and bench/README.md).
 */
import { BERTH_TARGETS } from './berth/index.js';
import { OBSERVE_TARGETS } from './berth/observe.js';
import { BULLMQ_TARGETS } from './bullmq/index.js';
import { POSTGRES_TARGETS } from './berth-postgres/index.js';
import { L0, L1 } from './limits.js';
import { PG_PEER_TARGETS } from './pg-peers/index.js';
import type { Target } from './types.js';

export const TARGETS: Target[] = [
  L0,
  L1,
  ...BERTH_TARGETS,
  ...OBSERVE_TARGETS,
  ...POSTGRES_TARGETS,
  ...PG_PEER_TARGETS,
  ...BULLMQ_TARGETS,
];

export type { Running, Target, Workload } from './types.js';
