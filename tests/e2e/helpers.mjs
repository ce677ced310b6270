// Shared steps of the end-to-end tests: serve dist/ on an ephemeral localhost
// port, drive Debian's Chromium through playwright-core, and wait for
// conditions (never for fixed times).
import { chromium } from 'playwright-core';
import { mkdirSync, writeFileSync, readFileSync, existsSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { deflateRawSync } from 'node:zlib';
import { serveDist } from './serve.mjs';

/**
 * A v1 share link as engine/src/link.rs writes it: `1.` + base64url (no
 * padding) of raw DEFLATE of the state's JSON (a state object, or its text).
 */
export const engineLink = (state) =>
  `1.${deflateRawSync(Buffer.from(typeof state === 'string' ? state : JSON.stringify(state)), { level: 9 }).toString('base64url')}`;

export const ROOT = resolve(import.meta.dirname, '../..');
export const DIST = process.env.LOCKLAB_DIST ?? join(ROOT, 'dist');
export const SHOTS = join(ROOT, 'tests/screenshots');
export const CHROMIUM = process.env.CHROMIUM ?? '/usr/bin/chromium';
mkdirSync(SHOTS, { recursive: true });

const ARGS = [
  '--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking',
  '--disable-component-update', '--disable-sync', '--no-first-run',
];

/** Starts the server and the browser once per test file. */
export async function start() {
  if (!existsSync(join(DIST, 'index.html'))) throw new Error(`no build in ${DIST}: run trunk build --release`);
  const server = await serveDist(DIST);
  // playwright-core's launch uses a fresh temporary profile (user-data-dir) each time.
  const browser = await chromium.launch({ executablePath: CHROMIUM, args: ARGS });
  return {
    url: server.url,
    browser,
    async stop() {
      await browser.close();
      await server.close();
    },
  };
}

/**
 * Opens the lab in a fresh context (empty storage). Fails the test on any
 * page error, console error, or request that leaves localhost. `init` (a
 * function, with `initArg`) runs in the page before its own scripts, on every
 * load: to put something in storage first, or take storage away.
 */
export async function openLab(env, {
  width = 1400, height = 900, scheme = 'light', path = '', reducedMotion = 'no-preference', init, initArg,
  pausedClock = false,
} = {}) {
  const context = await env.browser.newContext({
    viewport: { width, height }, colorScheme: scheme, reducedMotion, acceptDownloads: true,
  });
  if (init) await context.addInitScript(init, initArg);
  // `pausedClock`: the page's timers fire only when the test moves the clock
  // (`context.clock.runFor`), so work done a timer at a time waits for it.
  if (pausedClock) {
    await context.clock.install({ time: new Date('2026-12-04T02:00:00Z') });
    await context.clock.pauseAt(new Date('2026-12-04T02:00:01Z'));
  }
  const page = await context.newPage();
  const problems = [];
  page.on('pageerror', (error) => problems.push(`page error: ${error}`));
  page.on('console', (message) => {
    if (message.type() === 'error') problems.push(`console error: ${message.text()}`);
  });
  page.on('request', (request) => {
    if (!request.url().startsWith(env.url)) problems.push(`request left the page: ${request.url()}`);
  });
  await page.goto(env.url + path);
  return { page, context, problems };
}

export async function ready(page) {
  await page.waitForSelector('.lab[data-ready="true"]');
}

export const cursorMs = async (page) => Number(await page.getAttribute('.lab', 'data-cursor-ms'));
export const digest = async (page) => page.getAttribute('.timeline', 'data-digest');

/** Waits for the message bar to say something matching `pattern`. */
export async function message(page, pattern) {
  const locator = page.locator('#message .message-text');
  await locator.filter({ hasText: pattern }).waitFor();
  return locator.textContent();
}

/** Opens the lab's "Share · embed · export" disclosure, as a reader does, where its buttons are. */
export async function openShareMenu(page) {
  if ((await page.getAttribute('#share-menu', 'open')) === null) await page.click('#share-menu > summary');
}

/** Clears the message bar, so the next wait sees a new message. */
export async function dismiss(page) {
  if (await page.locator('#message').count()) {
    await page.click('#message button');
    await page.locator('#message').waitFor({ state: 'detached' });
  }
}

export async function loadBuiltin(page, name) {
  await dismiss(page);
  await page.selectOption('#builtin', name);
  await message(page, /^Loaded/);
}

export async function chooseStrategy(page, name) {
  await page.click(`label[for="strategy-${name}"]`);
  await page.waitForSelector(`.lab[data-strategy="${name}"]`);
}

/** Moves the cursor with the keyboard (shift+→ scrubs 1 % of the run), from the timeline. */
export async function scrubPercent(page, percent) {
  await page.focus('.timeline');
  for (let step = 0; step < percent; step++) {
    const before = await cursorMs(page);
    await page.keyboard.press('Shift+ArrowRight');
    await page.waitForFunction((was) => Number(document.querySelector('.lab').dataset.cursorMs) > was, before);
  }
}

/** Sets the GC pause length and pauses the lock holder at the cursor. */
export async function pauseHolder(page, lengthMs) {
  await page.check('#target-holder');
  await page.selectOption('#param-gc_pause_ms', String(lengthMs));
  await page.locator('#inject-gc', { hasText: 'the holder' }).waitFor();
  const before = await digest(page);
  await dismiss(page);
  await page.click('#inject-gc');
  await message(page, /^Injected/);
  await page.waitForFunction((was) => document.querySelector('.timeline').dataset.digest !== was, before);
}

/** Plays at 64× to the end of the run. */
export async function playToEnd(page) {
  await page.selectOption('#speed', { label: '64×' });
  const duration = Number(await page.getAttribute('.timeline', 'aria-valuemax'));
  await page.click('#play');
  await page.waitForSelector(`.lab[data-playing="false"][data-cursor-ms="${duration}"]`, { timeout: 120_000 });
}

/** WCAG contrast of two `[r, g, b]` colours. */
export function contrast(a, b) {
  const luminance = ([r, g, bl]) => {
    const channel = (value) => {
      const c = value / 255;
      return c <= 0.03928 ? c / 12.92 : ((c + 0.055) / 1.055) ** 2.4;
    };
    return 0.2126 * channel(r) + 0.7152 * channel(g) + 0.0722 * channel(bl);
  };
  const [light, dark] = [luminance(a), luminance(b)].sort((x, y) => y - x);
  return (light + 0.05) / (dark + 0.05);
}

/**
 * The page's visible text that misses WCAG AA contrast (4.5:1, large text
 * 3:1) against its blended background, as `ratio: text` lines; and how many
 * texts were sampled. Disabled controls are exempt, as WCAG says.
 */
export async function contrastFailures(page) {
  const samples = await page.evaluate(() => {
    const parse = (text) => (text.match(/[\d.]+/g) ?? []).map(Number);
    const background = (element) => {
      const layers = [];
      for (let node = element; node; node = node.parentElement) {
        const [r, g, b, a = 1] = parse(getComputedStyle(node).backgroundColor);
        if (a > 0) layers.push([r, g, b, a]);
        if (a >= 1) break;
      }
      let color = [255, 255, 255];
      for (const [r, g, b, a] of layers.reverse()) color = [r * a + color[0] * (1 - a), g * a + color[1] * (1 - a), b * a + color[2] * (1 - a)];
      return color;
    };
    const out = [];
    for (const element of document.querySelectorAll('p, span, a, button, label, dt, dd, li, h1, h2, h3, h4, summary, legend, option, th, td, output, strong')) {
      const own = [...element.childNodes].some((node) => node.nodeType === 3 && node.textContent.trim());
      if (!own || !element.getClientRects().length || element.closest('.visually-hidden, svg, :disabled')) continue;
      const style = getComputedStyle(element);
      if (style.clip === 'rect(0px, 0px, 0px, 0px)') continue;
      const size = parseFloat(style.fontSize);
      const large = size >= 24 || (size >= 18.66 && Number(style.fontWeight) >= 700);
      out.push({ text: element.textContent.trim().slice(0, 40), color: parse(style.color), back: background(element), large });
    }
    return out;
  });
  const failures = samples
    .map((sample) => ({ ...sample, ratio: contrast(sample.color, sample.back) }))
    .filter((sample) => sample.ratio < (sample.large ? 3 : 4.5))
    .map((sample) => `${sample.ratio.toFixed(2)}: ${sample.text}`);
  return { failures, sampled: samples.length };
}

export async function shot(page, name) {
  const path = join(SHOTS, `${name}.png`);
  await page.screenshot({ path, fullPage: true });
  return path;
}

/** Records a benchmark figure for docs/web.md. */
export function record(name, value) {
  const file = join(SHOTS, 'bench.json');
  const figures = existsSync(file) ? JSON.parse(readFileSync(file, 'utf8')) : {};
  figures[name] = value;
  writeFileSync(file, JSON.stringify(figures, null, 2));
  console.log(`# bench ${name}: ${JSON.stringify(value)}`);
}

/**
 * Runs axe-core (the engine behind Lighthouse's accessibility audit) in the
 * page, through the driver, so the page's Content-Security-Policy is left as
 * it is; the violations, as `rule: target` lines.
 */
export async function axeViolations(page) {
  const source = readFileSync(join(ROOT, 'node_modules/axe-core/axe.min.js'), 'utf8');
  await page.evaluate(source);
  const result = await page.evaluate(async () => globalThis.axe.run(document, {
    runOnly: { type: 'tag', values: ['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa', 'best-practice'] },
    rules: { 'label-content-name-mismatch': { enabled: true } },
  }));
  return result.violations.flatMap((violation) => violation.nodes.map((node) => `${violation.id}: ${node.target.join(' ')}`));
}
