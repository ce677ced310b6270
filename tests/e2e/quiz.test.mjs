// End-to-end tests of the quiz page (quiz.html): a card is answered before
// anything runs, then both runs play side by side with their verdicts under
// one cursor; progress survives a reload; a stored value that cannot be read
// is reset with a notice; without storage the quiz works and says so; "Open
// in the lab" opens the same scenario and strategy in the lab; 375 px fits;
// text contrast meets WCAG AA in both themes. No sleeps: every wait is for a
// condition. openLab fails a test on any request that leaves localhost.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync } from 'node:fs';
import { start, openLab, ready, shot, contrastFailures } from './helpers.mjs';

/** Every card file in engine/quizzes is a card on the page. */
const CARD_FILES = readdirSync(new URL('../../engine/quizzes/', import.meta.url)).filter((name) => name.endsWith('.json'));

const KEY = 'locklab.quiz.v1';

let env;
before(async () => { env = await start(); });
after(async () => { await env?.stop(); });

const openQuiz = (options = {}) => openLab(env, { ...options, path: `quiz.html${options.path ?? ''}` });
const quizReady = (page) => page.waitForSelector('.quiz[data-ready="true"]');
const score = async (page) => ({
  right: Number(await page.getAttribute('#score', 'data-right')),
  tried: Number(await page.getAttribute('#score', 'data-tried')),
});
const statuses = (page) => page.$$eval('.card-link', (links) => links.map((link) => [link.dataset.card, link.dataset.status]));

/** Picks a choice by clicking its label, checks, and waits for the result. */
async function answer(page, id) {
  await page.click(`label[for="choice-${id}"]`);
  assert.equal(await page.isChecked(`#choice-${id}`), true);
  await page.click('#check');
  await page.waitForSelector('#result[data-result]');
  // Both columns, each with its timeline and its verdict.
  await page.waitForSelector('.run-column[data-role="pick"] .timeline[data-digest]');
  await page.waitForSelector('.run-column[data-role="other"] .timeline[data-digest]');
  return page.getAttribute('#result', 'data-result');
}

/** The strategy, safety verdict and timeline digest of a column. */
async function column(page, role) {
  const scope = `.run-column[data-role="${role}"]`;
  return {
    strategy: await page.getAttribute(scope, 'data-strategy'),
    safety: await page.getAttribute(`${scope} .verdicts`, 'data-safety'),
    liveness: await page.getAttribute(`${scope} .verdicts`, 'data-liveness'),
    digest: await page.getAttribute(`${scope} .timeline`, 'data-digest'),
    findings: await page.locator(`${scope} .finding`).count(),
  };
}

