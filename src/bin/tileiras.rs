//! `tileiras`: compiles Tile IR bytecode for an NVIDIA GPU. A drop-in for
//! NVIDIA's tool of the same name; see `tileiras --help`.
use std::io::Write;

fn main() {
    // Children and temporary files go with the tool when it is killed.
    tileiras::signals::install();
    let mut args = std::env::args_os();
    let program = args.next().unwrap_or_else(|| "tileiras".into());
    let argv: Vec<_> = args.collect();
    let mut out = std::io::stdout().lock();
    let mut err = std::io::stderr().lock();
    let code = tileiras::cli::run(&program, &argv, &mut out, &mut err);
    let _ = out.flush();
    let _ = err.flush();
    std::process::exit(code);
}
