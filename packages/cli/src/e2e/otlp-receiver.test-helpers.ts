import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

/** One span as an OTLP/HTTP JSON export carries it, with its resource's `service.name`. */
export interface ReceivedSpan {
  service: string;
  traceId: string;
  spanId: string;
  parentSpanId: string;
  name: string;
  kind: number;
  startNs: bigint;
  endNs: bigint;
  attributes: Record<string, unknown>;
  status: { code?: number; message?: string };
}

interface OtlpAttribute {
  key: string;
  value: { stringValue?: string; intValue?: string | number; boolValue?: boolean; doubleValue?: number };
}
interface OtlpSpan {
  traceId: string;
  spanId: string;
  parentSpanId?: string;
  name: string;
  kind: number;
  startTimeUnixNano: string;
  endTimeUnixNano: string;
  attributes?: OtlpAttribute[];
  status?: { code?: number; message?: string };
}
interface OtlpExport {
  resourceSpans: { resource?: { attributes?: OtlpAttribute[] }; scopeSpans: { spans?: OtlpSpan[] }[] }[];
}

const attrs = (list: OtlpAttribute[] | undefined): Record<string, unknown> =>
  Object.fromEntries(
    (list ?? []).map(({ key, value }) => [
      key,
      value.stringValue ??
        (value.intValue !== undefined ? Number(value.intValue) : (value.boolValue ?? value.doubleValue)),
    ]),
  );

/**
 * A real OTLP/HTTP trace receiver (JSON encoding, `POST /v1/traces`) on 127.0.0.1, port 0: decodes every export
 * into `spans`. Anything else answers 404; a body that is not OTLP JSON answers 400 and is counted in `refused`.
 */
export class OtlpReceiver implements AsyncDisposable {
  readonly spans: ReceivedSpan[] = [];
  refused = 0;
  private constructor(
    private readonly server: Server,
    readonly url: string,
  ) {}

  static async start(): Promise<OtlpReceiver> {
    let receiver!: OtlpReceiver;
    const server = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        if (req.method !== 'POST' || req.url !== '/v1/traces') return void res.writeHead(404).end();
        try {
          if (!String(req.headers['content-type']).startsWith('application/json')) throw new Error('not JSON');
          receiver.add(JSON.parse(Buffer.concat(chunks).toString('utf8')) as OtlpExport);
          res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
        } catch {
          receiver.refused++;
          res.writeHead(400).end();
        }
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const { port } = server.address() as AddressInfo;
    receiver = new OtlpReceiver(server, `http://127.0.0.1:${port}`);
    return receiver;
  }

  private add(body: OtlpExport): void {
    for (const rs of body.resourceSpans) {
      const service = String(attrs(rs.resource?.attributes)['service.name']);
      for (const ss of rs.scopeSpans)
        for (const s of ss.spans ?? [])
          this.spans.push({
            service,
            traceId: s.traceId,
            spanId: s.spanId,
            parentSpanId: s.parentSpanId ?? '',
            name: s.name,
            kind: s.kind,
            startNs: BigInt(s.startTimeUnixNano),
            endNs: BigInt(s.endTimeUnixNano),
            attributes: attrs(s.attributes),
            status: s.status ?? {},
          });
    }
  }

  async [Symbol.asyncDispose](): Promise<void> {
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }
}
