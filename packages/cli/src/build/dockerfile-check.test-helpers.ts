import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { DockerfileParser } from 'dockerfile-ast';

// The tests' check of the Dockerfiles `berth build` writes (dockerfile-ast is a devDependency: the CLI does not
// parse its own output at run time; the build tests and the image tests check it).

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
  // Only ARGs (the base image's name) may come before the first FROM.
  if (instructions.find((i) => i !== 'ARG') !== 'FROM') problems.push('the first instruction is not FROM');
  if (!instructions.includes('CMD')) problems.push('no CMD');
  for (const copy of parsed.getCOPYs()) {
    const args = copy.getArguments().map((a) => a.getValue());
    if (copy.getFlags().some((f) => f.getName() === 'from')) continue; // from another stage or image, not the context
    for (const src of args.slice(0, -1)) {
      if (src.startsWith('--')) continue;
      if (!existsSync(join(contextDir, src))) problems.push(`COPY ${src}: not found in ${contextDir}`);
    }
  }
  return { instructions, problems };
}
