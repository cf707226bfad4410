import { start } from '@berth/worker';
import { chooseEngine } from './src/engines/choose.js';
import { createTtsHandler } from './src/handler.js';
import { exitUnlessProgramsInstalled } from './src/startup-check.js';

// Text-to-speech: espeak-ng (a child process per job), or a transformers.js model named by $TTS_MODEL.
// Outputs are stored by uploadOutput (the job's s3Config, BUCKET_* variables, else the control plane).
// Checked before connecting: without them every job would fail (spawn ENOENT).
exitUnlessProgramsInstalled();
start({ handler: createTtsHandler({ engine: chooseEngine() }) });
