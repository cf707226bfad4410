import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:https';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseServeArgs } from '../commands/serve.js';
import { DockerApi, dockerAddress } from './docker-api.js';

const scale = (argv: string[], env: NodeJS.ProcessEnv = {}) => parseServeArgs(argv, env, '/p').scale;

describe('dockerAddress (DOCKER_HOST)', () => {
  it('unix socket by default or as named, tcp on loopback; anything else is refused', () => {
    expect(dockerAddress({})).toEqual({ socketPath: '/var/run/docker.sock' });
    expect(dockerAddress({ DOCKER_HOST: 'unix:///tmp/d.sock' })).toEqual({ socketPath: '/tmp/d.sock' });
    expect(dockerAddress({ DOCKER_HOST: 'tcp://127.0.0.1:2375' })).toEqual({ host: '127.0.0.1', port: 2375 });
    expect(dockerAddress({ DOCKER_HOST: 'tcp://[::1]:2375' })).toEqual({ host: '::1', port: 2375 });
    expect(() => dockerAddress({ DOCKER_HOST: 'ssh://me@box' })).toThrow(/expected unix:\/\/\/path/);
    // berth serve --scale docker refuses it at once, as a usage error (exit 2).
    expect(() => scale(['--scale', 'docker'], { DOCKER_HOST: 'ssh://me@box' })).toThrow(
      'DOCKER_HOST=ssh://me@box: expected unix:///path/to/docker.sock or tcp://host:port',
    );
  });

  it('a remote daemon over plain TCP is refused (tokens in clear text) unless BERTH_DOCKER_INSECURE=1', () => {
    expect(() => scale(['--scale', 'docker'], { DOCKER_HOST: 'tcp://10.0.0.5:2375' })).toThrow(
      /DOCKER_HOST=tcp:\/\/10\.0\.0\.5:2375 is not a loopback address and has no TLS: worker tokens would cross the network in clear text\. Set DOCKER_TLS_VERIFY=1 and DOCKER_CERT_PATH/,
    );
    expect(dockerAddress({ DOCKER_HOST: 'tcp://10.0.0.5:2375', BERTH_DOCKER_INSECURE: '1' })).toEqual({
      host: '10.0.0.5',
      port: 2375,
    });
    // DOCKER_CERT_PATH alone is not ignored silently.
    expect(() => dockerAddress({ DOCKER_HOST: 'tcp://127.0.0.1:2376', DOCKER_CERT_PATH: '/certs' })).toThrow(
      /DOCKER_CERT_PATH is set but DOCKER_TLS_VERIFY is not/,
    );
    expect(() =>
      dockerAddress({ DOCKER_HOST: 'tcp://box:2376', DOCKER_TLS_VERIFY: '1', DOCKER_CERT_PATH: '/nonexistent' }),
    ).toThrow(/DOCKER_TLS_VERIFY is set but \/nonexistent\/ca\.pem cannot be read/);
  });
});

describe('DockerApi over TLS (DOCKER_TLS_VERIFY, DOCKER_CERT_PATH)', () => {
  let dir = '';
  let port = 0;
  const seen: string[] = [];
  let server: ReturnType<typeof createServer>;

  beforeAll(async () => {
    // A CA, a server certificate for 127.0.0.1 and a client certificate, as `docker` expects them in a folder.
    dir = mkdtempSync(join(tmpdir(), 'berth-docker-tls-'));
    const ssl = (...args: string[]) => execFileSync('openssl', args, { cwd: dir, stdio: 'pipe' });
    const ec = ['-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes'];
    ssl('req', '-x509', ...ec, '-keyout', 'ca-key.pem', '-out', 'ca.pem', '-days', '1', '-subj', '/CN=test-ca');
    writeFileSync(join(dir, 'server.ext'), 'subjectAltName=IP:127.0.0.1\n');
    writeFileSync(join(dir, 'client.ext'), 'extendedKeyUsage=clientAuth\n');
    for (const [who, key, cert] of [
      ['server', 'server-key.pem', 'server-cert.pem'],
      ['client', 'key.pem', 'cert.pem'],
    ] as const) {
      ssl('req', ...ec, '-keyout', key, '-out', `${who}.csr`, '-subj', `/CN=${who}`);
      const ca = ['-CA', 'ca.pem', '-CAkey', 'ca-key.pem', '-CAcreateserial'];
      ssl('x509', '-req', '-in', `${who}.csr`, ...ca, '-out', cert, '-days', '1', '-extfile', `${who}.ext`);
    }
    const read = (f: string) => readFileSync(join(dir, f));
    server = createServer(
      { key: read('server-key.pem'), cert: read('server-cert.pem'), ca: read('ca.pem'), requestCert: true },
      (req, res) => {
        seen.push(`${req.method} ${req.url} client=${(req.socket as import('node:tls').TLSSocket).authorized}`);
        res.writeHead(200, { 'content-type': 'text/plain' }).end('OK');
      },
    );
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    port = (server.address() as AddressInfo).port;
  });
  afterAll(async () => {
    await new Promise((r) => server?.close(r));
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it('speaks TLS with the client certificate and checks the daemon against ca.pem', async () => {
    const api = new DockerApi({
      DOCKER_HOST: `tcp://127.0.0.1:${port}`,
      DOCKER_TLS_VERIFY: '1',
      DOCKER_CERT_PATH: dir,
    });
    expect(api.describe()).toBe(`tcp://127.0.0.1:${port} (TLS)`);
    await api.ping();
    expect(seen).toEqual(['GET /v1.41/_ping client=true']);
    // Plain HTTP to the same port is not an answer (the daemon speaks TLS only).
    await expect(new DockerApi({ DOCKER_HOST: `tcp://127.0.0.1:${port}` }).ping()).rejects.toThrow();
  });
});
