/**
 * Default base images of the two Dockerfiles (`ARG BASE_IMAGE` / `ARG CUDA_IMAGE`, override with
 * `docker build --build-arg` or `berth build --base-image`). Node 22 is an LTS line; the CUDA image copies the
 * `node` binary from a pinned Node image (`NODE_IMAGE`) instead of running an unpinned setup script.
 */
export const BASE_IMAGES = {
  cpu: 'node:22-bookworm-slim',
  node: 'node:22.12.0-bookworm-slim',
  cuda: 'nvidia/cuda:12.4.1-cudnn-runtime-ubuntu22.04',
} as const;

/** Docker's default `docker stop` grace, in seconds. */
export const DOCKER_STOP_GRACE_S = 10;
/** Drain deadline baked into images when the config sets none: finishes with Docker's 10 s grace to spare. */
export const IMAGE_DRAIN_TIMEOUT_MS = 7_000;

export interface DockerfileInput {
  endpointId: string;
  /** Whether `node_modules` (installed by `berth build`) is to be copied. */
  hasDependencies: boolean;
  /** Whether onnxruntime-node is among them (the CUDA image then installs its CUDA execution provider). */
  hasOnnxruntime?: boolean;
  variant: 'cpu' | 'cuda';
  /** Debian packages to install (the config's `apt`); tini is added when there are any. */
  apt?: readonly string[];
  /** Worker environment baked into the image (`BERTH_CONCURRENCY`, `BERTH_DRAIN_TIMEOUT_MS`, ...). */
  env?: Readonly<Record<string, string>>;
  /** Default of `ARG BASE_IMAGE` (CPU) or `ARG NODE_IMAGE` (CUDA). */
  baseImage?: string;
  /** Seconds `docker stop` should wait (`--stop-timeout`), written as a label and in the Run line. */
  stopTimeoutS?: number;
}

/**
 * The Dockerfile of a deployable worker folder. Dependencies were installed into the folder by `berth build`
 * (`npm ci` from its package-lock.json) and are only copied: the build never needs the npm registry. The
 * container runs `node worker.mjs`, which connects to the control plane named by `BERTH_URL` with
 * `BERTH_WORKER_TOKEN` (both given at `docker run`).
 */
export function dockerfile(o: DockerfileInput): string {
  const { endpointId, variant } = o;
  const cuda = variant === 'cuda';
  const apt = o.apt ?? [];
  const stop = o.stopTimeoutS ?? DOCKER_STOP_GRACE_S;
  const tag = `${endpointId}-worker${cuda ? ':cuda' : ''}`;
  const init = cuda || apt.length > 0;
  const lines = [
    `# Berth worker for endpoint "${endpointId}" (${cuda ? 'NVIDIA GPU, CUDA 12' : 'CPU'}), written by \`berth build\`.`,
    ...(o.hasDependencies
      ? [
          '# Dependencies are already installed in node_modules (npm ci from package-lock.json): nothing is fetched from npm here.',
        ]
      : []),
    `# Build:  docker build -t ${tag}${cuda ? ' -f Dockerfile.cuda' : ''} .`,
    `# Run:    docker run ${cuda ? '--gpus all ' : ''}${init ? '' : '--init '}--stop-timeout ${stop} -e BERTH_URL=https://berth.example.com -e BERTH_WORKER_TOKEN=<worker token> ${tag}`,
    '# Models: mount them read-only where BERTH_MODELS_DIR points, e.g. -v /srv/models:/models:ro (readable by uid 1000)',
  ];
  if (cuda) {
    lines.push(
      `ARG NODE_IMAGE=${o.baseImage ?? BASE_IMAGES.node}`,
      `ARG CUDA_IMAGE=${BASE_IMAGES.cuda}`,
      // biome-ignore lint/suspicious/noTemplateCurlyInString: a Dockerfile ARG reference, written as it is
      'FROM ${NODE_IMAGE} AS node',
      // biome-ignore lint/suspicious/noTemplateCurlyInString: a Dockerfile ARG reference, written as it is
      'FROM ${CUDA_IMAGE}',
    );
    lines.push(
      '# Node: the binary of the pinned official Node image (an LTS line).',
      'COPY --from=node /usr/local/bin/node /usr/local/bin/node',
    );
    lines.push(
      'RUN apt-get update \\',
      ` && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends ${['ca-certificates', 'tini', ...apt].join(' ')} \\`,
      ' && rm -rf /var/lib/apt/lists/* \\',
      ' && useradd --create-home --uid 1000 node',
    );
  } else {
    // biome-ignore lint/suspicious/noTemplateCurlyInString: a Dockerfile ARG reference, written as it is
    lines.push(`ARG BASE_IMAGE=${o.baseImage ?? BASE_IMAGES.cpu}`, 'FROM ${BASE_IMAGE}');
    if (apt.length) {
      lines.push(
        '# System packages (the config\'s "apt"), and tini to forward signals and reap the processes the handler spawns.',
        'RUN apt-get update \\',
        ` && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends ${['tini', ...apt].join(' ')} \\`,
        ' && rm -rf /var/lib/apt/lists/*',
      );
    }
  }
  // The worker runs as the unprivileged `node` user (uid 1000), owner of /app (model caches may be written there).
  lines.push(
    'WORKDIR /app',
    'RUN chown node:node /app',
    'USER node',
    'ENV NODE_ENV=production NODE_OPTIONS=--enable-source-maps',
  );
  lines.push(`COPY --chown=node:node package.json${o.hasDependencies ? ' package-lock.json' : ''} ./`);
  if (o.hasDependencies) lines.push('COPY --chown=node:node node_modules ./node_modules');
  if (cuda && o.hasOnnxruntime) {
    lines.push(
      "# onnxruntime-node's CUDA 12 execution provider: its own install script, run explicitly at the locked version.",
      'RUN cd node_modules/onnxruntime-node && ONNXRUNTIME_NODE_INSTALL=cuda12 node script/install.js',
    );
  }
  lines.push('COPY --chown=node:node worker.mjs worker.mjs.map ./');
  const env: Record<string, string> = {
    BERTH_ENDPOINT_ID: endpointId,
    BERTH_MODELS_DIR: '/models',
    BERTH_DEVICE: cuda ? 'auto' : 'cpu',
    ...o.env,
  };
  lines.push(
    `ENV ${Object.entries(env)
      .map(([k, v]) => `${k}=${v}`)
      .join(' ')}`,
  );
  lines.push(`LABEL io.berth.endpoint="${endpointId}" io.berth.stop-timeout="${stop}"`);
  lines.push(
    '# BERTH_URL and BERTH_WORKER_TOKEN come from `docker run -e`; SIGTERM drains running jobs (BERTH_DRAIN_TIMEOUT_MS), then hands the rest back.',
  );
  lines.push('STOPSIGNAL SIGTERM');
  if (init) lines.push('ENTRYPOINT ["/usr/bin/tini", "--"]');
  lines.push('CMD ["node", "worker.mjs"]', '');
  return lines.join('\n');
}

