//! The `git-sage` binary: everything is in the library's `cli::main`.

fn main() {
    std::process::exit(sage::cli::main());
}
