//! Fuzz target: any bytecode the reader and verifier accept must lower to
//! PTX or fail with an error, for every target family, never panic.
#![no_main]
use libfuzzer_sys::fuzz_target;
use tileiras::options::{Gpu, Options};

fuzz_target!(|data: &[u8]| {
    let Ok(m) = tileiras::bytecode::read(data) else {
        return;
    };
    if tileiras::verify::verify(&m).is_err() {
        return;
    }
    for gpu in [Gpu::Sm80, Gpu::Sm90, Gpu::Sm120] {
        let options = Options {
            gpu,
            ..Default::default()
        };
        let _ = tileiras::lower::lower(&m, &options);
    }
});