/** `.dockerignore`: only what the image needs goes into the build context. */
export const DOCKERIGNORE = [
  '*',
  '!package.json',
  '!package-lock.json',
  '!node_modules',
  '!worker.mjs',
  '!worker.mjs.map',
  '',
].join('\n');

/** What `berth build` reads from a load-balancing endpoint's own Dockerfile (its final stage). */
export interface ExposeCheck {
  /** TCP ports of its `EXPOSE` lines. */
  ports: number[];
  /** The worker's port: `ENV PORT`, else the first exposed port; undefined when neither is there. */
  port: number | undefined;
  /** What is wrong, one sentence each; empty when the image exposes the port its server listens on. */
  problems: string[];
}

/**
 * Checks that a load-balancing worker's Dockerfile `EXPOSE`s the port its server listens on (`ENV PORT`, and
 * `ENV PORT_HEALTH` when set): RunPod's "Expose HTTP Ports" and the Kubernetes Service need it. Reads the final
 * stage only; `$VAR` / `${VAR}` in `EXPOSE` resolve from that stage's `ENV` and the `ARG` defaults.
 */
export function checkExpose(text: string): ExposeCheck {
  const vars = new Map<string, string>();
  let ports: number[] = [];
  const problems: string[] = [];
  const lines = text.replace(/\\\r?\n/g, ' ').split(/\r?\n/);
  for (const line of lines.map((l) => l.trim()).filter((l) => l && !l.startsWith('#'))) {
    const [keyword = '', ...rest] = line.split(/\s+/);
    const kw = keyword.toUpperCase();
    if (kw === 'FROM') {
      ports = [];
      for (const k of [...vars.keys()]) if (!k.startsWith('arg:')) vars.delete(k);
    } else if (kw === 'ARG' || kw === 'ENV') {
      const pairs = rest.some((r) => r.includes('='))
        ? rest.map((r) => r.split('=', 2) as [string, string?])
        : [[rest[0] ?? '', rest.slice(1).join(' ') || undefined] as [string, string?]];
      for (const [k, v] of pairs)
        if (v !== undefined) vars.set(kw === 'ARG' ? `arg:${k}` : k, v.replace(/^["']|["']$/g, ''));
    } else if (kw === 'EXPOSE') {
      for (const raw of rest) {
        const value = raw.replace(/\$\{?(\w+)\}?/g, (_, v: string) => vars.get(v) ?? vars.get(`arg:${v}`) ?? `$${v}`);
        const m = /^(\d+)(?:\/(tcp|udp))?$/i.exec(value);
        if (!m) problems.push(`EXPOSE ${raw}: not a port number (a variable it names has no value in the Dockerfile)`);
        else if (m[2]?.toLowerCase() !== 'udp') ports.push(Number(m[1]));
      }
    }
  }
  const env = (k: string) => {
    const v = vars.get(k);
    return v !== undefined && /^\d+$/.test(v) ? Number(v) : undefined;
  };
  const envPort = env('PORT');
  if (!ports.length)
    problems.push(
      `no EXPOSE: add \`EXPOSE ${envPort ?? '<port>'}\`, the port the server listens on (PORT); RunPod's "Expose HTTP Ports" and the Kubernetes Service need it`,
    );
  for (const k of ['PORT', 'PORT_HEALTH'])
    if (ports.length && env(k) !== undefined && !ports.includes(env(k)!))
      problems.push(
        `ENV ${k}=${env(k)} is not exposed (EXPOSE ${ports.join(' ')}): expose the port the server listens on`,
      );
  return { ports, port: envPort ?? ports[0], problems };
}
