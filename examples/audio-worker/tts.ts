import { start } from '@berth/worker';
import { createEspeakEngine } from './src/engines/espeak.js';
import { createTtsHandler } from './src/handler.js';

// Text-to-speech with espeak-ng (a child process per job); outputs stored by uploadOutput (S3 or the control plane).
start({ handler: createTtsHandler({ engine: createEspeakEngine() }) });
