#!/usr/bin/env node
// The `berth` binary: a committed launcher so npm links it at install time, before dist/ is built.
import '../dist/bin.js';
