// End-to-end tests of the explorer page (explore.html): the search runs in
// the Web Worker, shows progress, finds and shrinks a counterexample that
// opens in the lab with one click and shows the same violation there; a
// search can be cancelled while the page keeps updating; the engine's speed
// in this browser's WebAssembly is measured and recorded for docs/bench.md.
// Screenshots in tests/screenshots/. No sleeps: every wait is for a condition.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { start, openLab, ready, shot, record, engineLink, openShareMenu } from './helpers.mjs';

let env;
before(async () => { env = await start(); });
after(async () => { await env?.stop(); });

/** Allows only the given fault kinds on an open explorer page. */
async function allowOnly(page, kinds) {
  for (const box of await page.locator('.kinds input[type=checkbox]').all()) {
    const kind = (await box.getAttribute('id')).slice('kind-'.length);
    if (kinds.includes(kind) !== (await box.isChecked())) await box.click();
  }
}

/** Opens the explorer with only the given fault kinds allowed. */
async function openExplorer(kinds) {
  const opened = await openLab(env, { path: 'explore.html' });
  await opened.page.waitForSelector('.explore[data-ready="true"]');
  await allowOnly(opened.page, kinds);
  return opened;
}

/** Types a number into a field as a person does: the page takes it on change. */
async function setNumber(page, field, value) {
  await page.fill(field, String(value));
  await page.dispatchEvent(field, 'change');
}

/** Presses Search and waits for the outcome; returns the counterexample's faults as shown. */
async function searchFor(page, outcome) {
  await page.click('#search');
  await page.waitForSelector(`#result[data-outcome="${outcome}"]`, { timeout: 120_000 });
  return page.locator('#result .faults li').allTextContents();
}


