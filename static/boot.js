// Starts the lab: loads the wasm-bindgen module and the WebAssembly file whose
// (hashed) names Trunk wrote on this script tag. An external module, so the
// page's Content-Security-Policy needs no 'unsafe-inline'.
// A share link (`#v=…`) is unpacked here, before the lab starts, so the lab
// opens on it in one render (see static/link.js); the wasm reads the result
// from `locklabLink` and encodes new links with `locklabEncodeLink`.
// `locklabFetchText` fetches a file beside the page as text, for the lab's
// built-in scenarios (all but the first are files in `scenarios/`).
// Embedded (`?embed`, inside a frame), the page tells its parent its height
// whenever it changes, so the host's embed.js can fit the frame to it.
import { decodeLink, encodeLink } from './link.js';
import './figure.js';

if (new URLSearchParams(location.search).has('embed') && window.parent !== window) {
  const host =
    document.getElementById('lab') ?? document.getElementById('story') ?? document.getElementById('recorded') ?? document.body;
  let sent = 0;
  const post = () => {
    // The content's bottom edge plus the body's margin below it: the height
    // the frame needs for no inner scrollbar.
    const margin = parseFloat(getComputedStyle(document.body).marginBottom) || 0;
    const height = Math.ceil(host.getBoundingClientRect().bottom + window.scrollY + margin);
    if (height === sent) return;
    sent = height;
    window.parent.postMessage({ type: 'locklab:height', height }, '*');
  };
  new ResizeObserver(post).observe(host);
}

const tag = document.querySelector('script[data-locklab-js]');
try {
  globalThis.locklabEncodeLink = encodeLink;
  globalThis.locklabFetchText = async (path) => {
    const response = await fetch(path);
    if (!response.ok) throw `${path} answered ${response.status}`;
    return response.text();
  };
  if (location.hash.startsWith('#v=')) globalThis.locklabLink = await decodeLink(location.hash);
  const { default: init } = await import(tag.dataset.locklabJs);
  await init({ module_or_path: tag.dataset.locklabWasm });
} catch (error) {
  const note = document.getElementById('boot-note');
  if (note) {
    note.textContent = `The lab could not start: ${error}`;
    note.setAttribute('role', 'alert');
  }
  throw error;
}
