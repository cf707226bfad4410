import type { Logger } from '@berth/protocol/log';
import type { RouteContext } from '../routes/route-context.js';

/** What an OpenAI route handler gets. */
export interface OpenAiContext extends RouteContext {
  logger: Logger;
}
