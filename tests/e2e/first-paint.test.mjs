// The first paint needs no WebAssembly (scripts/prerender.mjs): the lab's and
// the story's HTML already hold their first screen, drawn at build time by
// the page's own wasm, and the wasm draws the same when it takes over.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { start, openLab, ready, shot } from './helpers.mjs';

let env;
before(async () => { env = await start(); });
after(async () => { await env?.stop(); });

/** The lanes' markup without ids (the copy's are renamed so that none is in the page twice). */
const lanesOf = (markup) => markup.replace(/ (data-prerendered-)?id="[^"]*"/g, '');

for (const { file, root, page: pageClass } of [
  { file: 'index.html', root: 'lab', page: '.lab' },
  { file: 'story.html', root: 'story', page: '.story-page' },
]) {
  test(`${file}: the first screen is in the HTML, for a desktop and a phone, and the wasm draws the same`, async () => {
    const html = await (await fetch(`${env.url}${file}`)).text();
    for (const layout of ['wide', 'narrow']) {
      const copy = html.match(new RegExp(`<div class="prerendered prerendered-${layout}" inert aria-hidden="true">`));
      assert.ok(copy, `${file} holds the ${layout} first screen`);
    }
    assert.ok((html.match(/<svg class="lanes/g) ?? []).length >= 2, 'the timeline is drawn in both');
    assert.doesNotMatch(html.replace(/<div class="prerendered[\s\S]*$/, ''), /data-prerendered-id/, 'ids renamed only in the copies');
    for (const [width, height, layout] of [[1440, 900, 'wide'], [375, 812, 'narrow']]) {
      // Without the wasm (scripts off), the copy that fits the screen shows the timeline on the first screen.
      const still = await env.browser.newContext({ viewport: { width, height }, javaScriptEnabled: false });
      const off = await still.newPage();
      await off.goto(`${env.url}${file}`);
      const copy = off.locator(`.prerendered-${layout}`);
      assert.equal(await copy.isVisible(), true, `${layout}: the copy that fits shows`);
      assert.equal(await off.locator(`.prerendered-${layout === 'wide' ? 'narrow' : 'wide'}`).isVisible(), false);
      const drawn = await copy.locator('svg.lanes').first().evaluate((svg) => svg.outerHTML);
      await shot(off, `first-paint-${root}-${width}`);
      await still.close();
      // With it, the page clears the copies and draws the same lanes.
      const { page, context, problems } = await openLab(env, { width, height, path: file });
      if (root === 'lab') await ready(page);
      else await page.waitForSelector(`${pageClass}[data-ready="true"]`);
      assert.equal(await page.locator('.prerendered').count(), 0, 'the wasm took over');
      const live = await page.locator('svg.lanes').first().evaluate((svg) => svg.outerHTML);
      assert.equal(lanesOf(live), lanesOf(drawn), `${layout}: the wasm draws what the HTML showed`);
      assert.deepEqual(problems, []);
      await context.close();
    }
  });
}

test('an embed, a share link or a saved lab hides the built-in first screen and waits for its own', async () => {
  for (const path of ['index.html?embed', 'index.html?scenario=calm-night', 'story.html#step=gc-pause']) {
    const still = await env.browser.newContext({ viewport: { width: 1440, height: 900 } });
    const page = await still.newPage();
    // The copies are checked before the wasm clears them: its module is held back.
    await page.route('**/*.wasm', () => {});
    await page.goto(`${env.url}${path}`);
    assert.equal(await page.evaluate(() => document.documentElement.classList.contains('own-first-screen')), true, path);
    assert.equal(await page.locator('.prerendered-wide').isVisible(), false, `${path}: the built-in copy is hidden`);
    await still.close();
  }
  const saved = await env.browser.newContext({ viewport: { width: 1440, height: 900 } });
  await saved.addInitScript(() => localStorage.setItem('locklab/strategy', 'fencing'));
  const page = await saved.newPage();
  await page.route('**/*.wasm', () => {});
  await page.goto(env.url);
  assert.equal(await page.locator('.prerendered-wide').isVisible(), false, 'a saved lab opens on itself');
  await saved.close();
});
