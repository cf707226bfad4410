#!/usr/bin/env node
// The `create-worker` binary: a committed launcher so npm links it at install time, before dist/ is built.
import { main } from '../dist/index.js';

process.exitCode = await main(process.argv.slice(2));
