// Starts the lab: loads the wasm-bindgen module and the WebAssembly file whose
// (hashed) names Trunk wrote on this script tag. An external module, so the
// page's Content-Security-Policy needs no 'unsafe-inline'.
const tag = document.querySelector('script[data-locklab-js]');
try {
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
