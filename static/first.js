// Runs before the page is first drawn (a classic script in <head>). The HTML
// holds the page's default first screen, drawn at build time by the page's
// own wasm (scripts/prerender.mjs); a page that opens on something else (an
// embed, a share link or a step in the address, a built-in named in it, the
// reader's saved lab) hides that copy and waits for its own.
(() => {
  const search = new URLSearchParams(location.search);
  let saved = false;
  // The lab's saved state, under the keys of frontend/src/lab/effects/storage.rs
  // (SCENARIO_KEY, STRATEGY_KEY): a saved lab opens on itself.
  if (document.currentScript?.dataset.savedLab !== undefined) {
    try {
      saved = localStorage.getItem('locklab/scenario') !== null || localStorage.getItem('locklab/strategy') !== null;
    } catch {
      // Storage refused: there is no saved lab to open.
    }
  }
  const named = ['embed', 'scenario', 'strategy', 'story', 'step', 'log'].some((name) => search.has(name));
  const fragment = location.hash.length > 1 && location.hash !== '#main';
  if (named || fragment || saved) document.documentElement.classList.add('own-first-screen');
})();
