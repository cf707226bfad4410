/**
 * @berth/cli: the `berth` binary (`berth dev`, `berth serve`) and the typed config helper.
 *
 * @example
 * // berth.config.ts
 * import { defineConfig } from '@berth/cli';
 * export default defineConfig({ endpoints: { echo: { worker: './echo.ts' } } });
 */
export { defineConfig, loadConfig, ConfigError } from './config/index.js';
export type { BerthConfig, EndpointConfig, ResolvedConfig, ResolvedEndpoint } from './config/index.js';
