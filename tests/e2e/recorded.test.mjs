// End-to-end tests of the recorded-run page (recorded.html): it opens on the
// example the site ships, the post's night under the fencing token recorded
// live, says where it was recorded, shows its verdict beside its simulated
// twin's and moves both timelines on one cursor; "Open a recorded run" reads
// a document the reader chooses (a run the lab's engine exports, which has
// no live marker); a document that is not a log is refused by name and what
// was shown stays, and so is a log out of time order or with a run id near
// 4·10⁹, the place named; a recording the machine stalled says it is
// inconclusive; embedded it still says where the run was recorded. At
// 375 px nothing scrolls sideways; axe-core reports no violation. No sleeps:
// every wait is for a condition.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, writeFileSync, mkdtempSync } from 'node:fs';
import { execFileSync } from 'node:child_process';
import { join } from 'node:path';
import { tmpdir } from 'node:os';
import { start, openLab, shot, axeViolations, DIST } from './helpers.mjs';

/** The example the page opens with, as the site ships it. */
const EXAMPLE = JSON.parse(readFileSync(join(DIST, 'recorded/two-am-saturday-fencing.live.json'), 'utf8'));

let env;
before(async () => { env = await start(); });
after(async () => { await env?.stop(); });

const openRecorded = (options = {}) => openLab(env, { ...options, path: `recorded.html${options.path ?? ''}` });
const shown = (page) => page.waitForSelector('.recorded-page[data-ready="true"] .recorded-run');

test('the shipped live run says where it was recorded, and its verdict stands beside its twin on one cursor', async () => {
  const { page, problems } = await openRecorded();
  await shown(page);
  const origin = await page.textContent('#recorded-origin');
  for (const server of EXAMPLE.live.servers) assert.ok(origin.includes(server), `${origin} names ${server}`);
  assert.ok(origin.includes(`×${EXAMPLE.live.time_scale}`), origin);
  assert.equal(await page.getAttribute('.recorded-run', 'data-live'), 'true');
  // The fencing token keeps the night safe, live as simulated.
  const verdicts = await page.$$eval('.recorded-verdict', (all) => all.map((one) => one.dataset.safety));
  assert.deepEqual(verdicts, ['safe', 'safe']);
  const kinds = await page.$$eval('.recorded-run .findings li', (all) => all.map((one) => one.dataset.kind));
  assert.ok(kinds.includes('tokenless_write_rejected'), `storage refused the redelivered job, which has no token: ${kinds}`);
  // The page says how the two verdicts compare (locklab_engine::races): here, the same.
  const twin = await page.textContent('.recorded-twin p');
  assert.ok(twin.includes("Its verdict is the recorded run's: the same safety, liveness, efficiency and kinds of findings."), twin);
  // Both timelines follow one cursor: a click a quarter into the recorded
  // run's timeline moves the twin's too, and the events shown with it.
  const sliders = await page.$$('.timeline');
  assert.equal(sliders.length, 2);
  const end = await sliders[0].getAttribute('aria-valuenow');
  const box = await sliders[0].boundingBox();
  await page.mouse.click(box.x + box.width / 4, box.y + box.height / 2);
  await page.waitForFunction((before) => {
    const values = [...document.querySelectorAll('.timeline')].map((slider) => slider.getAttribute('aria-valuenow'));
    return values[0] !== before && values[0] === values[1];
  }, end);
  const cursor = Number(await sliders[0].getAttribute('aria-valuenow'));
  assert.ok(cursor > 0 && cursor < Number(end), `the cursor moved back into the run: ${cursor}`);
  // The arrow keys step to the next recorded event, as the timeline's legend says.
  await page.keyboard.press('ArrowRight');
  await page.waitForFunction((before) => Number(document.querySelector('.timeline').getAttribute('aria-valuenow')) > before, cursor);
  // The event list hides the connection pools' chatter at first, as the lab's does, and shows it when asked.
  const rows = () => page.$$eval('#event-list li', (all) => all.map((row) => row.textContent));
  assert.ok(!(await rows()).some((row) => row.includes(': pool ')), 'quiet kinds hidden at first');
  await shot(page, 'recorded-live-run');
  await page.click('text=Show every event');
  await page.waitForFunction(() => [...document.querySelectorAll('#event-list li')].some((row) => row.textContent.includes(': pool ')));
  assert.deepEqual(await axeViolations(page), []);
  assert.deepEqual(problems, []);
});

