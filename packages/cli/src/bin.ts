#!/usr/bin/env node
import { main } from './cli.js';

const code = await main(process.argv.slice(2));
// Long-running commands have closed everything by now; exit explicitly so a stray handle cannot keep us alive.
process.exit(code);
