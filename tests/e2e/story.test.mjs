// End-to-end tests of the story page (story.html): a first-time reader goes
// through the whole night with the keyboard alone, and at every step what
// the text points at is outlined on screen; "Open this moment in the lab"
// lands on the same run, strategy and cursor; the story plays by itself and
// pauses; embedded in a post it starts at a named step, fits its frame and
// never touches storage; at 375 px the text comes first and nothing scrolls
// sideways; text contrast meets WCAG AA in both themes and axe-core (what
// Lighthouse's accessibility audit runs) reports no violation. Every step is
// screenshotted at desktop and phone width. No sleeps: every wait is for a
// condition; the play timer runs on the test's clock.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { start, openLab, shot, contrastFailures, axeViolations } from './helpers.mjs';

/** The post's night as the page tells it: the story file itself. */
const NIGHT = JSON.parse(readFileSync(new URL('../../engine/stories/01-the-night.json', import.meta.url), 'utf8'));
const STEPS = NIGHT.chapters.flatMap((chapter) => chapter.steps.map((step) => ({ ...step, strategy: chapter.strategy })));

let env;
before(async () => { env = await start(); });
after(async () => { await env?.stop(); });

const openStory = (options = {}) => openLab(env, { reducedMotion: 'reduce', ...options, path: `story.html${options.path ?? ''}` });
const storyReady = (page) => page.waitForSelector('.story-page[data-ready="true"]');
const stepId = (page) => page.getAttribute('.story-page', 'data-step');
const waitForStep = (page, id) => page.waitForFunction((want) => document.querySelector('.story-page')?.dataset.step === want, id);

/** The look-ats outlined on screen: at least one shape of each, inside the viewport. */
async function outlinedOnScreen(page) {
  return page.$$eval('[data-look-at]', (shapes) => {
    const seen = new Set();
    for (const shape of shapes) {
      const box = shape.getBoundingClientRect();
      const inside = box.width > 0 && box.height > 0 && box.bottom > 0 && box.right > 0
        && box.top < window.innerHeight && box.left < window.innerWidth;
      if (inside) seen.add(shape.dataset.lookAt);
    }
    return [...seen].sort();
  });
}

test('a first-time reader goes through the whole night with the keyboard alone, each step outlined on screen', async () => {
  const { page, problems, context } = await openStory();
  await storyReady(page);
  assert.equal(await stepId(page), STEPS[0].id, 'a first visit starts at the first step');
  assert.equal(await page.getAttribute('.story-page', 'data-playing'), 'false', 'reduced motion: it waits to be played');
  for (const [index, step] of STEPS.entries()) {
    if (index > 0) await page.keyboard.press('ArrowRight');
    await waitForStep(page, step.id);
    assert.equal(await page.textContent('#story-text'), step.text);
    assert.equal(await page.getAttribute('.story-page', 'data-strategy'), step.strategy);
    assert.equal(await page.textContent('.step-count'), `Step ${index + 1} of ${STEPS.length}`);
    // What the text points at is outlined where the reader is looking.
    const wanted = [...new Set(step.look_at ?? [])].sort();
    assert.deepEqual(await outlinedOnScreen(page), wanted, `step ${step.id}`);
    // The cursor stands on the step's moment.
    assert.equal(await page.getAttribute('.timeline', 'aria-valuenow'), await page.getAttribute('.story-page', 'data-cursor-ms'));
    await shot(page, `story-${String(index + 1).padStart(2, '0')}-${step.id}`);
  }
  // The last step: Next is done, and the ending links on.
  assert.equal(await page.isDisabled('#story-next'), true);
  assert.deepEqual(await page.$$eval('.step-links a', (links) => links.map((link) => link.getAttribute('href'))), ['quiz.html', 'index.html']);
  await page.keyboard.press('ArrowLeft');
  await waitForStep(page, STEPS.at(-2).id);
  await page.keyboard.press('Home');
  await waitForStep(page, STEPS[0].id);
  await page.keyboard.press('End');
  await waitForStep(page, STEPS.at(-1).id);
  // A reload stays on the step the address names.
  await page.reload();
  await storyReady(page);
  assert.equal(await stepId(page), STEPS.at(-1).id);
  assert.deepEqual(problems, []);
  await context.close();
});

test('the story follows its address: a pasted #step=…, and back and forward', async () => {
  const { page, problems, context } = await openStory({ path: '#step=two-holders' });
  await storyReady(page);
  assert.equal(await stepId(page), 'two-holders');
  // A reader pastes another step's address into the same tab.
  await page.evaluate(() => { window.location.hash = '#step=gc-pause'; });
  await waitForStep(page, 'gc-pause');
  // Back returns to the step the address named before, forward to the pasted one.
  await page.goBack();
  await waitForStep(page, 'two-holders');
  await page.goForward();
  await waitForStep(page, 'gc-pause');
  // A fragment naming no step leaves the page where it is.
  await page.evaluate(() => new Promise((done) => {
    window.addEventListener('hashchange', () => requestAnimationFrame(done), { once: true });
    window.location.hash = '#step=no-such-step';
  }));
  assert.equal(await stepId(page), 'gc-pause');
  assert.deepEqual(problems, []);
  await context.close();
});

