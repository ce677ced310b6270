// End-to-end tests of input the lab must survive: a share link whose run
// would take minutes and gigabytes is refused with the setting to change,
// before anything runs; the longest run the budget allows is computed a slice
// at a time, with progress and Stop, whether it comes from a link or from
// storage; an address parameter that merely contains "reset" leaves the saved
// lab alone.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { start, openLab, ready, message, loadBuiltin, shot, engineLink, record } from './helpers.mjs';

/** Near the work budget's line: a day under FOR UPDATE with other services busy (docs/bench.md). */
const BUSY_DAY = {
  format: 'locklab/2', name: 'A busy day', duration_ms: 86_400_000,
  world: { background_queries_per_s: 10 }, strategies: { 'db-lock': {} },
};

/**
 * Runs in the page before its scripts: notes every progress value the
 * pending-run bar shows, and the longest task the page ran (a figure for
 * docs/bench.md, not a test of time).
 */
function watchPending(stored) {
  // A stored lab is put in storage once per tab, so a reload finds it still there.
  if (stored && !sessionStorage.getItem('seeded')) {
    localStorage.setItem('locklab/scenario', stored);
    localStorage.setItem('locklab/strategy', 'db-lock');
    sessionStorage.setItem('seeded', '1');
  }
  window.pendingSeen = [];
  window.longestTaskMs = 0;
  new MutationObserver(() => {
    const bar = document.querySelector('#pending progress');
    if (bar && window.pendingSeen.at(-1) !== bar.value) window.pendingSeen.push(bar.value);
  }).observe(document, { subtree: true, childList: true, attributes: true });
  new PerformanceObserver((list) => {
    for (const entry of list.getEntries()) window.longestTaskMs = Math.max(window.longestTaskMs, entry.duration);
  }).observe({ type: 'longtask', buffered: true });
}

let env;
before(async () => { env = await start(); });
after(async () => { await env?.stop(); });

test('a link to a run over the work budget is refused with the setting to change, and the lab works', async () => {
  // A day of Redlock with a 60 s cron and 64 chunks a report: once a tab crash.
  const scenario = {
    format: 'locklab/1', duration_ms: 86_400_000,
    world: { cron_period_ms: 60_000, report_chunks: 64 }, strategies: { redlock: {} },
  };
  const { page, context, problems } = await openLab(env, { path: `#v=${engineLink({ scenario, strategy: 'redlock' })}` });
  await ready(page);
  const text = await message(page, /could not be opened/);
  assert.match(text, /world\.cron_period_ms: 60000 over 86400 s would have redlock log about \d+ events; the lab runs at most 1000000 per strategy/);
  assert.match(text, /shorten duration_ms to \d+/);
  assert.match(await page.textContent('.scenario-line'), /2 am Saturday/, 'the default lab instead');
  await shot(page, 'hostile-over-budget-link');
  assert.deepEqual(problems, []);
  await context.close();
});

test('a link to the longest run the budget allows runs in slices over the post\'s night, then shows and stores it', async () => {
  const started = Date.now();
  const { page, context, problems } = await openLab(env, {
    path: `#v=${engineLink({ scenario: BUSY_DAY, strategy: 'db-lock' })}`, init: watchPending,
  });
  await ready(page);
  await page.waitForFunction(() => /A busy day/.test(document.querySelector('.scenario-line').textContent));
  const elapsedMs = Date.now() - started;
  assert.equal(await page.locator('#pending').count(), 0, 'the bar goes once the run is shown');
  const seen = await page.evaluate(() => window.pendingSeen);
  assert.ok(seen.length >= 3, `the run was advanced in slices, with progress between: ${seen}`);
  assert.deepEqual([...seen].sort((a, b) => a - b), seen, 'progress only goes forward');
  assert.equal(await page.getAttribute('.lab', 'data-strategy'), 'db-lock');
  const stored = await page.evaluate(() => localStorage.getItem('locklab/scenario'));
  assert.match(stored, /A busy day/, 'stored once its run succeeded');
  record('busy_day_link', { events: 793_536, ready_ms: elapsedMs, longest_task_ms: await page.evaluate(() => window.longestTaskMs) });
  await shot(page, 'hostile-busy-day-shown');
  assert.deepEqual(problems, []);
  await context.close();
});