test('a card is answered before anything runs, then both runs play side by side; a reload keeps the progress', async () => {
  const { page, context, problems } = await openQuiz();
  await quizReady(page);
  // The 2 am story first, every card, nothing tried, nothing run.
  assert.equal(await page.getAttribute('.quiz', 'data-card'), 'two-am');
  const list = await statuses(page);
  assert.equal(list.length, CARD_FILES.length);
  assert.deepEqual(list[0], ['two-am', 'not-tried']);
  assert.ok(list.every(([, status]) => status === 'not-tried'));
  assert.deepEqual(await score(page), { right: 0, tried: 0 });
  assert.match(await page.textContent('.story'), /Saturday, 02:00/);
  assert.equal(await page.locator('.verdicts, .timeline, #result').count(), 0, 'no run, no verdict before the pick');
  assert.equal(await page.isDisabled('#check'), true, 'nothing to check before a pick');
  assert.equal(await page.locator('input[type="radio"][name="quiz-choice"]').count(), 4);
  await shot(page, 'quiz-card');

  // B (Redlock) is wrong on the 2 am night: beside it, the post's answer, A.
  assert.equal(await answer(page, 'B'), 'wrong');
  assert.match(await page.textContent('#result'), /Not this one\. The answer is A: it keeps the stored report correct, does no work twice that a fault did not force, misses no period and keeps up/);
  const pick = await column(page, 'pick');
  const other = await column(page, 'other');
  assert.deepEqual([pick.strategy, pick.safety], ['redlock', 'unsafe']);
  assert.deepEqual([other.strategy, other.safety, other.liveness], ['fencing', 'safe', 'late']);
  assert.notEqual(pick.digest, other.digest);
  assert.ok(pick.findings > 0 && other.findings > 0, 'both verdicts list their findings');
  assert.equal(await page.getAttribute('#pairing', 'data-pairing'), 'RightAnswer');
  assert.match(await page.textContent('#simplifies-line'), /Where the lab simplifies/);
  // After checking, every choice says whether it was right, and the picks are fixed.
  assert.equal(await page.locator('.choice-mark.good').count() >= 2, true);
  assert.equal(await page.isDisabled('#choice-A'), true);
  // The explanation and its references, opened safely in a new tab.
  assert.match(await page.textContent('.explanation'), /Redlock hands out no token/);
  const references = await page.$$eval('.references a', (links) => links.map((link) => [link.rel, link.target, link.href]));
  assert.ok(references.length >= 2);
  for (const [rel, target, href] of references) {
    assert.equal(rel, 'noopener');
    assert.equal(target, '_blank');
    assert.match(href, /^https?:\/\//);
  }
  await page.waitForSelector('#open-lab-pick[href^="index.html#v=1."]');
  await page.waitForSelector('#open-lab-other[href^="index.html#v=1."]');

  // One play/pause and one cursor for both timelines.
  await page.selectOption('#quiz-speed', { label: '64×' });
  await page.click('#quiz-play');
  await page.waitForSelector('.quiz[data-playing="true"]');
  await page.waitForFunction(() => Number(document.querySelector('.quiz').dataset.cursorMs) > 20_000);
  await page.click('#quiz-play');
  await page.waitForSelector('.quiz[data-playing="false"]');
  const cursor = await page.getAttribute('.quiz', 'data-cursor-ms');
  assert.deepEqual(await page.$$eval('.run-column .timeline', (timelines) => timelines.map((timeline) => timeline.getAttribute('aria-valuenow'))), [cursor, cursor]);
  // A finding moves the shared cursor.
  const findingAt = await page.getAttribute('.run-column[data-role="pick"] .finding-button', 'data-seek');
  await page.click('.run-column[data-role="pick"] .finding-button');
  await page.waitForSelector(`.quiz[data-cursor-ms="${findingAt}"]`);
  await page.evaluate(() => window.scrollTo(0, 0));
  await shot(page, 'quiz-answered');
  // The timeline is a slider: End goes to the end of the runs.
  await page.focus('.run-column[data-role="other"] .timeline');
  await page.keyboard.press('End');
  const duration = await page.getAttribute('#quiz-cursor', 'max');
  await page.waitForSelector(`.quiz[data-cursor-ms="${duration}"]`);

  assert.deepEqual(await statuses(page).then((all) => all[0]), ['two-am', 'wrong']);
  assert.deepEqual(await score(page), { right: 0, tried: 1 });

  // Card 2, answered right with the keyboard: the only right choice, shown
  // beside the wrong choice whose run is closest to it: A, whose token
  // refuses the stale write Redlock lets through.
  await page.click('#next-card');
  await page.waitForSelector('.quiz[data-card="pause-after-check"][data-answered="false"]');
  await page.focus('#choice-A');
  await page.keyboard.press('ArrowDown');
  assert.equal(await page.isChecked('#choice-B'), true, 'arrow keys move through the choices');
  await page.keyboard.press('Enter');
  await page.waitForSelector('#result[data-result="right"]');
  assert.equal(await page.evaluate(() => document.activeElement.id), 'result', 'focus goes to the result');
  assert.equal(await page.getAttribute('#pairing', 'data-pairing'), 'ClosestWrong');
  assert.equal((await column(page, 'pick')).safety, 'unsafe');
  assert.deepEqual([(await column(page, 'other')).strategy, (await column(page, 'other')).safety], ['fencing', 'safe']);
  assert.equal(await page.getAttribute('.run-column[data-role="other"] .verdicts', 'data-stale-rejected'), '1');
  assert.deepEqual(await score(page), { right: 1, tried: 2 });
  const stored = JSON.parse(await page.evaluate((key) => localStorage.getItem(key), KEY));
  assert.deepEqual(stored, {
    version: 1,
    cards: { 'two-am': { pick: 'B', right: false }, 'pause-after-check': { pick: 'B', right: true } },
  });

  // A reload keeps the statuses and the score, and reopens the same card, answered.
  await page.reload();
  await quizReady(page);
  const kept = await statuses(page);
  assert.deepEqual(kept.slice(0, 3), [['two-am', 'wrong'], ['pause-after-check', 'right'], ['delayed-packet', 'not-tried']]);
  assert.deepEqual(await score(page), { right: 1, tried: 2 });
  assert.equal(await page.getAttribute('.quiz', 'data-card'), 'pause-after-check');
  await page.waitForSelector('.quiz[data-answered="true"] #result[data-result="right"]');
  assert.match(await page.textContent('#score'), /1 right of 2 tried/);
  // "Try this card again" frees the pick without forgetting the progress.
  await page.click('#try-again');
  await page.waitForSelector('.quiz[data-answered="false"]');
  assert.equal(await page.locator('.verdicts').count(), 0);
  assert.deepEqual(await score(page), { right: 1, tried: 2 });
  // "Reset progress" forgets it all.
  await page.click('#reset-progress');
  await page.waitForSelector('#score[data-tried="0"]');
  assert.match(await page.textContent('#notice'), /progress was reset/);
  assert.deepEqual(problems, []);
  await context.close();
});

test('a stored value that cannot be read is reset with a notice, and the quiz works', async () => {
  const cases = [
    ['{"version": 1, "cards": ', /\(it is not JSON\)/],
    ['[1, 2, 3]', /\(it is not a quiz progress record: it has no version number\)/],
    ['{"version": 2, "cards": {}}', /\(it is version 2, which this quiz does not know/],
    ['{"version": 1, "cards": {"two-am": {"pick": 3, "right": true}}}', /\(it does not have the shape of quiz progress: /],
  ];
  for (const [index, [value, reason]] of cases.entries()) {
    const { page, context, problems } = await openQuiz({
      init: ([key, text]) => {
        // Only before the first load: the quiz's own save must survive a reload.
        if (!sessionStorage.getItem('seeded')) {
          sessionStorage.setItem('seeded', '1');
          localStorage.setItem(key, text);
        }
      },
      initArg: [KEY, value],
    });
    await quizReady(page);
    const notice = page.locator('#notice .message-text');
    await notice.waitFor();
    const text = await notice.textContent();
    assert.match(text, /^Your saved quiz progress could not be read \(/, value);
    assert.match(text, reason, value);
    assert.match(text, /and was reset/, value);
    assert.equal(await page.getAttribute('#notice', 'role'), 'alert');
    assert.deepEqual(await score(page), { right: 0, tried: 0 });
    assert.ok((await statuses(page)).every(([, status]) => status === 'not-tried'));
    // The unreadable value was replaced, and the quiz goes on working and saving.
    assert.equal(await answer(page, 'A'), 'right');
    assert.deepEqual(await score(page), { right: 1, tried: 1 });
    const stored = JSON.parse(await page.evaluate((key) => localStorage.getItem(key), KEY));
    assert.deepEqual(stored, { version: 1, cards: { 'two-am': { pick: 'A', right: true } } });
    if (index === 0) {
      await page.reload();
      await quizReady(page);
      assert.deepEqual(await score(page), { right: 1, tried: 1 });
      assert.equal(await page.locator('#notice').count(), 0, 'a readable value gives no notice');
    }
    // The notice can be dismissed.
    if (await page.locator('#notice').count()) {
      await page.click('#notice button');
      await page.locator('#notice').waitFor({ state: 'detached' });
    }
    assert.deepEqual(problems, [], value);
    await context.close();
  }
});

test('without local storage the quiz works and says it will not remember', async () => {
  const { page, context, problems } = await openQuiz({
    init: () => {
      Object.defineProperty(window, 'localStorage', {
        get() { throw new DOMException('The user denied storage', 'SecurityError'); },
      });
    },
  });
  await quizReady(page);
  assert.match(await page.textContent('#notice'), /does not let the quiz use local storage/);
  assert.equal(await answer(page, 'A'), 'right');
  assert.deepEqual(await score(page), { right: 1, tried: 1 });
  assert.deepEqual(problems, []);
  await context.close();
});

test('"Open in the lab" opens the same scenario and strategy in the lab', async () => {
  // The card named in the address opens first.
  const { page, context, problems } = await openQuiz({ path: '#card=redis-failover' });
  await quizReady(page);
  assert.equal(await page.getAttribute('.quiz', 'data-card'), 'redis-failover');
  const name = (await page.textContent('#card-title')).trim();
  assert.equal(await answer(page, 'E'), 'wrong');
  assert.equal((await column(page, 'pick')).strategy, 'consensus');
  assert.equal((await column(page, 'other')).strategy, 'fencing');
  const otherHref = await page.getAttribute('#open-lab-other[href]', 'href');
  await page.waitForSelector('#open-lab-pick[href^="index.html#v=1."]');
  await page.click('#open-lab-pick');
  await page.waitForURL(/\/index\.html#v=1\./);
  await ready(page);
  assert.equal(await page.getAttribute('.lab', 'data-strategy'), 'consensus');
  assert.match(await page.textContent('.scenario-line'), new RegExp(name));
  assert.equal(await page.locator('#message').count(), 0, 'the link opens without a message');
  // Back to the quiz: the same card.
  await page.goBack();
  await page.waitForURL(/\/quiz\.html#card=redis-failover$/);
  await quizReady(page);
  assert.equal(await page.getAttribute('.quiz', 'data-card'), 'redis-failover');

  const second = await openLab(env, { path: otherHref });
  await ready(second.page);
  assert.equal(await second.page.getAttribute('.lab', 'data-strategy'), 'fencing');
  assert.match(await second.page.textContent('.scenario-line'), new RegExp(name));
  assert.deepEqual([...problems, ...second.problems], []);
  await second.context.close();
  await context.close();
});

test('a card that names a fix plays it in the lab: FOR NO KEY UPDATE on the long report', async () => {
  const { page, context, problems } = await openQuiz({ path: '#card=long-report' });
  await quizReady(page);
  assert.equal(await answer(page, 'C'), 'right');
  await page.waitForSelector('#play-fix[href^="index.html#v=1."]');
  assert.match(await page.textContent('.explanation .fix'), /FOR NO KEY UPDATE/);
  await shot(page, 'quiz-fix');
  await page.click('#play-fix');
  await page.waitForURL(/\/index\.html#v=1\./);
  await ready(page);
  assert.equal(await page.getAttribute('.lab', 'data-strategy'), 'db-lock');
  // The fix keeps the other teams' queries moving: efficient, though still behind.
  const verdict = page.locator('#verdicts');
  await page.waitForSelector('#verdicts[data-efficiency]');
  assert.equal(await verdict.getAttribute('data-efficiency'), 'ok');
  assert.equal(await verdict.getAttribute('data-liveness'), 'behind');
  assert.deepEqual(problems, []);
  await context.close();
});

test('a run that is at risk says so in its column, never safe', async () => {
  // The clock-jump card: Redlock gives two holders, and both write chunks nothing checks.
  const { page, context, problems } = await openQuiz({ path: '#card=redlock-clock-jump' });
  await quizReady(page);
  assert.equal(await answer(page, 'B'), 'right');
  const pick = await column(page, 'pick');
  assert.deepEqual([pick.strategy, pick.safety], ['redlock', 'at_risk']);
  assert.match(await page.textContent('.run-column[data-role="pick"] .verdicts'), /⚠ at risk/);
  await shot(page, 'quiz-at-risk');
  assert.deepEqual(problems, []);
  await context.close();
});

test('a card whose lock differs from the seed\'s names it on the choice and over its run', async () => {
  // The overrun card's naive lock is the seed's EX 300, released with a plain DEL.
  const { page, context, problems } = await openQuiz();
  await quizReady(page);
  await page.click('.card-link[data-card="overrun-del"]');
  await page.waitForSelector('.quiz[data-card="overrun-del"]');
  assert.equal(await page.textContent('label[for="choice-N"] .choice-strategy'), 'N: SET NX EX 300, released with a plain DEL');
  assert.equal(await answer(page, 'N'), 'right');
  assert.equal(await page.textContent('.run-column[data-role="pick"] h4'), 'N · SET NX EX 300, released with a plain DEL');
  await shot(page, 'quiz-overrun-card');
  assert.deepEqual(problems, []);
  await context.close();
});

test('at 375 px the quiz fits the screen', async () => {
  const { page, context, problems } = await openQuiz({ width: 375, height: 800 });
  await quizReady(page);
  await answer(page, 'D');
  await page.waitForSelector('#open-lab-pick');
  // The narrow screen draws each timeline in the lab's narrow layout, not the compact one.
  assert.equal(await page.locator('.run-column .timeline.compact').count(), 0);
  const overflow = await page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
  assert.ok(overflow <= 0, `no sideways scrolling (${overflow} px too wide)`);
  // The columns stack: the second starts below the first.
  const [first, second] = await page.$$eval('.run-column', (columns) => columns.map((column) => column.getBoundingClientRect().top));
  assert.ok(second > first);
  await shot(page, 'quiz-375');
  assert.deepEqual(problems, []);
  await context.close();
});

for (const scheme of ['light', 'dark']) {
  test(`quiz text meets WCAG AA contrast in the ${scheme} theme`, async () => {
    const { page, context, problems } = await openQuiz({ scheme });
    await quizReady(page);
    await answer(page, 'B');
    const { failures, sampled } = await contrastFailures(page);
    assert.ok(sampled > 50, 'text was sampled');
    assert.deepEqual(failures, []);
    await shot(page, `quiz-theme-${scheme}`);
    assert.deepEqual(problems, []);
    await context.close();
  });
}
