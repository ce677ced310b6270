//! Drawing SVG as text: the engine's writer (`locklab_engine::svg`), which
//! draws the timeline for every page and the exported figure. The topology,
//! the charts and the forms use it too: many small shapes written as markup
//! and handed to Yew as one raw node cost far less WebAssembly than a
//! virtual-DOM node per shape, and render faster.

pub use locklab_engine::svg::{Esc, Num, Svg};
