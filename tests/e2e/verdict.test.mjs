// End-to-end tests of the verdict the lab gives: three axes of equal weight
// (safety, liveness, efficiency) in the verdict panel, the picker, the
// compare grid and the embedded view, each bad outcome with its cause, the
// store in play beside them, the post's own night under the post's own lock,
// and a link issued for a locklab/1 scenario opening with the meaning it had.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { start, openLab, ready, shot, ROOT, engineLink } from './helpers.mjs';

const LOCKLAB = process.env.LOCKLAB_BIN ?? join(process.env.CARGO_TARGET_DIR ?? join(ROOT, 'target'), 'debug/locklab');

let env;
before(async () => { env = await start(); });
after(async () => { await env?.stop(); });

/** A built-in's document, as the CLI lays it out. */
const builtinScenario = (name) => JSON.parse(execFileSync(LOCKLAB, ['show', name], { encoding: 'utf8' }));

test('two holders that wrote where nothing checked are at risk in the panel, the compare grid and the embed, never safe', async () => {
  const { page, context, problems } = await openLab(env, { path: '?scenario=redlock-clock-jump&strategy=redlock' });
  await ready(page);
  const verdict = page.locator('#verdicts');
  assert.equal(await verdict.getAttribute('data-safety'), 'at_risk');
  assert.match(await page.textContent('#verdicts .badge-verdict.warn'), /⚠ at risk/);
  assert.match(await page.textContent('#verdicts dd[data-axis="safety"]'), /survived only by timing/);
  const overlap = page.locator('.finding[data-kind="unfenced_overlap"]', { hasText: 'both wrote where no fence checks' }).first();
  await overlap.waitFor();
  // The at-risk finding names its cause: the run, what it held, what checked it, the fix.
  assert.match(await overlap.locator('.finding-cause').textContent(), /^Cause: [ab] \(run \d+\) wrote holding the lock; checked by nothing: .* What would have stopped it: /);
  // Efficiency beside safety, of the same weight: a duplicate the clock jump forced wastes nothing.
  assert.equal(await verdict.getAttribute('data-efficiency'), 'ok');
  assert.match(await page.textContent('#verdicts dd[data-axis="efficiency"]'), /^No work wasted but what a fault forced \(1 run redone\)$/);
  assert.match(await page.textContent('#verdicts .store'), /storage checks fencing tokens/);
  await shot(page, 'verdict-at-risk');

  await page.check('#compare-toggle');
  const row = page.locator('.verdict-row[data-strategy="redlock"]');
  await row.waitFor();
  assert.equal(await row.getAttribute('data-safety'), 'at_risk');
  assert.match(await row.textContent(), /⚠ at risk/);
  assert.equal(await page.getAttribute('.verdict-row[data-strategy="fencing"]', 'data-safety'), 'safe');
  await shot(page, 'verdict-at-risk-compare');
  assert.deepEqual(problems, []);
  await context.close();

  // The embedded view says the same.
  const state = { scenario: builtinScenario('redlock-clock-jump'), strategy: 'redlock', cursor_ms: 60_000, view: 'single' };
  const embedded = await openLab(env, { path: `?embed#v=${engineLink(state)}`, width: 720 });
  await embedded.page.locator('.lab.embed[data-ready="true"]').waitFor();
  assert.equal(await embedded.page.getAttribute('#verdicts', 'data-safety'), 'at_risk');
  assert.match(await embedded.page.textContent('#verdicts'), /⚠ at risk/);
  await shot(embedded.page, 'verdict-at-risk-embed');
  assert.deepEqual(embedded.problems, []);
  await embedded.context.close();
});

