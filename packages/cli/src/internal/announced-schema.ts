import type { ApiRequest, ApiResponse } from '@berth/server';

/** How long the banner's sample curl waits for the first endpoint's worker to say hello. */
const HELLO_WAIT_MS = 15_000;

/** The input schema the endpoint's first worker announced (from the catalog), once it said hello; else undefined. */
export async function announcedSchema(
  server: { handle(req: ApiRequest): Promise<ApiResponse> },
  apiKey: string,
  endpoint: string,
  hello: Promise<void>,
): Promise<unknown> {
  let timer: NodeJS.Timeout | undefined;
  const said = await Promise.race([
    hello.then(() => true),
    new Promise<false>((r) => {
      timer = setTimeout(() => r(false), HELLO_WAIT_MS);
      timer.unref();
    }),
  ]);
  clearTimeout(timer);
  if (!said) return undefined;
  try {
    const res = await server.handle({
      method: 'GET',
      path: '/v2/_berth/catalog',
      query: new URLSearchParams(),
      headers: { authorization: `Bearer ${apiKey}` },
    });
    const endpoints =
      'json' in res ? (res.json as { endpoints?: { id: string; inputSchema?: unknown }[] }).endpoints : [];
    return endpoints?.find((e) => e.id === endpoint)?.inputSchema ?? undefined;
  } catch {
    return undefined;
  }
}
