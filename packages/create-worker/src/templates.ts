/** A project template: a folder under `templates/` plus what create-worker needs to know about it. */
export interface Template {
  /** `--template <name>`, and the folder name under `templates/`. */
  name: string;
  /** One line shown in the interactive picker and in --help. */
  description: string;
  /** Extra next steps for the README and the final message (models to fetch, ...). */
  notes: string[];
  /** Environment for `npm install` (native packages that download binaries). */
  installEnv: Record<string, string>;
  /**
   * The generated package.json's `allowScripts` (npm 11 runs only the install scripts it allows). Written by the
   * scaffold, not kept in the template's own package.json: in this repository the templates are workspace members,
   * where npm ignores the field and warns on every install.
   */
  allowScripts: Readonly<Record<string, boolean>>;
  /** `http`: a load-balancing worker (its own HTTP server, docs/load-balancing.md); a queue handler otherwise. */
  kind?: 'http';
}

/** better-sqlite3 (the dev server's SQLite store) and esbuild (`berth build`) build or fetch their binaries. */
const BERTH_SCRIPTS = { 'better-sqlite3': true, esbuild: true };
/**
 * The model templates add sharp (its prebuilt binary); onnxruntime-node's script would download CUDA libraries
 * (its CPU build ships in the package) and protobufjs's is not needed.
 */
const MODEL_SCRIPTS = { ...BERTH_SCRIPTS, 'onnxruntime-node': false, sharp: true, protobufjs: false };

/** Every template, in the order the picker lists them. The first is the default. */
export const TEMPLATES: readonly Template[] = [
  {
    name: 'basic',
    description: 'greeting handler: zod input validation, progress, a test with runJob',
    notes: [],
    installEnv: {},
    allowScripts: BERTH_SCRIPTS,
  },
  {
    name: 'text',
    description: 'text generation, streamed token by token (stories260K, @huggingface/transformers, CPU)',
    notes: [
      'The model is read from $BERTH_MODELS_DIR/stories260K (a folder with config.json, tokenizer.json and onnx/model.onnx).',
      'Set BERTH_MODELS_DIR before `npm run dev` / `npm test`.',
    ],
    installEnv: { ONNXRUNTIME_NODE_INSTALL_CUDA: 'skip' },
    allowScripts: MODEL_SCRIPTS,
  },
  {
    name: 'image',
    description: 'text to image (tiny-sd, onnxruntime-node + sharp, CPU), returns a base64 PNG',
    notes: [
      'The model is read from $BERTH_MODELS_DIR/tiny-sd (text_encoder, unet, vae_decoder ONNX files and the tokenizer).',
      'Set BERTH_MODELS_DIR before `npm run dev` / `npm test`.',
    ],
    installEnv: { ONNXRUNTIME_NODE_INSTALL_CUDA: 'skip' },
    allowScripts: MODEL_SCRIPTS,
  },
  {
    name: 'http',
    description: 'load-balancing worker: a plain Node HTTP server (/ping, /generate), also a RunPod LB endpoint',
    notes: [],
    installEnv: {},
    allowScripts: BERTH_SCRIPTS,
    kind: 'http',
  },
];

/** Files renamed on copy: npm drops a `.gitignore` from published packages, so templates ship `_gitignore`. */
export const RENAME: Readonly<Record<string, string>> = { _gitignore: '.gitignore' };

/** Never copied from a template folder. */
export const SKIP = new Set(['node_modules', 'build', 'dist', '.berth', 'README.md']);

/** The endpoint id the templates' berth.config.json uses; replaced by one made from the project name. */
export const TEMPLATE_ENDPOINT = 'my-worker';
