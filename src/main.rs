//! The `git-sage` binary: parse the command line, run, map errors to exit codes.

use clap::Parser;

fn main() {
    let cli = sage::cli::Cli::parse();
    let code = match sage::cli::run(cli) {
        Ok(code) => code,
        Err(e) => {
            sage::say!("git-sage: error: {e}");
            e.exit_code()
        }
    };
    std::process::exit(code);
}
