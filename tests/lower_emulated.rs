//! Runs OUR PTX for each supported corpus kernel in the PTX emulator on
//! random inputs (ragged sizes included) and compares with CPU references
//! written from each kernel's docstring (`kernels.py`), independently of
//! both NVIDIA's PTX and this compiler. The references and harness are the
//! emulator's corpus acceptance checks (`ptx-emu/tests/support/kernels.rs`,
//! shared with `ptx-emu/tests/corpus.rs`); only the PTX source differs: here
//! it is compiled from the kernel's TileIR bytecode by `tileiras::lower` for
//! sm_90 (or `$LOWER_EMU_GPU`). Where our kernel takes tensor maps, they are
//! the ones our host callbacks write for the launch's arguments, not the
//! maps the harness makes for NVIDIA's TMA kernels.
//!
//! Kernels without a `#[test]` here are the two without reference PTX:
//! `mma_scaled_mxfp8`, which NVIDIA's tileiras refuses for sm_90 (it runs
//! in `tests/lower_mma_scaled.rs`), and `uint_floordiv_u32`, which its
//! verifier rejects.

#[path = "common/our_maps.rs"]
mod our_maps;

#[path = "../ptx-emu/tests/support/kernels.rs"]
#[allow(dead_code)]
mod kernels;

const CORPUS: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data/corpus");

/// The docstring: each tf32 matmul input is rounded to tf32 (10 mantissa
/// bits, to nearest even) before the mma, as this compiler's `ftof` does.
const TF32_ROUNDS: bool = true;

/// Our PTX for the kernel, lowered from its TileIR bytecode.
fn ptx_source(name: &str) -> String {
    our_module(name).to_text()
}

/// The launch's parameters for our kernel: the visible arguments the check
/// made, then the tensor maps our host callbacks write for them (the
/// checks' own maps are for NVIDIA's kernels).
fn launch_params(name: &str, params: Vec<ptx_emu::Param>) -> Vec<ptx_emu::Param> {
    our_maps::with_maps(&our_module(name), name, params)
}

/// Our lowered module for the kernel.
fn our_module(name: &str) -> tileiras::ptx::Module {
    let dir = kernels::corpus().join(name);
    let versions = match BYTECODE.with(std::cell::Cell::get) {
        Some(v) => vec![v],
        None => vec!["v13_3", "v13_4"],
    };
    let path = versions
        .iter()
        .map(|v| dir.join(format!("{name}.{v}.tileir")))
        .find(|p| p.exists())
        .unwrap_or_else(|| panic!("{name}: no bytecode in {}", dir.display()));
    let bytes = std::fs::read(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let module = tileiras::bytecode::read(&bytes).unwrap_or_else(|e| panic!("{name}: {e}"));
    // sm_90 unless `LOWER_EMU_GPU` names another target (sm_80, sm_100...).
    let gpu = std::env::var("LOWER_EMU_GPU")
        .ok()
        .map(|g| g.parse().unwrap_or_else(|e| panic!("LOWER_EMU_GPU: {e}")))
        .unwrap_or(tileiras::options::Gpu::Sm90);
    let options = tileiras::options::Options {
        gpu,
        ..Default::default()
    };
    tileiras::lower::lower_module(&module, &options)
        .unwrap_or_else(|e| panic!("{name}: {e}"))
        .0
}

thread_local! {
    /// The bytecode version a test runs instead of the primary file.
    static BYTECODE: std::cell::Cell<Option<&'static str>> = const { std::cell::Cell::new(None) };
}

kernels::common_kernel_tests!();

/// A tile block of two CTAs (`num_cta_in_cga = 2`): the grid counts
/// clusters, and the cluster's first CTA computes the tile.
#[test]
fn matmul_f16_cluster2() {
    let ptx = ptx_source("matmul_f16_cluster2");
    // Targets before sm_90 have no clusters: one CTA per tile block.
    let clusters = !ptx.contains(".target sm_8");
    assert_eq!(
        ptx.contains(".reqnctapercluster 2, 1, 1"),
        clusters,
        "{ptx}"
    );
    assert_eq!(ptx.contains("%cluster_ctarank"), clusters, "{ptx}");
    kernels::matmul_f16_cluster2();
}

/// The f16/bf16 matmuls whose K loop our sm_90 PTX pipelines (`cp.async`
/// into swizzled stages, mbarriers, `wgmma`): K loops of one, two and
/// many steps (more than the stages, so the ring wraps), K a multiple of
/// the step or not. The race detector checks the stages' hand-offs.
#[test]
fn pipelined_matmuls_over_k_lengths() {
    if std::env::var("LOWER_EMU_GPU").is_err() {
        for name in ["matmul_f16_tma", "matmul_bf16_tma", "matmul_f16_f16acc"] {
            let ptx = ptx_source(name);
            assert!(ptx.contains("mbarrier.try_wait.parity"), "{name}");
        }
    }
    kernels::tma_matmuls_over_k(&[16, 64, 104, 128, 576, 1000]);
}

/// Bytecode 13.1 has no print tokens: cuTile serialises prints with a
/// spin lock on a module `global` (`print_mutex`, taken with `atomic_cas`
/// through `get_global`), which this runs.
#[test]
fn print_debug_i32_v13_1_with_a_global_mutex() {
    BYTECODE.with(|b| b.set(Some("v13_1")));
    let ptx = ptx_source("print_debug_i32");
    assert!(
        ptx.contains(".global .align 4 .b8 print_mutex[4] = {1, 0, 0, 0};"),
        "{ptx}"
    );
    kernels::print_debug_i32();
}

/// A transpose passes through shared memory with one address a thread:
/// its elements' writes and reads differ by immediate offsets only.
#[test]
fn transpose_stages_through_one_shared_address_a_thread() {
    let ptx = ptx_source("transpose_2d_f32");
    let accesses: Vec<&str> = ptx
        .lines()
        .filter(|l| l.contains("ld.shared") || l.contains("st.shared"))
        .collect();
    assert!(accesses.len() >= 32, "{ptx}");
    let bases: std::collections::BTreeSet<&str> = accesses
        .iter()
        .map(|l| {
            let inside = &l[l.find('[').unwrap() + 1..l.find(']').unwrap()];
            inside.split('+').next().unwrap().trim()
        })
        .collect();
    assert!(bases.len() <= 2, "{bases:?}\n{ptx}");
}

/// One element taken from a tile every warp holds (a list's table row) is
/// a shuffle from the lane holding it: no shared memory, no barrier.
#[test]
fn list_of_arrays_extracts_table_entries_by_shuffles() {
    let ptx = ptx_source("list_of_arrays_f32");
    assert!(ptx.contains("shfl.sync.idx.b32"), "{ptx}");
    assert!(!ptx.contains("bar.sync"), "{ptx}");
    assert!(!ptx.contains("st.shared"), "{ptx}");
}
