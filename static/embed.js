// locklab embed helper, for the page that hosts an embedded lab.
//
//   <iframe src="https://…/locklab/?embed#v=1.…" data-locklab width="100%" height="560"
//           style="border:0" loading="lazy" title="…"></iframe>
//   <script src="https://…/locklab/embed.js" async></script>
//
// An embedded lab (`?embed`) posts its content height to its parent window
// whenever it changes, as {type: "locklab:height", height: <CSS pixels>}.
// This script listens for those messages and sets the height of the
// <iframe data-locklab> that sent it, so the frame fits its content with no
// inner scrollbar. It only ever changes the height of a frame it can match to
// the message's sender, and clamps it to 120–4000 px. No dependencies, no
// requests; safe to include more than once.
(() => {
  if (globalThis.locklabEmbedResizer) return;
  globalThis.locklabEmbedResizer = true;
  const MIN_HEIGHT_PX = 120;
  const MAX_HEIGHT_PX = 4000;
  window.addEventListener('message', (event) => {
    const data = event.data;
    if (!data || data.type !== 'locklab:height' || !Number.isFinite(data.height)) return;
    for (const frame of document.querySelectorAll('iframe[data-locklab]')) {
      if (frame.contentWindow !== event.source) continue;
      const height = Math.min(MAX_HEIGHT_PX, Math.max(MIN_HEIGHT_PX, Math.ceil(data.height)));
      frame.style.height = `${height}px`;
    }
  });
})();
