// Share-link codec for the page: the byte work of locklab's link format v1
// (engine/src/link.rs: `1.` + base64url, no padding, of raw DEFLATE of the
// state's JSON), done with the browser's own CompressionStream so the wasm
// carries no DEFLATE code (it would not fit the lab's size budget). The wasm
// still parses and validates the JSON and words every error with the engine's
// `LinkError`; this file only names which byte-level error it was.
// No dependencies, no requests.

const MAX_LINK_CHARS = 64 * 1024; // engine: MAX_LINK_CHARS
const MAX_STATE_BYTES = 512 * 1024; // engine: MAX_STATE_BYTES

async function pipe(bytes, stream, limit) {
  const reader = new Blob([bytes]).stream().pipeThrough(stream).getReader();
  const chunks = [];
  let total = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    total += value.length;
    if (total > limit) {
      await reader.cancel();
      return null;
    }
    chunks.push(value);
  }
  const out = new Uint8Array(total);
  let at = 0;
  for (const chunk of chunks) {
    out.set(chunk, at);
    at += chunk.length;
  }
  return out;
}

/** The JSON of a link (`#v=1.…` or `1.…`) as `{ json }`, or `{ error, detail }`. */
export async function decodeLink(link) {
  link = link.trim().replace(/^#/, '').replace(/^v=/, '');
  if (!link) return { error: 'Empty' };
  if (link.length > MAX_LINK_CHARS) return { error: 'TooLong', detail: String([...link].length) };
  const dot = link.indexOf('.');
  if (dot < 0) return { error: 'NoVersion' };
  const version = link.slice(0, dot);
  if (version !== '1') return { error: 'UnknownVersion', detail: [...version].slice(0, 12).join('') };
  const payload = link.slice(dot + 1);
  if (!/^[A-Za-z0-9_-]*$/.test(payload)) return { error: 'NotBase64' };
  if (payload.length % 4 === 1) return { error: 'Damaged' };
  let bytes;
  try {
    const binary = atob(payload.replace(/-/g, '+').replace(/_/g, '/'));
    bytes = Uint8Array.from(binary, (c) => c.charCodeAt(0));
  } catch {
    return { error: 'Damaged' };
  }
  let json;
  try {
    json = await pipe(bytes, new DecompressionStream('deflate-raw'), MAX_STATE_BYTES);
  } catch {
    return { error: 'Damaged' };
  }
  if (json === null) return { error: 'TooLarge' };
  try {
    return { json: new TextDecoder('utf-8', { fatal: true }).decode(json) };
  } catch {
    return { error: 'Damaged' };
  }
}

/** A state's JSON as a link fragment (`1.…`). */
export async function encodeLink(json) {
  const packed = await pipe(new TextEncoder().encode(json), new CompressionStream('deflate-raw'), Infinity);
  let binary = '';
  for (const byte of packed) binary += String.fromCharCode(byte);
  return `1.${btoa(binary).replace(/\+/g, '-').replace(/\//g, '_').replace(/=+$/, '')}`;
}
