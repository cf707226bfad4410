// @ts-check
// Copy-ready request code for /run and /runsync with the current input: curl, JavaScript fetch, @berth/client,
// the runpod-sdk client, Python requests. The key is always the BERTH_API_KEY environment variable, never the real one.

/** @type {[lang: string, label: string][]} */
export const LANGUAGES = [
  ['curl', 'curl'],
  ['fetch', 'JavaScript fetch'],
  ['client', '@berth/client'],
  ['sdk', 'runpod-sdk'],
  ['python', 'Python requests'],
];

/** @param {string} s */
const shellQuote = (s) => `'${s.replace(/'/g, `'\\''`)}'`;

/**
 * A Python literal for a JSON value.
 *
 * @param {unknown} value
 * @param {string} [indent]
 * @returns {string}
 */
function py(value, indent = '') {
  if (value === null) return 'None';
  if (value === true) return 'True';
  if (value === false) return 'False';
  if (typeof value === 'number') return Number.isFinite(value) ? String(value) : 'None';
  if (typeof value === 'string') return JSON.stringify(value);
  const inner = `${indent}    `;
  if (Array.isArray(value))
    return value.length ? `[\n${value.map((v) => inner + py(v, inner)).join(',\n')},\n${indent}]` : '[]';
  const entries = Object.entries(/** @type {object} */ (value));
  return entries.length
    ? `{\n${entries.map(([k, v]) => `${inner}${JSON.stringify(k)}: ${py(v, inner)}`).join(',\n')},\n${indent}}`
    : '{}';
}

/**
 * `{run, runsync}` code for language `lang`, endpoint (or model slug) `target`, base URL `origin`.
 *
 * @param {string} lang
 * @param {string} origin
 * @param {string} target
 * @param {unknown} input
 * @returns {{ run: string, runsync: string }}
 */
export function snippets(lang, origin, target, input) {
  const base = `${origin}/v2/${target}`;
  const body = JSON.stringify({ input });
  const pretty = JSON.stringify(input, null, 2);
  switch (lang) {
    case 'curl':
      return {
        runsync: `curl -s -X POST ${shellQuote(`${base}/runsync`)} \\\n  -H "Authorization: Bearer $BERTH_API_KEY" \\\n  -H 'Content-Type: application/json' \\\n  -d ${shellQuote(body)}`,
        run:
          `ID=$(curl -s -X POST ${shellQuote(`${base}/run`)} \\\n  -H "Authorization: Bearer $BERTH_API_KEY" \\\n  -H 'Content-Type: application/json' \\\n  -d ${shellQuote(body)} | sed 's/.*"id":"\\([^"]*\\)".*/\\1/')\n` +
          `curl -s "${base}/status-sync/$ID?wait=60000" -H "Authorization: Bearer $BERTH_API_KEY"`,
      };
    case 'fetch': {
      const head = `const headers = { Authorization: \`Bearer \${process.env.BERTH_API_KEY}\`, 'Content-Type': 'application/json' };\nconst input = ${pretty};\n`;
      return {
        runsync: `${head}const res = await fetch('${base}/runsync', { method: 'POST', headers, body: JSON.stringify({ input }) });\nconsole.log(await res.json());`,
        run:
          `${head}const { id } = await (await fetch('${base}/run', { method: 'POST', headers, body: JSON.stringify({ input }) })).json();\n` +
          `let job;\ndo {\n  await new Promise((r) => setTimeout(r, 500));\n  job = await (await fetch(\`${base}/status/\${id}\`, { headers })).json();\n} while (job.status === 'IN_QUEUE' || job.status === 'IN_PROGRESS');\nconsole.log(job);`,
      };
    }
    case 'client': {
      const head = `import { createClient } from '@berth/client';\n\nconst berth = createClient({ baseUrl: '${origin}/v2', apiKey: process.env.BERTH_API_KEY });\nconst endpoint = berth.endpoint('${target}');\nconst input = ${pretty};\n`;
      return {
        runsync: `${head}console.log(await endpoint.runSync(input));`,
        run:
          `${head}const { id } = await endpoint.run(input);\n` +
          `// A streaming endpoint: for await (const chunk of endpoint.stream(id)) console.log(chunk);\nconsole.log(await endpoint.wait(id));`,
      };
    }
    case 'sdk': {
      const head = `import runpodSdk from 'runpod-sdk';\n\nconst endpoint = runpodSdk(process.env.BERTH_API_KEY, { baseUrl: '${origin}/v2' }).endpoint('${target}');\nconst input = ${pretty};\n`;
      return {
        runsync: `${head}console.log(await endpoint.runSync({ input }));`,
        run: `${head}const { id } = await endpoint.run({ input });\nlet job;\ndo {\n  await new Promise((r) => setTimeout(r, 500));\n  job = await endpoint.status(id);\n} while (job.status === 'IN_QUEUE' || job.status === 'IN_PROGRESS');\nconsole.log(job);`,
      };
    }
    default: {
      const head = `import os\nimport time\nimport requests\n\nBASE = "${base}"\nHEADERS = {"Authorization": f"Bearer {os.environ['BERTH_API_KEY']}"}\npayload = ${py(input)}\n`;
      return {
        runsync: `${head}print(requests.post(f"{BASE}/runsync", headers=HEADERS, json={"input": payload}, timeout=120).json())`,
        run:
          `${head}job = requests.post(f"{BASE}/run", headers=HEADERS, json={"input": payload}, timeout=30).json()\n` +
          `while job["status"] in ("IN_QUEUE", "IN_PROGRESS"):\n    time.sleep(0.5)\n    job = requests.get(f"{BASE}/status/{job['id']}", headers=HEADERS, timeout=30).json()\nprint(job)`,
      };
    }
  }
}

/**
 * Copies text with navigator.clipboard; otherwise selects it so Ctrl+C works. Returns whether it was copied.
 *
 * @param {string} text
 * @param {Node} pre the element showing it
 * @returns {Promise<boolean>}
 */
export async function copyText(text, pre) {
  try {
    await navigator.clipboard.writeText(text);
    return true;
  } catch {
    const range = document.createRange();
    range.selectNodeContents(pre);
    // null in a frame that is not rendered (Firefox): nothing to select, and execCommand copies nothing.
    const sel = getSelection();
    sel?.removeAllRanges();
    sel?.addRange(range);
    try {
      return document.execCommand('copy');
    } catch {
      return false;
    }
  }
}
