import { start } from '@berth/worker';
import { handler } from './handler.js';

// Serves jobs from the control plane at BERTH_URL (berth dev sets it); without it, runs test_input.json once.
start({ handler });
