// Puts each page's first screen in its HTML, so the first paint needs no
// WebAssembly (issue 28, point 1): the lab's and the story's pages are opened
// in Chromium from dist/, their own wasm draws the post's night (the engine's
// SVG writer, the lanes every page shows), and the drawing is written into
// dist/*.html, once as a desktop draws it and once as a phone does (the style
// sheet shows the one that fits). The wasm clears its root and draws the
// same thing when it is ready, so nothing jumps. The copies are inert (not
// focusable, not clickable, hidden from assistive technology): the controls
// work once the wasm has taken over. An embedded view (`?embed`) and a share
// link show their own first screen, so static/first.js hides the copies there.
//
//   node scripts/prerender.mjs [dist]
//
// Run by scripts/build-web.sh after Trunk; needs what scripts/setup.sh
// installs (Debian's Chromium, npm's playwright-core). Uses no network.
import { readFileSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { chromium } from 'playwright-core';
import { serveDist } from '../tests/e2e/serve.mjs';

const DIST = resolve(process.argv[2] ?? 'dist');
const CHROMIUM = process.env.CHROMIUM ?? '/usr/bin/chromium';
const ARGS = ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking',
  '--disable-component-update', '--disable-sync'];
/** The pages, the element each mounts on, and what says its first screen is drawn. */
const PAGES = [
  { file: 'index.html', root: 'lab', ready: '.lab[data-ready="true"] .picker .choice-verdict:not(.pending) >> nth=5' },
  { file: 'story.html', root: 'story', ready: '.story-page[data-ready="true"] .timeline' },
];
/** A desktop and a phone: the two layouts the pages draw (ui::input's NARROW_QUERY is 700 px). */
const SCREENS = [{ name: 'wide', width: 1440, height: 900 }, { name: 'narrow', width: 412, height: 823 }];

const server = await serveDist(DIST);
const browser = await chromium.launch({ executablePath: CHROMIUM, args: ARGS });
try {
  for (const { file, root, ready } of PAGES) {
    const copies = [];
    for (const screen of SCREENS) {
      // As a first visit sees it: no link, no saved lab; the story at its first step.
      const context = await browser.newContext({ viewport: screen });
      const page = await context.newPage();
      await page.goto(`${server.url}${file}`);
      await page.locator(ready).first().waitFor({ state: 'attached', timeout: 60_000 });
      // The copy must not pass for the page itself: no ids twice in the
      // document, and none of the state a reader's tools (and the tests) wait
      // for, such as data-ready="true".
      const markup = (await page.evaluate((id) => {
        const element = document.getElementById(id);
        // A form control's state is a property the markup does not carry: written as attributes.
        for (const input of element.querySelectorAll('input')) {
          input.setAttribute('value', input.value);
          if (input.checked) input.setAttribute('checked', '');
        }
        for (const option of element.querySelectorAll('option')) {
          if (option.selected) option.setAttribute('selected', '');
        }
        return element.innerHTML;
      }, root))
        .replace(/ id="/g, ' data-prerendered-id="')
        .replace(/ data-(ready|step|strategy|cursor-ms|playing|digest|events)="/g, ' data-prerendered-$1="');
      copies.push(`<div class="prerendered prerendered-${screen.name}" inert aria-hidden="true">${markup}</div>`);
      await context.close();
    }
    const path = join(DIST, file);
    const html = readFileSync(path, 'utf8');
    // The copies go before the boot note, which stays (boot.js writes a start failure there).
    // (Trunk writes the HTML minified: attribute values may have no quotes.)
    const note = new RegExp(`(<div id="?${root}"?>[\\s\\S]*?)(<p class="?boot-note"? id="?boot-note"?>)`);
    if (!note.test(html)) throw new Error(`${file}: no #${root} with a boot note to put the first screen before`);
    if (html.includes('class="prerendered')) throw new Error(`${file}: already has its first screen`);
    writeFileSync(path, html.replace(note, `$1${copies.join('')}$2`));
    console.log(`${file}: first screen written (${copies.map((copy) => copy.length).join(' + ')} characters)`);
  }
} finally {
  await browser.close();
  await server.close();
}
