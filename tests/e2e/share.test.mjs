// End-to-end tests of share links (`#v=1.…` in the fragment): "Copy link"
// gives a link that opens the same run, cursor and view in a fresh page; a
// link written the engine's way (raw DEFLATE + base64url) opens too; damaged,
// truncated and hostile links show what is wrong over the default lab. Each
// test saves a screenshot in tests/screenshots/. No sleeps.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { serveDist } from './serve.mjs';
import {
  DIST, start, openLab, ready, cursorMs, digest, message, loadBuiltin, chooseStrategy, scrubPercent, shot, ROOT, engineLink, openShareMenu,
} from './helpers.mjs';

let env;
before(async () => { env = await start(); });
after(async () => { await env?.stop(); });


/** What the page shows: strategy, cursor, timeline digest, view, scenario line. */
async function seen(page) {
  return {
    strategy: await page.getAttribute('.lab', 'data-strategy'),
    cursorMs: await cursorMs(page),
    compare: await page.isChecked('#compare-toggle'),
    line: await page.textContent('.scenario-line'),
  };
}

test('"Copy link" opens the same run, cursor and view in a fresh page', async () => {
  const first = await openLab(env);
  await first.context.grantPermissions(['clipboard-read', 'clipboard-write']);
  await ready(first.page);
  await loadBuiltin(first.page, 'calm-night');
  await chooseStrategy(first.page, 'redlock');
  await scrubPercent(first.page, 3);
  const original = { ...(await seen(first.page)), digest: await digest(first.page) };
  assert.ok(original.cursorMs > 0);
  await openShareMenu(first.page);
  await first.page.click('#copy-link');
  await message(first.page, /^Copied the link/);
  const url = await first.page.evaluate(() => location.href);
  assert.match(url, /#v=1\.[A-Za-z0-9_-]+$/);
  assert.equal(await first.page.evaluate(() => navigator.clipboard.readText()), url);
  await first.context.close();

  const second = await openLab(env, { path: url.slice(env.url.length) });
  await ready(second.page);
  assert.equal(await second.page.locator('#message').count(), 0, 'a good link opens without a message');
  assert.deepEqual({ ...(await seen(second.page)), digest: await digest(second.page) }, original);
  await shot(second.page, 'share-01-opened');
  // Compare view travels too, and the reload keeps the link's view.
  await second.page.check('#compare-toggle');
  await second.context.grantPermissions(['clipboard-read', 'clipboard-write']);
  await openShareMenu(second.page);
  await second.page.click('#copy-link');
  await message(second.page, /^Copied the link/);
  await second.page.reload();
  await ready(second.page);
  assert.equal(await second.page.isChecked('#compare-toggle'), true);
  assert.equal(await cursorMs(second.page), original.cursorMs);
  assert.equal(await second.page.getAttribute('.lab', 'data-strategy'), 'redlock');
  await shot(second.page, 'share-02-compare');
  assert.deepEqual([...first.problems, ...second.problems], []);
  await second.context.close();
});

test('a link written the engine way opens its scenario, strategy and cursor', async () => {
  const scenario = JSON.parse(readFileSync(join(ROOT, 'engine/scenarios/05-redlock-clock-jump.json'), 'utf8'));
  const link = engineLink(JSON.stringify({ scenario, strategy: 'naive', cursor_ms: 12345, view: 'single' }));
  const { page, context, problems } = await openLab(env, { path: `#v=${link}` });
  await ready(page);
  const view = await seen(page);
  assert.equal(view.strategy, 'naive');
  assert.equal(view.cursorMs, 12345);
  assert.equal(view.compare, false);
  assert.ok(view.line.includes(scenario.name), view.line);
  await shot(page, 'share-03-engine-link');
  assert.deepEqual(problems, []);
  await context.close();
});

test('damaged, truncated and hostile links say what is wrong over the default lab', async () => {
  const good = engineLink(JSON.stringify({
    scenario: JSON.parse(readFileSync(join(ROOT, 'engine/scenarios/05-redlock-clock-jump.json'), 'utf8')),
    strategy: 'naive', cursor_ms: 0, view: 'single',
  }));
  const cases = [
    ['#v=', /holds no state/],
    ['#v=nonsense', /has no version/],
    ['#v=7.AAAA', /version 7, which this locklab does not know/],
    [`#v=1.<img src=x onerror="window.pwned=1">`, /characters a locklab link never has/],
    ['#v=1.%3Cscript%3Ewindow.pwned%3D1%3C%2Fscript%3E', /characters a locklab link never has/],
    [`#v=${good.slice(0, good.length / 2)}`, /truncated or damaged/],
    [`#v=${engineLink('{"hello": "world"}')}`, /not a lab state: .*hello/],
    [`#v=${engineLink(JSON.stringify({ scenario: { name: 'x', world: 'no' }, strategy: 'naive' }))}`, /not a lab state: scenario\.world/],
    [`#v=${engineLink(JSON.stringify({
      scenario: JSON.parse(readFileSync(join(ROOT, 'engine/scenarios/05-redlock-clock-jump.json'), 'utf8')),
      strategy: 'naive', cursor_ms: 999_999_999_999,
    }))}`, /time cursor \(999999999999 ms\) is past the end/],
  ];
  const fresh = await openLab(env);
  await ready(fresh.page);
  const defaults = await seen(fresh.page);
  await fresh.context.close();
  for (const [index, [hash, pattern]] of cases.entries()) {
    const { page, context, problems } = await openLab(env, { path: hash });
    await ready(page);
    const text = await message(page, /^This link could not be opened/);
    assert.match(text, pattern, hash);
    assert.match(text, /Showing the default lab instead\.$/);
    assert.equal(await page.getAttribute('#message', 'role'), 'alert');
    assert.deepEqual(await seen(page), defaults, `${hash} opens the default lab`);
    assert.equal(await page.evaluate(() => window.pwned), undefined, 'nothing from the link ran');
    if (index === 3) await shot(page, 'share-04-hostile-link');
    // The banner can be dismissed; the lab goes on working.
    await page.click('#message button');
    await page.locator('#message').waitFor({ state: 'detached' });
    assert.deepEqual(problems, [], hash);
    await context.close();
  }
});

test('served from a sub-path, the lab and a share link work and ask nothing outside it', async () => {
  const sub = await serveDist(DIST, 0, '/blog/lab/');
  try {
    // openLab fails the test on any request that is not under sub.url.
    const scenario = JSON.parse(readFileSync(join(ROOT, 'engine/scenarios/05-redlock-clock-jump.json'), 'utf8'));
    const link = engineLink(JSON.stringify({ scenario, strategy: 'consensus', cursor_ms: 60_000, view: 'single' }));
    const { page, context, problems } = await openLab({ url: sub.url, browser: env.browser }, { path: `#v=${link}` });
    await ready(page);
    assert.equal(await page.getAttribute('.lab', 'data-strategy'), 'consensus');
    assert.equal(await cursorMs(page), 60_000);
    assert.ok(new URL(page.url()).pathname.startsWith('/blog/lab/'));
    await shot(page, 'share-05-sub-path');
    assert.deepEqual(problems, []);
    await context.close();
  } finally {
    await sub.close();
  }
});
