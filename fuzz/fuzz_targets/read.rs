//! Fuzz target: the bytecode reader must return Ok or Err on any input, never
//! panic; whatever it reads must print (with and without debug info) and walk.
#![no_main]
use libfuzzer_sys::fuzz_target;
use tileiras::ir::print::{print_module, PrintOptions};

fuzz_target!(|data: &[u8]| {
    match tileiras::bytecode::read(data) {
        Ok(m) => {
            let _ = print_module(&m, &PrintOptions { debug_info: false });
            let _ = print_module(&m, &PrintOptions { debug_info: true });
            for op in m.walk() {
                let _ = m.location(op);
            }
        }
        Err(e) => {
            assert!(e.offset <= data.len());
            let _ = e.disasm_lines();
        }
    }
});
