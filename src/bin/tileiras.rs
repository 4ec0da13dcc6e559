//! `tileiras`: compiles Tile IR bytecode for an NVIDIA GPU. A drop-in for
//! NVIDIA's tool of the same name; see `tileiras --help`.
use std::io::Write;

fn main() {
    let argv: Vec<String> = std::env::args().skip(1).collect();
    let mut out = std::io::stdout().lock();
    let mut err = std::io::stderr().lock();
    let code = tileiras::cli::run(&argv, &mut out, &mut err);
    let _ = out.flush();
    let _ = err.flush();
    std::process::exit(code);
}
