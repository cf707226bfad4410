// `berth.config.*`: the file's types (types.ts), its validation and defaults (resolve.ts), finding and loading it
// (load.ts), the GPUs it hands out (gpu-inventory.ts).
export { ConfigError } from '@berth/protocol';
export type { BerthConfig, EndpointConfig, ResolvedConfig, ResolvedEndpoint } from './types.js';
export { defineConfig } from './types.js';
export { resolveConfig, splitCommand } from './resolve.js';
export { gpuInventory } from './gpu-inventory.js';
export { checkWorkerFiles, DEFAULT_CONFIG_FILES, findConfigFile, loadConfig } from './load.js';
