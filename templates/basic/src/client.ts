// Calls this project's endpoint with @berth/client, typed by the handler's type (a type-only import: no worker code
// runs here). With `BERTH_API_KEY=dev-key npm run dev` running: `BERTH_API_KEY=dev-key npx tsx src/client.ts`.
import { readFileSync } from 'node:fs';
import { createClient } from '@berth/client';
import type { handler } from './handler.js';

const config = JSON.parse(readFileSync(new URL('../berth.config.json', import.meta.url), 'utf8'));
const baseUrl = process.env.BERTH_API_URL ?? 'http://127.0.0.1:8080/v2';
const berth = createClient({ baseUrl, apiKey: process.env.BERTH_API_KEY });
const greet = berth.endpoint<typeof handler>(Object.keys(config.endpoints)[0]!);

const job = await greet.runSync({ name: 'Berth', times: 2 }); // the input is checked against the handler's `Input`
if (job.status !== 'COMPLETED') throw new Error(`job ${job.status}: ${job.error}`);
console.log(job.output?.greetings.join('\n')); // the output is typed: { greetings: string[] }
