//! The `tileirdisasm` command-line tool: prints TileIR bytecode as text,
//! like NVIDIA's tool of the same name.
use std::ffi::OsString;
use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;

use tileiras::cli::args::{check_preview, parse_bool};
use tileiras::ir::print::{print_module, PrintOptions};
use tileiras::{bytecode, verify};

const OVERVIEW: &str = "OVERVIEW: tileirdisasm: NVIDIA (R) Cuda Tile IR disassembler\n\nUSAGE: tileirdisasm [options] <tile bytecode file>\n\nOPTIONS:\n";

fn help(full: bool) -> String {
    let mut s = String::from(OVERVIEW);
    if full {
        s.push_str("\nGeneric Options:\n\n  --help                           - Display available options (--help-hidden for more)\n  --help-list                      - Display list of available options (--help-list-hidden for more)\n  --version                        - Display the version of this program\n\nTileIR Disassembler Options:\n\n  -g                               - Alias for --print-debug-info\n  --preview=<feature[,feature...]> - Enable one or more named preview features\n  --print-debug-info               - Annotate disassembly with debugging information, if present.\n");
    } else {
        s.push_str("  -g                               - Alias for --print-debug-info\n  --help                           - Display available options (--help-hidden for more)\n  --preview=<feature[,feature...]> - Enable one or more named preview features\n  --print-debug-info               - Annotate disassembly with debugging information, if present.\n  --version                        - Display the version of this program\n");
    }
    s
}

fn main() -> ExitCode {
    // Arguments need not be UTF-8: the input path is taken as it is.
    let args: Vec<OsString> = std::env::args_os().collect();
    let prog = args
        .first()
        .map_or_else(|| "tileirdisasm".into(), |a| a.to_string_lossy());
    let mut debug_info = false;
    let mut input: Option<PathBuf> = None;
    let mut positional_only = false;
    for raw in args.iter().skip(1) {
        let text = raw.to_string_lossy();
        let a: &str = &text;
        if positional_only || !a.starts_with('-') || a == "-" {
            if input.is_some() {
                eprintln!("tileirdisasm: Too many positional arguments specified!\nCan specify at most 1 positional arguments: See: {prog} --help");
                return ExitCode::from(1);
            }
            input = Some(PathBuf::from(raw));
            continue;
        }
        match a {
            "--" => positional_only = true,
            "-g" | "--g" | "-print-debug-info" | "--print-debug-info" => debug_info = true,
            s if s.starts_with("-g=")
                || s.starts_with("--g=")
                || s.starts_with("-print-debug-info=")
                || s.starts_with("--print-debug-info=") =>
            {
                let v = &s[s.find('=').map_or(s.len(), |i| i + 1)..];
                // `-g` is an alias: LLVM names the aliased option.
                match parse_bool("print-debug-info", v) {
                    Ok(on) => debug_info = on,
                    Err(e) => {
                        eprintln!("tileirdisasm: {e}");
                        return ExitCode::from(1);
                    }
                }
            }
            "--help" | "-help" | "--help-hidden" | "-help-hidden" => {
                print!("{}", help(true));
                return ExitCode::SUCCESS;
            }
            "--help-list" | "-help-list" | "--help-list-hidden" => {
                print!("{}", help(false));
                return ExitCode::SUCCESS;
            }
            "--version" | "-version" => {
                println!(
                    "tileirdisasm: NVIDIA (R) Cuda Tile IR disassembler (tileiras-rs {})",
                    tileiras::VERSION
                );
                return ExitCode::SUCCESS;
            }
            s if s.starts_with("--preview=") || s.starts_with("-preview=") => {
                let list = &s[s.find('=').map_or(s.len(), |i| i + 1)..];
                if let Err(e) = check_preview(list) {
                    eprintln!("tileirdisasm: {e}");
                    return ExitCode::from(1);
                }
            }
            _ => {
                eprintln!(
                    "tileirdisasm: Unknown command line argument '{a}'.  Try: '{prog} --help'"
                );
                eprintln!("tileirdisasm: Did you mean '-g'?");
                return ExitCode::from(1);
            }
        }
    }
    let Some(path) = input else {
        eprintln!("error: no input file provided\n");
        print!("{}", help(false));
        return ExitCode::from(2);
    };
    let data = match std::fs::read(&path) {
        Ok(d) => d,
        Err(e) => {
            // strerror text, without Rust's " (os error N)" suffix.
            let text = e.to_string();
            let msg = match text.find(" (os error") {
                Some(i) => &text[..i],
                None => &text,
            };
            eprintln!(
                "error: error: unable to read input file '{}': {msg}\n",
                path.display()
            );
            return ExitCode::from(2);
        }
    };
    match bytecode::read(&data) {
        Ok(module) => {
            // Like NVIDIA's tool: a module is verified, then its format
            // invariants checked, before it is printed.
            let failure = match verify::verify(&module) {
                Err(diags) => Some((
                    diags,
                    "verification failed for deserialized cuda_tile::ModuleOp",
                )),
                Ok(()) => verify::invariants::check(&module)
                    .err()
                    .map(|d| (vec![d], verify::invariants::NOT_CONFORMING)),
            };
            if let Some((diags, closing)) = failure {
                for d in diags {
                    eprintln!("{d}");
                }
                eprintln!("error: {closing}");
                eprintln!("error: failed to read provided Tile IR bytecode");
                return ExitCode::from(3);
            }
            let text = print_module(&module, &PrintOptions { debug_info });
            // Bytes of invalid UTF-8 in the input's strings go back out as is.
            let bytes = tileiras::ir::string_to_bytes(&text);
            let mut out = std::io::stdout().lock();
            if out.write_all(&bytes).and_then(|_| out.flush()).is_err() {
                return ExitCode::from(1);
            }
            ExitCode::SUCCESS
        }
        Err(e) => {
            for line in e.disasm_lines() {
                eprintln!("error: {line}");
            }
            ExitCode::from(3)
        }
    }
}
