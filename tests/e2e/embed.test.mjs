// End-to-end tests of figures and embedding: the timeline exported as SVG
// and PNG and the event log as JSON from the lab page (made by the lab's
// worker); the SVG opens and shows one mark per write in the log, which is
// the run the lab shows, mark for mark as the lab draws it; "Copy embed code" gives an <iframe> snippet that,
// inside a host page with embed.js, shows the compact view and sizes its
// frame by postMessage. Screenshots in tests/screenshots/. No sleeps.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { start, openLab, ready, message, dismiss, loadBuiltin, chooseStrategy, scrubPercent, shot, openShareMenu } from './helpers.mjs';

let env;
before(async () => { env = await start(); });
after(async () => { await env?.stop(); });

/** Clicks an export button and returns the download's file name and bytes. */
async function exported(page, button) {
  await dismiss(page);
  await openShareMenu(page);
  const [download] = await Promise.all([page.waitForEvent('download'), page.click(button)]);
  await message(page, /^Exported/);
  return { name: download.suggestedFilename(), bytes: readFileSync(await download.path()) };
}

/** Writes in an exported log: storage PUTs and report-row writes. */
const writesIn = (log) => log.events
  .filter((event) => event.type === 'put' || event.statement?.statement === 'write_report').length;

test('the timeline exports as SVG and PNG and the log as JSON; the SVG shows every write in the log', async () => {
  const { page, context, problems } = await openLab(env);
  await ready(page);
  await loadBuiltin(page, 'delayed-packet');
  await chooseStrategy(page, 'redlock');
  const eventsShown = Number(await page.getAttribute('.timeline', 'data-events'));
  // The marks the lab draws, each by its tooltip, in drawing order.
  const marksOf = (svg) => [...svg.querySelectorAll('title')].map((title) => title.textContent);
  const onScreen = await page.locator('.timeline svg.lanes').first().evaluate(marksOf);

  const logFile = await exported(page, '#export-log');
  assert.equal(logFile.name, 'delayed-packet-redlock.log.json');
  const log = JSON.parse(logFile.bytes.toString('utf8'));
  assert.equal(log.format, 'locklab-log/1');
  assert.equal(log.strategy, 'redlock');
  assert.equal(log.scenario, 'Delayed packet');
  assert.equal(log.events.length, eventsShown, 'the exported log is the run the lab shows');
  assert.ok(log.events.every((event) => typeof event.text === 'string' && event.text.length > 0));

  const svgFile = await exported(page, '#export-svg');
  assert.equal(svgFile.name, 'delayed-packet-redlock.svg');
  const svg = svgFile.bytes.toString('utf8');
  assert.match(svg, /^<svg xmlns="http:\/\/www.w3.org\/2000\/svg"/);

  const pngFile = await exported(page, '#export-png');
  assert.equal(pngFile.name, 'delayed-packet-redlock.png');
  assert.deepEqual([...pngFile.bytes.subarray(0, 8)], [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a], 'a PNG file');
  const pngWidth = pngFile.bytes.readUInt32BE(16);
  assert.ok(pngWidth >= 1000, `the PNG is ${pngWidth} px wide`);
  assert.deepEqual(problems, []);
  await context.close();

  // The SVG opens on its own (no page, no styles from the lab) and shows one mark per write.
  const viewer = await env.browser.newContext({ viewport: { width: 1300, height: 700 } });
  const figure = await viewer.newPage();
  await figure.setContent(svg);
  const marks = await figure.locator('svg g.write').count();
  const writes = writesIn(log);
  assert.ok(writes > 0);
  assert.equal(marks, writes, 'one mark per write in the log');
  const inFigure = await figure.locator('svg.lanes').evaluate(marksOf);
  assert.ok(onScreen.length > 20, `the lab draws ${onScreen.length} marks`);
  assert.deepEqual(inFigure, onScreen, 'the exported figure draws the marks the lab shows');
  const box = await figure.locator('body > svg').boundingBox();
  assert.ok(box.width > 1000 && box.height > 200, 'the figure has its size');
  await figure.screenshot({ path: 'tests/screenshots/export-svg.png' });
  const image = await viewer.newPage();
  await image.setContent(`<img id="png" src="data:image/png;base64,${pngFile.bytes.toString('base64')}">`);
  await image.waitForFunction(() => document.getElementById('png').naturalWidth > 0);
  await viewer.close();
});