test('at the last and the first step the focus stays on a control, where Next or Back is disabled', async () => {
  const { page, problems, context } = await openStory({ path: `#step=${STEPS.at(-2).id}` });
  await storyReady(page);
  await page.focus('#story-next');
  await page.keyboard.press('Enter');
  await waitForStep(page, STEPS.at(-1).id);
  await page.waitForFunction(() => document.activeElement?.id === 'story-back');
  await page.evaluate((id) => { window.location.hash = `#step=${id}`; }, STEPS[1].id);
  await waitForStep(page, STEPS[1].id);
  await page.focus('#story-back');
  await page.keyboard.press('Enter');
  await waitForStep(page, STEPS[0].id);
  await page.waitForFunction(() => document.activeElement?.id === 'story-next');
  assert.deepEqual(problems, []);
  await context.close();
});

test('"Open this moment in the lab" lands on the same run, strategy and cursor', async () => {
  const { page, problems, context } = await openStory({ path: '#step=fencing-refuses' });
  await storyReady(page);
  assert.equal(await stepId(page), 'fencing-refuses');
  const cursor = await page.getAttribute('.story-page', 'data-cursor-ms');
  const digest = await page.getAttribute('.timeline', 'data-digest');
  const link = page.locator('#open-in-lab');
  await link.waitFor();
  assert.match(await link.getAttribute('href'), /^index\.html#v=1\./);
  await link.focus();
  await page.keyboard.press('Enter');
  await page.waitForSelector('.lab[data-ready="true"]');
  assert.equal(await page.getAttribute('.lab', 'data-strategy'), 'fencing');
  assert.equal(await page.getAttribute('.lab', 'data-cursor-ms'), cursor);
  assert.equal(await page.getAttribute('.timeline', 'data-digest'), digest, 'the same run, event for event');
  assert.deepEqual(problems, []);
  await context.close();
});

test('the story plays by itself at a reading pace, and Pause stops it', async () => {
  const { page, problems, context } = await openStory({ reducedMotion: 'no-preference', pausedClock: true });
  await storyReady(page);
  assert.equal(await page.getAttribute('.story-page', 'data-playing'), 'true');
  assert.equal(await page.textContent('#story-play'), '❚❚ Pause');
  // Not before the reader has had time to read: at least seven seconds.
  await context.clock.runFor(6_500);
  assert.equal(await stepId(page), STEPS[0].id);
  await context.clock.runFor(14_000);
  await waitForStep(page, STEPS[1].id);
  await page.click('#story-play');
  await page.waitForSelector('.story-page[data-playing="false"]');
  await context.clock.runFor(60_000);
  assert.equal(await stepId(page), STEPS[1].id, 'paused stays');
  assert.deepEqual(problems, []);
  await context.close();
});

test('embedded in a post, the story starts at a named step, fits its frame and never touches storage', async () => {
  // The story's own "Copy embed code" gives the snippet, for the step on screen.
  const reader = await openStory({ path: '#step=gc-pause' });
  await reader.context.grantPermissions(['clipboard-read', 'clipboard-write']);
  await reader.page.waitForSelector('.story-page[data-step="gc-pause"]');
  await reader.page.click('#copy-story-embed');
  await reader.page.locator('.copied-note', { hasText: 'Copied the embed code of this step' }).waitFor();
  const snippet = await reader.page.evaluate(() => navigator.clipboard.readText());
  await reader.context.close();
  assert.match(snippet, /^<iframe src="http:\/\/127\.0\.0\.1:\d+\/story\.html\?embed#step=gc-pause" title="locklab: [^"]+" data-locklab /);
  assert.match(snippet, /<script src="http:\/\/127\.0\.0\.1:\d+\/embed\.js" async><\/script>$/);
  const host = await openLab(env, {
    width: 1000,
    height: 800,
    init: () => {
      globalThis.storageCalls = 0;
      for (const name of ['getItem', 'setItem', 'removeItem', 'clear', 'key']) {
        const original = Storage.prototype[name];
        Storage.prototype[name] = function (...args) {
          globalThis.storageCalls += 1;
          return original.apply(this, args);
        };
      }
    },
  });
  const { page, problems } = host;
  await page.route('**/my-post.html', (route) => route.fulfill({
    contentType: 'text/html',
    body: `<!doctype html><html><body style="font-family: sans-serif; margin: 24px">
      <h1>The night our report ran twice</h1>
      ${snippet}<p id="after">The post goes on.</p></body></html>`,
  }));
  await page.goto(`${env.url}my-post.html`);
  const frame = page.frameLocator('iframe[data-locklab]');
  await frame.locator('.story-page.embed[data-ready="true"]').waitFor();
  const embedded = page.frames().find((candidate) => candidate.url().includes('story.html'));
  assert.equal(await embedded.getAttribute('.story-page', 'data-step'), 'gc-pause');
  assert.equal(await embedded.getAttribute('.story-page', 'data-playing'), 'false', 'an embed waits to be played');
  assert.equal(await embedded.locator('.story-top').count(), 0, 'no page chrome');
  assert.equal(await embedded.isVisible('.step-list'), false);
  const fits = () => page.waitForFunction(() => {
    const iframe = document.querySelector('iframe[data-locklab]');
    const inner = iframe.contentDocument;
    return Boolean(inner && iframe.style.height) && inner.documentElement.scrollHeight <= iframe.clientHeight;
  });
  await fits();
  const before = (await page.locator('iframe[data-locklab]').boundingBox()).height;
  assert.notEqual(before, 560, 'the frame was resized from its snippet height');
  await embedded.click('#story-next');
  await embedded.waitForFunction(() => document.querySelector('.story-page').dataset.step === 'handed-to-c');
  await page.setViewportSize({ width: 420, height: 800 });
  await page.waitForFunction((was) => document.querySelector('iframe[data-locklab]').clientHeight !== was, before);
  await fits();
  await shot(page, 'story-embed-in-post');
  assert.equal(await embedded.evaluate(() => globalThis.storageCalls), 0, 'the embedded story never read or wrote storage');
  assert.deepEqual(problems, []);
  await host.context.close();
});

test('at 375 px the story text comes first and nothing scrolls sideways, at every step', async () => {
  const { page, problems, context } = await openStory({ width: 375, height: 740 });
  await storyReady(page);
  const text = await page.locator('#story-text').boundingBox();
  const figure = await page.locator('.story-figure').boundingBox();
  assert.ok(text.y < figure.y, 'the text comes before the figure');
  assert.ok(text.y + text.height < 740, 'the text is on the first screen');
  for (const [index, step] of STEPS.entries()) {
    if (index > 0) await page.click('#story-next');
    await waitForStep(page, step.id);
    const overflow = await page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
    assert.ok(overflow <= 0, `step ${step.id} scrolls sideways by ${overflow}px`);
    await shot(page, `story-375-${String(index + 1).padStart(2, '0')}-${step.id}`);
  }
  assert.deepEqual(problems, []);
  await context.close();
});

test('story text meets WCAG AA contrast in both themes, axe finds nothing; an unknown story is named and the night told instead', async () => {
  for (const scheme of ['light', 'dark']) {
    const { page, problems, context } = await openStory({ scheme, path: '#step=two-holders' });
    await storyReady(page);
    await page.waitForSelector('#open-in-lab');
    assert.deepEqual(await axeViolations(page), [], `axe, ${scheme}`);
    const { failures, sampled } = await contrastFailures(page);
    assert.deepEqual(failures, [], scheme);
    assert.ok(sampled > 20, `${scheme}: ${sampled} text samples`);
    assert.deepEqual(problems, []);
    await context.close();
  }
  const { page, problems, context } = await openStory({ path: '?story=nowhere' });
  await storyReady(page);
  assert.match(await page.textContent('.message.error'), /no story named `nowhere`/);
  assert.equal(await stepId(page), STEPS[0].id);
  await page.goto(`${env.url}story.html?step-test#step=nowhere`);
  await storyReady(page);
  assert.match(await page.textContent('.message.error'), /no step named `nowhere`/);
  assert.equal(await stepId(page), STEPS[0].id);
  assert.deepEqual(problems, []);
  await context.close();
});

test('a first visit to the lab opens on the post\'s own lock, offers the story, and every page links to it', async () => {
  const { page, problems, context } = await openLab(env);
  await page.waitForSelector('.lab[data-ready="true"]');
  assert.equal(await page.getAttribute('.lab', 'data-strategy'), 'naive', 'the post\'s SET NX EX 300, not the fencing token');
  const offer = page.locator('#story-offer a');
  assert.equal(await offer.getAttribute('href'), 'story.html');
  assert.ok((await page.locator('#story-offer').boundingBox()).y < (await page.locator('.topbar').boundingBox()).y, 'the offer is the top line');
  assert.equal(await page.locator('.topbar .pages a[href="story.html"]').count(), 1, 'the lab\'s header links the story');
  // The cursor's time label and the axis labels are on lines of their own.
  const label = await page.locator('.cursor-label').boundingBox();
  for (const axis of await page.locator('.axis-label').all()) {
    const box = await axis.boundingBox();
    // (A text's box is its whole em box and halo; the glyphs sit around its middle.)
    const apart = label.y + label.height / 2 < box.y || box.x >= label.x + label.width || box.x + box.width <= label.x;
    assert.ok(apart, 'no axis label under the cursor\'s');
  }
  // Lighthouse's label-content-name-mismatch (axe-core's rule of that name) finds nothing.
  assert.deepEqual((await axeViolations(page)).filter((line) => line.startsWith('label-content-name-mismatch')), []);
  await page.goto(`${env.url}quiz.html`);
  await page.waitForSelector('.quiz[data-ready="true"]');
  assert.equal(await page.locator('.topbar a[href="story.html"]').count(), 1, 'the quiz links the story');
  assert.deepEqual(problems, []);
  await context.close();
});
