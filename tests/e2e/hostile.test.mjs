// End-to-end tests of input the lab must survive: a share link whose run
// would take minutes and gigabytes is refused with the setting to change,
// before anything runs; an address parameter that merely contains "reset"
// leaves the saved lab alone.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { start, openLab, ready, message, loadBuiltin, shot, engineLink } from './helpers.mjs';

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