test('Stop on a long stored run leaves a working lab and the stored lab as it was', async () => {
  const stored = JSON.stringify({ ...BUSY_DAY, name: 'A stored busy day' });
  const { page, context, problems } = await openLab(env, {
    init: watchPending, initArg: stored, pausedClock: true,
  });
  await ready(page);
  // The run goes a slice per timer, and the timers wait for the test's clock
  // (which would run every slice at once: zero-delay timers are all due).
  await page.locator('#pending', { hasText: 'A stored busy day' }).waitFor();
  await shot(page, 'hostile-busy-day-pending');
  await page.click('#stop-run');
  await message(page, /^Stopped before that run was done/);
  await context.clock.runFor(5_000);
  assert.equal(await page.locator('#pending').count(), 0, 'the stopped run stays stopped');
  assert.match(await page.textContent('.scenario-line'), /2 am Saturday/);
  await context.clock.resume();
  assert.match(await page.textContent('.scenario-line'), /2 am Saturday/, 'the post\'s night, working');
  await page.click('#play');
  await page.waitForFunction(() => Number(document.querySelector('.lab').dataset.cursorMs) > 0);
  assert.equal(await page.evaluate(() => localStorage.getItem('locklab/scenario')), stored, 'what the user had is kept');
  await page.reload();
  await ready(page);
  await page.locator('#pending', { hasText: 'A stored busy day' }).waitFor();
  assert.deepEqual(problems, []);
  await context.close();
});

test('a stored lab over the work budget is named, and kept until the user changes the lab', async () => {
  // What a longer budget, or a hand-edited storage, could have left behind.
  const stored = JSON.stringify({
    format: 'locklab/2', name: 'A day of one-second crons', duration_ms: 86_400_000, world: { cron_period_ms: 1000 },
  });
  const { page, context, problems } = await openLab(env, { init: watchPending, initArg: stored });
  await ready(page);
  const text = await message(page, /Your saved lab could not be restored/);
  assert.match(text, /world\.cron_period_ms: 1000 over 86400 s would have \w[\w-]* log about \d+ events/);
  assert.match(await page.textContent('.scenario-line'), /2 am Saturday/);
  assert.equal(await page.evaluate(() => localStorage.getItem('locklab/scenario')), stored, 'kept as it was');
  await page.reload();
  await ready(page);
  await message(page, /Your saved lab could not be restored/);
  await loadBuiltin(page, 'calm-night');
  assert.match(await page.evaluate(() => localStorage.getItem('locklab/scenario')), /A calm night/, 'a change is stored');
  assert.deepEqual(problems, []);
  await context.close();
});

test('a scenario file over the size cap is refused before it is read, and the run is kept', async () => {
  const { page, context, problems } = await openLab(env);
  await ready(page);
  const before = await page.getAttribute('.timeline', 'data-digest');
  await page.setInputFiles('#load-file', {
    name: 'huge.json', mimeType: 'application/json', buffer: Buffer.alloc(4 * 1024 * 1024 + 1, ' '),
  });
  await message(page, /The file huge\.json is larger than 4194304 bytes, the most a scenario may be; it was not read/);
  assert.equal(await page.getAttribute('.timeline', 'data-digest'), before);
  assert.deepEqual(problems, []);
  await context.close();
});

test('a built-in that is not there is named, and the default lab opens', async () => {
  const { page, context, problems } = await openLab(env, { path: '?scenario=no-such-night&strategy=naive' });
  await ready(page);
  await message(page, /The built-in could not be opened: there is no built-in scenario named `no-such-night`/);
  assert.match(await page.textContent('.scenario-line'), /2 am Saturday/);
  assert.equal(await page.getAttribute('.lab', 'data-strategy'), 'naive');
  assert.deepEqual(problems, []);
  await context.close();
});

test('?reset is a parameter of its own: a campaign named "preset" keeps the saved lab', async () => {
  const { page, context, problems } = await openLab(env);
  await ready(page);
  await loadBuiltin(page, 'calm-night');
  await page.goto(`${env.url}?utm_campaign=preset`);
  await ready(page);
  assert.match(await page.textContent('.scenario-line'), /A calm night/, 'the saved lab is still there');
  assert.equal(await page.locator('#message', { hasText: 'reset' }).count(), 0);
  await page.goto(`${env.url}?reset`);
  await ready(page);
  await message(page, /The lab was reset/);
  assert.match(await page.textContent('.scenario-line'), /2 am Saturday/);
  assert.deepEqual(problems, []);
  await context.close();
});
