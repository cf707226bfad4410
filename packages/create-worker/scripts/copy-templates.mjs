// Before `npm pack`/`npm publish`: the published package carries its own copy of the repository's templates/.
import { cpSync, rmSync } from 'node:fs';

const from = new URL('../../../templates/', import.meta.url);
const to = new URL('../templates/', import.meta.url);
rmSync(to, { recursive: true, force: true });
cpSync(from, to, { recursive: true, filter: (src) => !/node_modules|[\\/]build([\\/]|$)/.test(src) });