test('a single GC pause breaks Redlock: the counterexample is minimal and opens in the lab unsafe', async () => {
  const { page, context, problems } = await openExplorer(['gc_pause']);
  await page.selectOption('#strategy', 'redlock');
  // Every safety value the report has is a goal: at risk too.
  assert.deepEqual(await page.$$eval('#goal option', (options) => options.map((option) => option.value).slice(0, 2)), ['unsafe', 'at_risk']);
  await page.selectOption('#goal', 'unsafe');
  await setNumber(page, '#runs', '5000');
  const faults = await searchFor(page, 'found');
  assert.equal(faults.length, 1, `one fault is enough: ${faults}`);
  assert.match(faults[0], /GC pause/i);
  assert.ok((await page.textContent('#result .story')).length > 40, 'a story made from the findings');
  await page.waitForSelector('#open-in-lab');
  await shot(page, 'explore-found');
  const href = await page.getAttribute('#open-in-lab', 'href');
  assert.match(href, /^index\.html#v=1\./);
  await page.click('#open-in-lab');
  await ready(page);
  assert.equal(await page.getAttribute('.lab', 'data-strategy'), 'redlock');
  assert.equal(await page.locator('#message').count(), 0, 'the link opened cleanly');
  assert.equal(await page.getAttribute('#verdicts', 'data-safety'), 'unsafe', 'the lab shows the same violation');
  await shot(page, 'explore-opened-in-lab');
  assert.deepEqual(problems, []);
  await context.close();
});

test('a long search shows progress, keeps the page live and can be cancelled', async () => {
  const { page, context, problems } = await openExplorer(['gc_pause', 'network_delay', 'clock_jump']);
  await page.selectOption('#strategy', 'consensus');
  await page.selectOption('#goal', 'stale_write');
  await setNumber(page, '#runs', '10000000');
  await page.click('#search');
  // Progress arrives slice after slice: the page renders while the worker searches.
  const runsSoFar = async () => Number((await page.getAttribute('#progress progress', 'value')) ?? 0);
  await page.waitForFunction(() => Number(document.querySelector('#progress progress')?.getAttribute('value')) > 0);
  const first = await runsSoFar();
  await page.waitForFunction((was) => Number(document.querySelector('#progress progress').getAttribute('value')) > was, first);
  assert.ok(await page.isDisabled('#search'));
  await shot(page, 'explore-running');
  await page.click('#cancel');
  await page.waitForSelector('#result[data-outcome="cancelled"]');
  assert.ok(await page.isEnabled('#search'), 'a new search can start');
  assert.deepEqual(problems, []);
  await context.close();
});

test('the engine\'s speed in this browser is measured (runs of the seed\'s story per second)', async () => {
  const { page, context } = await openExplorer(['gc_pause']);
  await page.selectOption('#strategy', 'fencing');
  await page.click('#bench');
  await page.waitForSelector('#bench-result');
  const runsPerSecond = Number(await page.getAttribute('#bench-result', 'data-runs-per-s'));
  assert.ok(runsPerSecond > 0);
  record('wasm_story_runs_per_s_fencing', runsPerSecond);
  await context.close();
});

test('inputs that cannot make a search are refused with a message, and nothing starts', async () => {
  const { page, context, problems } = await openExplorer([]);
  await page.click('#search');
  assert.match(await page.textContent('#message'), /The search cannot start: allow at least one fault kind/);
  assert.equal(await page.locator('#progress').count(), 0, 'no search started');
  // Out-of-range numbers are stopped by the form itself, with the browser's own message.
  await page.click('#kind-gc_pause');
  for (const [field, value] of [['#runs', '0'], ['#max-faults', '9']]) {
    await setNumber(page, field, value);
    await page.click('#search');
    assert.ok(await page.$eval(field, (input) => !input.validity.valid && input.validationMessage.length > 0), `${field} ${value}`);
    await setNumber(page, field, field === '#runs' ? '100' : '1');
  }
  assert.equal(await page.locator('#progress, #result').count(), 0, 'still nothing started');
  assert.deepEqual(problems, []);
  await context.close();
});

test('"Search this world" takes the lab\'s scenario to the explorer: a naive lock sized to its job breaks under one pause', async () => {
  // In a locklab/1 world every period writes its own report, and a lock sized
  // to the 90 s job (EX 100) breaks under one pause within the period. The
  // world must travel intact.
  const scenario = {
    format: 'locklab/1', name: 'Naive lock sized to the job', duration_ms: 300000,
    world: { background_queries_per_s: 0 }, strategies: { naive: { ttl_ms: 100000 } },
  };
  const link = engineLink({ scenario, strategy: 'naive', cursor_ms: 0, view: 'single' });
  const { page, context, problems } = await openLab(env, { path: `#v=${link}` });
  await ready(page);
  await openShareMenu(page);
  await page.click('#search-world');
  await page.waitForURL(/explore\.html#v=1\./);
  await page.waitForSelector('.explore[data-ready="true"]');
  assert.equal(await page.getAttribute('#world', 'data-world'), 'lab');
  assert.match(await page.textContent('#world'), /Naive lock sized to the job/);
  assert.equal(await page.inputValue('#strategy'), 'naive', 'the lab\'s strategy comes along');
  assert.equal(await page.textContent('#strategy option[value="naive"]'), 'Baseline · SET NX EX 100');
  assert.match(await page.textContent('#world-settings'), /naive is set to \{"ttl_ms":100000,"release":"never"\}/);
  assert.equal(await page.inputValue('#window-end'), '200', 'faults strike in the first two thirds of its 300 s');
  await allowOnly(page, ['gc_pause']);
  await setNumber(page, '#max-faults', '1');
  const faults = await searchFor(page, 'found');
  assert.equal(faults.length, 1, `one pause is enough: ${faults}`);
  await page.waitForSelector('#open-in-lab');
  await shot(page, 'explore-lab-world-found');
  await page.click('#open-in-lab');
  await ready(page);
  assert.equal(await page.getAttribute('.lab', 'data-strategy'), 'naive');
  assert.equal(await page.getAttribute('#verdicts', 'data-safety'), 'unsafe', 'the lab shows the violation');

  // Back on the seed's world, one pause breaks the seed's own EX 300 too: the
  // next period's run rewrites the same daily report ("Both write to the same output").
  await page.goBack();
  await page.waitForURL(/explore\.html#v=1\./);
  await page.waitForSelector('.explore[data-ready="true"]');
  await page.click('#seed-world');
  assert.equal(await page.getAttribute('#world', 'data-world'), 'seed');
  await allowOnly(page, ['gc_pause']);
  await page.selectOption('#strategy', 'naive');
  await setNumber(page, '#max-faults', '1');
  await setNumber(page, '#runs', '5000');
  assert.equal((await searchFor(page, 'found')).length, 1, 'one pause is enough under the daily report');
  assert.deepEqual(problems, []);
  await context.close();
});

test('a damaged link to the explorer is named, and the seed\'s world searched instead', async () => {
  const { page, context, problems } = await openLab(env, { path: 'explore.html#v=1.AAAA' });
  await page.waitForSelector('.explore[data-ready="true"]');
  assert.match(await page.textContent('#message'), /This link could not be opened: .*Searching the seed's world instead/);
  assert.equal(await page.getAttribute('#world', 'data-world'), 'seed');
  assert.deepEqual(problems, []);
  await context.close();
});