test('Open a recorded run reads a document the reader chooses; a file that is not a log is refused and the run stays', async () => {
  const folder = mkdtempSync(join(tmpdir(), 'locklab-recorded-'));
  const simulated = join(folder, 'simulated.json');
  // A run the engine exports: simulated, so no live marker.
  execFileSync(process.env.LOCKLAB_BIN ?? 'target/debug/locklab',
    ['render', 'pause-after-check', '--strategy', 'redlock', '--log', simulated]);
  const notLog = join(folder, 'scenario.json');
  writeFileSync(notLog, JSON.stringify({ format: 'locklab/2', name: 'not a log' }));
  const { page, problems } = await openRecorded();
  await shown(page);
  await page.setInputFiles('#recorded-file', simulated);
  await page.waitForFunction(() => document.querySelector('.recorded-run')?.dataset.live === 'false');
  assert.match(await page.textContent('#recorded-origin'), /Simulated by locklab's engine/);
  assert.match(await page.textContent('#recorded-title'), /Redlock/);
  await page.setInputFiles('#recorded-file', notLog);
  await page.waitForSelector('[role="alert"]');
  assert.match(await page.textContent('[role="alert"]'), /format `locklab\/2` is not locklab-log\/1/);
  assert.match(await page.textContent('#recorded-title'), /Redlock/, 'what was shown stays');
  await shot(page, 'recorded-refused-file');
  assert.deepEqual(problems, []);
});

test('a log out of time order, or with a run id no log reaches, is refused with its place and the run shown stays', async () => {
  const folder = mkdtempSync(join(tmpdir(), 'locklab-recorded-'));
  const shuffled = structuredClone(EXAMPLE);
  // The example's tenth event moved past the last one's time.
  shuffled.events[10].at_ms = shuffled.events.at(-1).at_ms + 1;
  const outOfOrder = join(folder, 'shuffled.json');
  writeFileSync(outOfOrder, JSON.stringify(shuffled));
  const far = structuredClone(EXAMPLE);
  const begins = far.events.findIndex((event) => event.type === 'run');
  far.events[begins].run = 4000000000;
  const farRun = join(folder, 'far.json');
  writeFileSync(farRun, JSON.stringify(far));
  const { page, problems } = await openRecorded();
  await shown(page);
  await page.setInputFiles('#recorded-file', outOfOrder);
  await page.waitForSelector('[role="alert"]');
  assert.match(await page.textContent('[role="alert"]'), /shuffled\.json: events\[11\]\.at_ms: .* a log is in time order/);
  await page.setInputFiles('#recorded-file', farRun);
  await page.waitForFunction(() => document.querySelector('[role="alert"]')?.textContent.includes('far.json'));
  assert.match(await page.textContent('[role="alert"]'), new RegExp(`far\\.json: events\\[${begins}\\]\\.run: run 4000000000 is named before it begins`));
  assert.equal(await page.getAttribute('.recorded-run', 'data-live'), 'true', 'what was shown stays');
  assert.deepEqual(problems, []);
});

test('a recording the machine stalled says it is inconclusive and compares no verdicts', async () => {
  const folder = mkdtempSync(join(tmpdir(), 'locklab-recorded-'));
  const stalled = structuredClone(EXAMPLE);
  stalled.live.allowed_lag_us = 16000;
  stalled.live.longest_lag_us = 250000;
  stalled.live.stalls = [{ at_ms: 61000, lag_us: 250000, allowed_us: 16000 }];
  stalled.live.faithful_time_scale = 3;
  const file = join(folder, 'stalled.json');
  writeFileSync(file, JSON.stringify(stalled));
  const { page, problems } = await openRecorded();
  await shown(page);
  await page.setInputFiles('#recorded-file', file);
  await page.waitForFunction(() => document.querySelector('.recorded-run')?.dataset.inconclusive === 'true');
  const said = await page.textContent('#recorded-inconclusive');
  assert.match(said, /Inconclusive: the machine stalled the coordinator at t=61 s for 250 ms of wall time/);
  assert.match(said, /--time-scale 3/);
  assert.match(await page.textContent('.recorded-twin p'), /inconclusive, so the two verdicts are not compared/);
  assert.deepEqual(await axeViolations(page), []);
  assert.deepEqual(problems, []);
});

test('embedded at phone width, it still says where the run was recorded and nothing scrolls sideways', async () => {
  const { page, problems } = await openRecorded({ width: 375, height: 800, path: '?embed' });
  await shown(page);
  assert.ok((await page.textContent('#recorded-origin')).startsWith('Recorded live on real'));
  assert.equal(await page.$('.topbar'), null, 'an embed shows no site header');
  const overflow = await page.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth);
  assert.equal(overflow, 0);
  await shot(page, 'recorded-embed-phone');
  assert.deepEqual(problems, []);
});

test('a log path off the site is refused by name', async () => {
  const { page, problems } = await openRecorded({ path: '?log=https://example.com/run.json' });
  await page.waitForSelector('.recorded-page[data-ready="true"] [role="alert"]');
  assert.match(await page.textContent('[role="alert"]'), /is not a file of this site/);
  assert.deepEqual(problems, []);
});
