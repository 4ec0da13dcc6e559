//! `mma.sync` operands that every thread stages through shared memory with
//! plain stores: each thread's store address is its thread index's fields
//! times their byte strides, computed once and shared by A and B. The
//! kernel computes `d = a @ b + c` over small integers and runs in the PTX
//! emulator after the real ptxas accepts it.
mod common;
use common::mma::F64;
use tileiras::options::{Gpu, Options};

#[test]
fn staged_store_addresses_take_runs_of_thread_bits_at_once() {
    for (gpu, arch) in [(Gpu::Sm80, "sm_80"), (Gpu::Sm90, "sm_90a")] {
        let options = Options {
            gpu,
            ..Default::default()
        };
        let text = common::mma::check("mma_8x8x8_f64", (1, 8, 8, 8), &options, arch, &F64);
        assert!(text.contains("mma.sync.aligned.m8n8k4"), "{arch}: {text}");
        // Lanes 0-3 step 16 bytes along a padded row, lanes 4-31 a row
        // (80 bytes) each: one `and` and one 3-bit field, not a field a bit.
        let fields = text.matches("bfe.u32").count();
        assert_eq!(fields, 1, "{arch}: {text}");
        // B's tile adds its start to the same thread offset as A's.
        let offsets: Vec<&str> = stored_addresses(&text)
            .iter()
            .map(|a| offset_added_to(&text, a).unwrap_or_else(|| panic!("{arch}: {a}: {text}")))
            .collect();
        assert_eq!(offsets.len(), 2, "{arch}: {text}");
        assert_eq!(offsets[0], offsets[1], "{arch}: {text}");
    }
}

/// The address registers of the `st.shared` instructions of `ptx`.
fn stored_addresses(ptx: &str) -> Vec<&str> {
    ptx.lines()
        .filter(|l| l.contains("st.shared"))
        .filter_map(|l| l.split('[').nth(1)?.split(']').next())
        .collect()
}

/// The second source of the `add.u32` that defines `reg`.
fn offset_added_to<'a>(ptx: &'a str, reg: &str) -> Option<&'a str> {
    let def = format!("{reg},");
    let line = ptx.lines().find(|l| {
        let mut words = l.split_whitespace();
        words.next() == Some("add.u32") && words.next() == Some(def.as_str())
    })?;
    line.trim_end_matches(';').rsplit(", ").next()
}
