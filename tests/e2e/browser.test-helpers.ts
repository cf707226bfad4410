// Chromium for the playground tests: Debian's /usr/bin/chromium driven by playwright-core (no browser download).
import { execFileSync } from 'node:child_process';
import { rmSync } from 'node:fs';
import { chromium, type Browser, type Page } from 'playwright-core';
import { startBerthDev, type BerthDev, type StartBerthOptions } from './harness.test-helpers.js';

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

/** A playground test's `berth dev`, its Chromium and one page. */
export interface DevPage {
  berth: BerthDev;
  browser: Browser;
  page: Page;
}

/** Starts `berth dev` (`options`) and Chromium together, then opens a 1280x900 page with 15 s waits. */
export async function devWithPage(options: StartBerthOptions): Promise<DevPage> {
  const [berth, browser] = await Promise.all([startBerthDev(options), launchChromium()]);
  const page = await (await browser.newContext({ viewport: { width: 1280, height: 900 } })).newPage();
  page.setDefaultTimeout(15_000);
  return { berth, browser, page };
}

/** Stops what `devWithPage` started (either may be missing when the start failed) and removes the test's `dir`. */
export async function closeDevPage(p: Partial<DevPage>, dir: string | undefined): Promise<void> {
  await p.browser?.close();
  await p.berth?.[Symbol.asyncDispose]();
  if (dir) rmSync(dir, { recursive: true, force: true });
}
