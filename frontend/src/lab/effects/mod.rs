//! Every side effect of the lab, in one place, split by what each touches:
//! the address and storage (`storage`), time on the page (`frames`), the
//! keyboard and the screen (`input`), files (`files`), links and the
//! clipboard (`links`), and the Web Worker (`worker_link`). Components call
//! these; the reducer never does.

mod files;
mod frames;
mod input;
mod links;
mod storage;
mod worker_link;

pub use files::*;
pub use frames::*;
pub use input::*;
pub use links::*;
pub use storage::*;
pub use worker_link::*;