test('the embed code shows the compact view in a host page, and the frame fits its content', async () => {
  const first = await openLab(env);
  await first.context.grantPermissions(['clipboard-read', 'clipboard-write']);
  await ready(first.page);
  await loadBuiltin(first.page, 'pause-after-check');
  await chooseStrategy(first.page, 'fencing');
  await scrubPercent(first.page, 2);
  const cursor = await first.page.getAttribute('.lab', 'data-cursor-ms');
  const eventsShown = await first.page.getAttribute('.timeline', 'data-events');
  await dismiss(first.page);
  await openShareMenu(first.page);
  await first.page.click('#copy-embed');
  await message(first.page, /^Copied the embed code/);
  // The snippet goes to the clipboard, not into the notice, which stays one short line.
  assert.doesNotMatch(await first.page.textContent('#message'), /iframe/, 'the notice does not print the snippet');
  const snippet = await first.page.evaluate(() => navigator.clipboard.readText());
  await first.context.close();
  assert.match(snippet, /^<iframe src="http:\/\/127\.0\.0\.1:\d+\/\?embed#v=1\.[A-Za-z0-9_-]+" title="locklab: [^"]+" data-locklab /);
  assert.match(snippet, /<script src="http:\/\/127\.0\.0\.1:\d+\/embed\.js" async><\/script>$/);

  // A post on the same host: the page is served by routing, so nothing leaves the machine.
  const host = await openLab(env, { width: 900, height: 700 });
  const { page, problems } = host;
  await page.route('**/my-post.html', (route) => route.fulfill({
    contentType: 'text/html',
    body: `<!doctype html><html><body style="font-family: sans-serif; margin: 24px">
      <h1>Why my lock failed</h1><p>Here is the run:</p>${snippet}<p id="after">And after the frame, the post goes on.</p>
      </body></html>`,
  }));
  await page.goto(`${env.url}my-post.html`);
  const frameElement = page.locator('iframe[data-locklab]');
  const frame = page.frameLocator('iframe[data-locklab]');
  await frame.locator('.lab.embed[data-ready="true"]').waitFor();
  const embedded = page.frames().find((candidate) => candidate.url().includes('?embed'));
  assert.equal(await embedded.getAttribute('.lab', 'data-cursor-ms'), cursor, 'the link\'s cursor');
  assert.equal(await embedded.getAttribute('.timeline', 'data-events'), eventsShown, 'the same run');
  assert.equal(await embedded.locator('.topbar, .share-bar, .inject-panel, .log-panel').count(), 0, 'no page chrome');
  assert.equal(await embedded.locator('.verdict-panel').count(), 1);
  assert.equal(await embedded.locator('#play').count(), 1);
  // The night under all six: each strategy's three verdicts, and a way to switch.
  assert.equal(await embedded.locator('.picker .choice').count(), 6);
  await embedded.locator('.picker .choice-verdict:not(.pending)').nth(5).waitFor();
  // The frame takes the content's height: no inner scrollbar, no gap.
  await page.waitForFunction(() => {
    const iframe = document.querySelector('iframe[data-locklab]');
    const inner = iframe.contentDocument;
    if (!inner || !iframe.style.height) return false;
    const content = inner.getElementById('lab').getBoundingClientRect().bottom;
    return inner.documentElement.scrollHeight <= iframe.clientHeight && iframe.clientHeight - content < 40;
  });
  const before = (await frameElement.boundingBox()).height;
  assert.notEqual(before, 560, 'the frame was resized from its snippet height');
  // Playing and stepping work inside the frame.
  await embedded.click('#step-forward');
  await embedded.waitForFunction((was) => document.querySelector('.lab').dataset.cursorMs !== was, cursor);
  // A narrower post reflows the embed; the frame follows its new height.
  await page.setViewportSize({ width: 420, height: 700 });
  await page.waitForFunction((was) => {
    const iframe = document.querySelector('iframe[data-locklab]');
    return iframe.clientHeight !== was && iframe.contentDocument.documentElement.scrollHeight <= iframe.clientHeight;
  }, before);
  const open = embedded.locator('#open-full-size');
  assert.match(await open.getAttribute('href'), /^\.\/#v=1\./);
  assert.equal(await open.getAttribute('target'), '_blank');
  await page.setViewportSize({ width: 900, height: 700 });
  await page.waitForFunction(() => {
    const iframe = document.querySelector('iframe[data-locklab]');
    return iframe.contentDocument.documentElement.scrollHeight <= iframe.clientHeight;
  });
  await shot(page, 'embed-in-post');
  assert.deepEqual(problems, []);
  await host.context.close();
});

test('in a 700 px blog column and on a phone the lab embed fits: no inner scroll, the night within 1,100 px', async () => {
  // The post's night, as a fresh embed shows it, in a column as wide as a blog's.
  for (const [width, column, tallest] of [[1200, 700, 1100], [375, 343, null]]) {
    const host = await openLab(env, { width, height: 800 });
    const { page, problems } = host;
    await page.route('**/column.html', (route) => route.fulfill({
      contentType: 'text/html',
      body: `<!doctype html><html><body style="margin: 16px"><main style="width: ${column}px; margin: 0 auto">
        <p>Before the frame.</p>
        <iframe src="./?embed" data-locklab width="100%" height="560" style="border:0" title="locklab"></iframe>
        <script src="embed.js" async></script><p>After it.</p></main></body></html>`,
    }));
    await page.goto(`${env.url}column.html`);
    await page.frameLocator('iframe[data-locklab]').locator('.lab.embed[data-ready="true"]').waitFor();
    // The frame takes the content's height, and the content ends where the lab does.
    await page.waitForFunction(() => {
      const iframe = document.querySelector('iframe[data-locklab]');
      const inner = iframe.contentDocument;
      if (!inner || !iframe.style.height) return false;
      const lab = inner.getElementById('lab').getBoundingClientRect().bottom;
      return inner.documentElement.scrollHeight <= iframe.clientHeight && Math.abs(inner.documentElement.scrollHeight - lab) < 40;
    });
    const embedded = page.frames().find((candidate) => candidate.url().includes('?embed'));
    // The figures and findings wait behind a disclosure; the verdict's three axes do not.
    assert.equal(await embedded.isVisible('.verdicts .metrics'), false, 'the figures are folded');
    assert.equal(await embedded.isVisible('.verdict-head'), true);
    const height = (await page.locator('iframe[data-locklab]').boundingBox()).height;
    if (tallest) assert.ok(height <= tallest, `the embed is ${height} px tall in a ${column} px column`);
    await shot(page, `embed-column-${column}`);
    assert.deepEqual(problems, []);
    await host.context.close();
  }
});

test('an embedded lab neither reads nor replaces the reader\'s own saved lab', async () => {
  const { page, context } = await openLab(env);
  await ready(page);
  await loadBuiltin(page, 'calm-night');
  await chooseStrategy(page, 'db-lock');
  const embed = await context.newPage();
  await embed.goto(`${env.url}?embed&scenario=delayed-packet&strategy=redlock`);
  await embed.waitForSelector('.lab.embed[data-ready="true"][data-strategy="redlock"]');
  assert.match(await embed.textContent('.embed-title'), /Delayed packet/);
  assert.match(await embed.getAttribute('#open-full-size', 'href'), /^\.\/\?scenario=delayed-packet&strategy=redlock$/);
  await page.reload();
  await ready(page);
  assert.equal(await page.getAttribute('.lab', 'data-strategy'), 'db-lock');
  assert.match(await page.textContent('.scenario-line'), /calm night/i);
  await context.close();
});
