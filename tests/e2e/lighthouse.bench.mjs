// Lighthouse on the built pages, served compressed from dist/ on localhost:
// performance, accessibility, best practices and SEO, with the audits that
// fell short, under the mobile preset (a phone's screen, simulated slow 4G
// and a 4× slower CPU; Lighthouse's default) or the desktop one. A
// benchmark, not a test: its figures go in docs/web.md with the machine and
// the commit they were measured at.
//
//   node tests/e2e/lighthouse.bench.mjs [--desktop] [page ...]
//   (default pages: every page and the lab's and the story's ?embed views)
//
// Needs what scripts/setup.sh installs (Debian's Chromium, npm's lighthouse)
// and a build in dist/ (scripts/build-web.sh). Uses no network.
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import lighthouse from 'lighthouse';
import desktopConfig from 'lighthouse/core/config/desktop-config.js';
import { serveDist } from './serve.mjs';
import { DIST, CHROMIUM } from './helpers.mjs';

const args = process.argv.slice(2);
const desktop = args.includes('--desktop');
const named = args.filter((arg) => arg !== '--desktop');
const pages = named.length
  ? named
  : ['index.html', 'story.html', 'quiz.html', 'explore.html', 'recorded.html', 'index.html?embed', 'story.html?embed'];
const server = await serveDist(DIST);
const profile = mkdtempSync(join(tmpdir(), 'locklab-lighthouse-'));
const chrome = spawn(CHROMIUM, [
  '--headless=new', '--no-sandbox', '--disable-gpu', '--remote-debugging-port=0', `--user-data-dir=${profile}`,
  '--disable-background-networking', '--disable-component-update', '--disable-sync', '--no-first-run', 'about:blank',
], { stdio: ['ignore', 'ignore', 'pipe'], detached: true });
try {
  // Chromium says which port it took on its standard error.
  const port = await new Promise((resolve, reject) => {
    let said = '';
    chrome.stderr.on('data', (chunk) => {
      said += chunk;
      const found = said.match(/DevTools listening on ws:\/\/127\.0\.0\.1:(\d+)\//);
      if (found) resolve(Number(found[1]));
    });
    chrome.on('exit', (code) => reject(new Error(`chromium exited (${code}): ${said}`)));
  });
  for (const page of pages) {
    const result = await lighthouse(
      `${server.url}${page}`,
      { port, output: 'json', logLevel: 'error' },
      desktop ? desktopConfig : undefined,
    );
    const { categories, audits } = result.lhr;
    const scores = Object.fromEntries(Object.entries(categories).map(([id, category]) => [id, category.score]));
    console.log(`${page} (${desktop ? 'desktop' : 'mobile'}): ${JSON.stringify(scores)}`);
    for (const id of ['first-contentful-paint', 'largest-contentful-paint', 'total-blocking-time', 'cumulative-layout-shift', 'speed-index']) {
      console.log(`  ${id}: ${audits[id].displayValue}`);
    }
    const short = Object.values(audits).filter((audit) => audit.score !== null && audit.score < 1 && audit.scoreDisplayMode !== 'informative' && audit.scoreDisplayMode !== 'manual');
    for (const audit of short) console.log(`  below 1: ${audit.id} (${audit.score}) ${audit.displayValue ?? ''}`);
    const largest = audits['largest-contentful-paint-element']?.details?.items?.[0]?.items?.[0]?.node;
    if (largest) console.log(`  largest paint: ${largest.snippet} (${largest.selector})`);
  }
} finally {
  // Chromium and its helpers (its own process group) write to the profile
  // until they have exited; the removal retries while the last ones go.
  const exited = new Promise((resolve) => { chrome.once('exit', resolve); });
  try {
    process.kill(-chrome.pid);
  } catch {
    // Already gone.
  }
  if (chrome.exitCode === null && chrome.signalCode === null) await exited;
  await server.close();
  rmSync(profile, { recursive: true, force: true, maxRetries: 10 });
}
