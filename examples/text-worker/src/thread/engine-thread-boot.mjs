// Entry of the engine thread. The sample worker runs from TypeScript sources (`node --import tsx`), and Node 20
// does not hand module hooks to worker threads: register tsx here, then load the thread module.
import { register } from 'tsx/esm/api';

register();
await import('./engine-thread.ts');
