// Calls this project's endpoint with @berth/client, typed by the handler's type (a type-only import: no worker code
// runs here). With `BERTH_API_KEY=dev-key npm run dev` running: `BERTH_API_KEY=dev-key npx tsx src/client.ts`.
import { readFileSync, writeFileSync } from 'node:fs';
import { createClient } from '@berth/client';
import type { handler } from './handler.js';

const config = JSON.parse(readFileSync(new URL('../berth.config.json', import.meta.url), 'utf8'));
const baseUrl = process.env.BERTH_API_URL ?? 'http://127.0.0.1:8080/v2';
const berth = createClient({ baseUrl, apiKey: process.env.BERTH_API_KEY });
const draw = berth.endpoint<typeof handler>(Object.keys(config.endpoints)[0]!);

const job = await draw.runSync({ prompt: 'a big red circle on a blue background', seed: 1 });
if (job.status !== 'COMPLETED' || !job.output) throw new Error(`job ${job.status}: ${job.error}`);
writeFileSync('out.png', Buffer.from(job.output.image_base64, 'base64')); // output typed by the handler's return
console.log(`out.png: ${job.output.width}x${job.output.height}, seed ${job.output.seed}`);
