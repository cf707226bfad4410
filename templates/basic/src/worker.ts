import { start } from '@berth/worker';
import { handler, Input } from './handler.js';

// Serves jobs from the control plane at BERTH_URL (berth dev sets it); without it, runs test_input.json once.
// `inputSchema` fails bad inputs before the handler runs and gives the playground (http://127.0.0.1:8080/) a form.
start({ handler, inputSchema: Input });
