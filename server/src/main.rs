// Tests read and write their fixtures as they like; clippy.toml holds product code to
// pivot-base's bounded reads and whole writes.
#![cfg_attr(test, allow(clippy::disallowed_methods))]

// mimalloc for Rust and for tree-sitter's C core: allocation was about a sixth of the
// batch scorer's instructions with the system allocator.
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() {
    // SAFETY: called once, first thing, before any tree-sitter object exists, so nothing
    // allocated by one allocator is freed by the other.
    unsafe {
        tree_sitter::set_allocator(
            Some(libmimalloc_sys::mi_malloc),
            Some(libmimalloc_sys::mi_calloc),
            Some(libmimalloc_sys::mi_realloc),
            Some(libmimalloc_sys::mi_free),
        );
    }
    // A closed pipe (`pivot-lsp extract f.py | head`) ends the process quietly, as for
    // other command-line tools, instead of a panic in `println!`. Rust ignores SIGPIPE by
    // default; this restores the default action.
    // SAFETY: no other thread exists yet.
    unsafe {
        libc::signal(libc::SIGPIPE, libc::SIG_DFL);
    }
    std::process::exit(pivot_lsp::cli::main());
}
