// Calls this project's endpoint with @berth/client, typed by the handler's type (a type-only import: no worker code
// runs here). With `BERTH_API_KEY=dev-key npm run dev` running: `BERTH_API_KEY=dev-key npx tsx src/client.ts`.
import { readFileSync } from 'node:fs';
import { createClient } from '@berth/client';
import type { handler } from './handler.js';

const config = JSON.parse(readFileSync(new URL('../berth.config.json', import.meta.url), 'utf8'));
const baseUrl = process.env.BERTH_API_URL ?? 'http://127.0.0.1:8080/v2';
const berth = createClient({ baseUrl, apiKey: process.env.BERTH_API_KEY });
const story = berth.endpoint<typeof handler>(Object.keys(config.endpoints)[0]!);

const { id } = await story.run({ prompt: 'Once upon a time', max_new_tokens: 24 });
// Chunks as the model writes them (typed { text: string }); a dropped connection resumes where it left off.
for await (const chunk of story.stream(id)) process.stdout.write(chunk.text);
process.stdout.write('\n');
