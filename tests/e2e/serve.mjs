// A tiny static file server for dist/: localhost only, no dependencies, no
// request ever leaves the machine. Used by the end-to-end tests (on an
// ephemeral port) and by scripts/serve.sh (on a fixed one). It compresses
// text and wasm with gzip when the browser asks, as any static host does, so
// a page's load is measured as readers get it.
import { createServer } from 'node:http';
import { gzipSync } from 'node:zlib';
import { readFile, stat } from 'node:fs/promises';
import { extname, join, normalize, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

/** What gzip is worth sending for: text and WebAssembly, not images. */
const COMPRESSED = new Set(['.html', '.js', '.mjs', '.css', '.wasm', '.svg', '.json', '.md']);

/** Each file's gzip, made once: the files of dist/ do not change while served. */
const gzipped = new Map();

const TYPES = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.mjs': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.wasm': 'application/wasm',
  '.svg': 'image/svg+xml',
  '.json': 'application/json',
  '.png': 'image/png',
  '.ico': 'image/x-icon',
};

/**
 * Serves `root` on 127.0.0.1:`port` (0: any free port) under the URL path
 * `prefix` (a sub-path like `/blog/lab/`, as a post's static host would;
 * anything outside it is 404); resolves to { url, close }.
 */
export function serveDist(root, port = 0, prefix = '/') {
  const base = resolve(root);
  const server = createServer(async (request, response) => {
    try {
      const full = decodeURIComponent(new URL(request.url, 'http://localhost').pathname);
      if (!full.startsWith(prefix)) throw new Error('outside the prefix');
      const path = full.slice(prefix.length - 1);
      let file = normalize(join(base, path));
      if (!file.startsWith(base)) {
        response.writeHead(403).end('forbidden');
        return;
      }
      if ((await stat(file).catch(() => null))?.isDirectory()) file = join(file, 'index.html');
      let body = await readFile(file);
      const headers = { 'content-type': TYPES[extname(file)] ?? 'application/octet-stream', 'cache-control': 'no-cache' };
      if (COMPRESSED.has(extname(file)) && /\bgzip\b/.test(request.headers['accept-encoding'] ?? '')) {
        if (!gzipped.has(file)) gzipped.set(file, gzipSync(body, { level: 9 }));
        body = gzipped.get(file);
        headers['content-encoding'] = 'gzip';
        headers.vary = 'accept-encoding';
      }
      response.writeHead(200, headers);
      response.end(body);
    } catch {
      response.writeHead(404, { 'content-type': 'text/plain' }).end('not found');
    }
  });
  return new Promise((done, fail) => {
    server.once('error', fail);
    server.listen(port, '127.0.0.1', () => {
      const { port: bound } = server.address();
      done({ url: `http://127.0.0.1:${bound}${prefix}`, close: () => new Promise((closed) => server.close(closed)) });
    });
  });
}

// As a program: node tests/e2e/serve.mjs [dir] [port]
if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const [dir = 'dist', port = '8080'] = process.argv.slice(2);
  const { url } = await serveDist(dir, Number(port));
  console.log(`locklab is served at ${url} (Ctrl+C to stop)`);
}
