import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { DockerfileParser } from 'dockerfile-ast';

/** Base images of the two Dockerfiles `berth build` writes. */
export const BASE_IMAGES = {
  cpu: 'node:20-bookworm-slim',
  cuda: 'nvidia/cuda:12.4.1-cudnn-runtime-ubuntu22.04',
} as const;

export interface DockerfileInput {
  endpointId: string;
  /** Whether package.json declares dependencies to install (native packages). */
  hasDependencies: boolean;
  variant: 'cpu' | 'cuda';
}

/**
 * The Dockerfile of a deployable worker folder. The container runs `node worker.mjs`, which connects to the
 * control plane named by `BERTH_URL` with `BERTH_WORKER_TOKEN` (both given at `docker run`).
 */
export function dockerfile({ endpointId, hasDependencies, variant }: DockerfileInput): string {
  const lines = [
    `# Berth worker for endpoint "${endpointId}" (${variant === 'cpu' ? 'CPU' : 'NVIDIA GPU, CUDA 12'}), written by \`berth build\`.`,
    `# Build:  docker build -t ${endpointId}-worker${variant === 'cuda' ? ':cuda -f Dockerfile.cuda' : ''} .`,
    `# Run:    docker run ${variant === 'cuda' ? '--gpus all ' : ''}-e BERTH_URL=https://berth.example.com -e BERTH_WORKER_TOKEN=<worker token> ${endpointId}-worker${variant === 'cuda' ? ':cuda' : ''}`,
    `# Models: mount them and point BERTH_MODELS_DIR at them, e.g. -v /srv/models:/models`,
    `FROM ${BASE_IMAGES[variant]}`,
  ];
  if (variant === 'cuda') {
    lines.push(
      'RUN apt-get update \\',
      ' && apt-get install -y --no-install-recommends ca-certificates curl gnupg \\',
      ' && curl -fsSL https://deb.nodesource.com/setup_20.x | bash - \\',
      ' && apt-get install -y --no-install-recommends nodejs \\',
      ' && rm -rf /var/lib/apt/lists/* \\',
      ' && useradd --create-home --uid 1000 node',
    );
  }
  // The worker runs as the unprivileged `node` user, owner of /app (model caches may be written there).
  lines.push('WORKDIR /app', 'RUN chown node:node /app', 'USER node', 'ENV NODE_ENV=production');
  if (variant === 'cpu') lines.push('# CPU image: onnxruntime-node must not fetch its CUDA libraries.', 'ENV ONNXRUNTIME_NODE_INSTALL_CUDA=skip');
  lines.push('COPY --chown=node:node package.json ./');
  if (hasDependencies) lines.push('RUN npm install --omit=dev --no-audit --no-fund && npm cache clean --force');
  lines.push(
    'COPY --chown=node:node worker.mjs worker.mjs.map ./',
    `ENV BERTH_ENDPOINT_ID=${endpointId} BERTH_MODELS_DIR=/models NODE_OPTIONS=--enable-source-maps`,
    '# BERTH_URL and BERTH_WORKER_TOKEN come from `docker run -e`; SIGTERM drains running jobs before exit.',
    'CMD ["node", "worker.mjs"]',
    '',
  );
  return lines.join('\n');
}

/** `.dockerignore`: only what the image needs goes into the build context. */
export const DOCKERIGNORE = ['*', '!package.json', '!worker.mjs', '!worker.mjs.map', ''].join('\n');

export interface DockerfileCheck {
  /** Instruction keywords in order (`FROM`, `WORKDIR`, ...). */
  instructions: string[];
  /** Parser diagnostics and missing files; empty when all is well. */
  problems: string[];
}

/**
 * Parses a Dockerfile (dockerfile-ast) and checks that it has a FROM and a CMD, and that every COPY source
 * exists in `contextDir`.
 *
 * @example checkDockerfile(readFileSync('build/echo/Dockerfile', 'utf8'), 'build/echo').problems // []
 */
export function checkDockerfile(text: string, contextDir: string): DockerfileCheck {
  const parsed = DockerfileParser.parse(text);
  const instructions = parsed.getInstructions().map((i) => i.getKeyword());
  const problems: string[] = [];
  if (instructions[0] !== 'FROM') problems.push('the first instruction is not FROM');
  if (!instructions.includes('CMD')) problems.push('no CMD');
  for (const copy of parsed.getCOPYs()) {
    const args = copy.getArguments().map((a) => a.getValue());
    for (const src of args.slice(0, -1)) {
      if (src.startsWith('--')) continue;
      if (!existsSync(join(contextDir, src))) problems.push(`COPY ${src}: not found in ${contextDir}`);
    }
  }
  return { instructions, problems };
}
