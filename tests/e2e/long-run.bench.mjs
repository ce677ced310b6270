// A benchmark, not a test (docs/bench.md): opens a share link to the longest
// run the work budget allows (a day under FOR UPDATE with other services
// busy) and prints when it was shown, the Chromium renderer's peak memory and
// the page's long tasks. `compare` as the argument opens it in compare view.
//
//   bash scripts/build-web.sh && node tests/e2e/long-run.bench.mjs [compare]
import { readFileSync, readdirSync } from 'node:fs';
import { start, openLab, ready, engineLink } from './helpers.mjs';

const BUSY_DAY = {
  format: 'locklab/2', name: 'A busy day', duration_ms: 86_400_000,
  world: { background_queries_per_s: 10 }, strategies: { 'db-lock': {} },
};
const view = process.argv[2] === 'compare' ? 'compare' : 'single';

/** The highest peak resident memory of this machine's Chromium renderers, in MB. */
function rendererPeakMb() {
  let peakKb = 0;
  for (const pid of readdirSync('/proc').filter((entry) => /^\d+$/.test(entry))) {
    try {
      if (!readFileSync(`/proc/${pid}/cmdline`, 'utf8').includes('--type=renderer')) continue;
      const match = /VmHWM:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
      peakKb = Math.max(peakKb, Number(match?.[1] ?? 0));
    } catch {
      // A process that ended while being read.
    }
  }
  return Math.round(peakKb / 1024);
}

const env = await start();
try {
  const started = Date.now();
  const { page, context } = await openLab(env, {
    path: `#v=${engineLink({ scenario: BUSY_DAY, strategy: 'db-lock', view })}`,
    init: () => {
      window.longTasks = [];
      new PerformanceObserver((list) => {
        for (const entry of list.getEntries()) window.longTasks.push([Math.round(entry.startTime), Math.round(entry.duration)]);
      }).observe({ type: 'longtask', buffered: true });
    },
  });
  await ready(page);
  await page.waitForFunction(() => /A busy day/.test(document.querySelector('.scenario-line').textContent), null, { timeout: 120_000 });
  const shownMs = Date.now() - started;
  const longTasks = await page.evaluate(() => window.longTasks);
  console.log(JSON.stringify({ view, shown_after_ms: shownMs, renderer_peak_mb: rendererPeakMb(), long_tasks_at_ms_for_ms: longTasks }));
  await context.close();
} finally {
  await env.stop();
}
