// Figures for the lab's exports: turns the timeline's SVG (made by the
// engine in the lab's worker, the same SVG as `locklab render`) into a PNG by
// drawing it on a canvas. The SVG is self-contained (its own styles, no
// external references), so it draws the same as it renders. The image is
// loaded from a data: URL, which the page's Content-Security-Policy allows
// for images; no request leaves the page.

const SCALE = 2; // twice the SVG's size, so the picture stays sharp on high-density screens

globalThis.locklabSvgToPng = async function svgToPng(svgText) {
  const image = new Image();
  const loaded = new Promise((resolve, reject) => {
    image.onload = resolve;
    image.onerror = () => reject('the browser could not read the SVG');
  });
  image.src = `data:image/svg+xml;charset=utf-8,${encodeURIComponent(svgText)}`;
  await loaded;
  const canvas = document.createElement('canvas');
  canvas.width = Math.max(1, Math.round(image.naturalWidth * SCALE));
  canvas.height = Math.max(1, Math.round(image.naturalHeight * SCALE));
  const context = canvas.getContext('2d');
  if (!context) throw 'this browser has no 2D canvas';
  context.scale(SCALE, SCALE);
  context.drawImage(image, 0, 0);
  return await new Promise((resolve, reject) =>
    canvas.toBlob((blob) => (blob ? resolve(blob) : reject('the canvas gave no PNG')), 'image/png'));
};