test('the post\'s night on the first screen: every strategy\'s three verdicts, D\'s price as visible as A\'s, B\'s cause named', async () => {
  const { page, context, problems } = await openLab(env, { path: '?scenario=two-am-saturday&strategy=redlock' });
  await ready(page);
  // The picker shows all six verdicts once they are computed, after the run on screen.
  const verdictOf = (strategy) => page.locator(`.choice:has(input[value="${strategy}"]) .choice-verdict:not(.pending)`);
  await verdictOf('unique-insert').waitFor();
  const axes = async (strategy) => {
    const element = verdictOf(strategy);
    return [await element.getAttribute('data-safety'), await element.getAttribute('data-liveness'), await element.getAttribute('data-efficiency')];
  };
  const expected = {};
  for (const result of JSON.parse(execFileSync(LOCKLAB, ['run', 'two-am-saturday', '--format', 'json'], { encoding: 'utf8' })).results) {
    expected[result.strategy] = [result.safety, result.liveness, result.efficiency];
  }
  for (const strategy of Object.keys(expected)) {
    assert.deepEqual(await axes(strategy), expected[strategy], `${strategy}'s three verdicts, as the CLI's report`);
  }
  assert.deepEqual(await axes('fencing'), ['safe', 'late', 'ok'], 'A: safe, late for the pause, efficient');
  assert.deepEqual(await axes('unique-insert'), ['safe', 'ok', 'wasteful'], 'D: right data, every side effect thrice');
  // A liveness or efficiency miss is never drawn as unsafe is.
  assert.equal(await page.locator('.badge-verdict.bad[data-liveness], .badge-verdict.bad[data-efficiency]').count(), 0);
  assert.equal(await page.locator('.badge-verdict[data-efficiency="wasteful"].bad').count(), 0);
  // B is unsafe, and the cause says why: b's redelivered job held nothing, and carried no token.
  const stale = page.locator('.finding[data-kind="stale_write_accepted"]').first();
  await stale.waitFor();
  assert.equal(await stale.locator('.finding-cause').getAttribute('data-held'), 'nothing');
  assert.match(await stale.locator('.finding-cause').textContent(), /b \(run 3\) wrote holding nothing: a job the runner handed again after a crash/);
  assert.match(await page.textContent('#verdicts dd[data-axis="liveness"]'), /^Late: period 1's report came [\d.]+ s after its tick, more than a cron period/);
  await shot(page, 'verdict-two-am-six-verdicts');
  // The lock apart from the runner: the same night without the redelivered job, where Redlock's own check saves it.
  await page.click('#without-redelivery');
  await page.waitForFunction(() => /\(changed\)/.test(document.querySelector('.scenario-line').textContent));
  assert.equal(await page.getAttribute('#verdicts', 'data-safety'), 'safe');
  assert.equal(await page.locator('#without-redelivery').count(), 0, 'no redelivered job, no offer');
  await shot(page, 'verdict-two-am-redlock-alone');
  assert.deepEqual(problems, []);
  await context.close();
});

test('the post\'s night under the post\'s own lock is unsafe; option A against a plain object store is too', async () => {
  const { page, context, problems } = await openLab(env, { path: '?scenario=two-am-saturday&strategy=naive' });
  await ready(page);
  assert.equal(await page.getAttribute('#verdicts', 'data-safety'), 'unsafe');
  await page.locator('.finding[data-kind="corrupted_report"]', { hasText: 'a and c' }).first().waitFor();
  await page.locator('.finding[data-kind="lock_granted_to_another"]', { hasText: 'to c while a still believes' }).first().waitFor();
  const notes = await page.textContent('#setup-notes');
  assert.match(notes, /the job rewrites one daily report/);
  assert.match(notes, /at-least-once job runner/);
  await shot(page, 'verdict-two-am-naive');

  // The same night under A: the redelivered job carries no token (it died
  // with b's process), the fenced store refuses it, and the panel says why
  // the post picks A over D although A is late.
  await page.goto(`${env.url}?scenario=two-am-saturday&strategy=fencing`);
  await ready(page);
  assert.equal(await page.getAttribute('#verdicts', 'data-safety'), 'safe');
  const refused = page.locator('.finding[data-kind="tokenless_write_rejected"]').first();
  await refused.waitFor();
  assert.match(await refused.textContent(), /carries no token/);
  assert.match(await page.textContent('#verdicts .weighing'), /Why the post still picks A: it is late only because a fault struck/);
  await page.goto(`${env.url}?scenario=two-am-saturday&strategy=unique-insert`);
  await ready(page);
  assert.match(await page.textContent('#verdicts .weighing'), /Why the post rejects D although it is on time/);

  // A against a store that checks nothing: the token does not help.
  await page.goto(`${env.url}?scenario=fencing-needs-a-checking-store&strategy=fencing`);
  await ready(page);
  assert.equal(await page.getAttribute('#verdicts', 'data-safety'), 'unsafe');
  assert.match(await page.textContent('#verdicts .store'), /plain object store, like S3/);
  assert.match(await page.textContent('#setup-notes'), /plain object store/);
  await shot(page, 'verdict-fencing-plain-store');
  assert.deepEqual(problems, []);
  await context.close();
});

test('a link issued for a locklab/1 scenario opens as it did: every period its own report', async () => {
  const recorded = readFileSync(join(ROOT, 'engine/tests/fixtures/link-v1.txt'), 'utf8').trim();
  const { page, context, problems } = await openLab(env, { path: `#v=${recorded}` });
  await ready(page);
  assert.equal(await page.getAttribute('.lab', 'data-strategy'), 'fencing');
  assert.equal(await page.getAttribute('.lab', 'data-cursor-ms'), '120000');
  assert.match(await page.textContent('#setup-notes'), /each period writes its own report/);
  assert.ok(['safe', 'at_risk', 'unsafe'].includes(await page.getAttribute('#verdicts', 'data-safety')));
  await shot(page, 'verdict-v1-link');
  assert.deepEqual(problems, []);
  await context.close();
});
