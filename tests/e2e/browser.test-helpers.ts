// Chromium for the playground tests: Debian's /usr/bin/chromium driven by playwright-core (no browser download).
import { execFileSync } from 'node:child_process';
import { chromium, type Browser } from 'playwright-core';

/** Absolute path of a program on the PATH, or undefined. */
export const which = (name: string): string | undefined => {
  try {
    return execFileSync('which', [name], { encoding: 'utf8' }).trim() || undefined;
  } catch {
    return undefined;
  }
};

export const CHROMIUM = which('chromium');
export const CHROMIUM_ARGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-quic',
  '--no-first-run',
  '--disable-sync',
];
/** Why a browser test is skipped, for its title. */
export const NO_CHROMIUM = CHROMIUM ? '' : ' (skipped: no `chromium` on PATH; apt-get install chromium)';

export const launchChromium = (): Promise<Browser> =>
  chromium.launch({ executablePath: CHROMIUM!, args: CHROMIUM_ARGS, timeout: 30_000 });
