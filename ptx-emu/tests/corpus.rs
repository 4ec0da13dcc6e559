//! Acceptance tests: NVIDIA tileiras' reference PTX (`ref.sm_90.ptx`) run on
//! the emulator against independent CPU implementations of each kernel's
//! docstring semantics.
//!
//! Covered kernels each have a `#[test]` below.  Kernels not covered yet are
//! listed in [`NOT_COVERED`] and are not claimed as passing.
//!
//! The harness and the checks are shared with `tests/lower_emulated.rs` (this
//! compiler's PTX) in `support/kernels.rs`; this file says where the PTX comes
//! from and which kernels are covered.

#[path = "support/kernels.rs"]
mod kernels;

use kernels::corpus;
use ptx_emu::Module;

#[path = "../../tests/common/nvidia_reference.rs"]
mod nvidia_reference;

const CORPUS: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../tests/data/corpus");

/// NVIDIA's tileiras drops the `ftof` to tf32 (no `cvt.rna` in its PTX): the
/// tensor core sees the f32 bits and ignores the low 13 mantissa bits.
const TF32_ROUNDS: bool = false;

/// Corpus kernels without an acceptance test (with the reason).
pub const NOT_COVERED: &[(&str, &str)] = &[
    (
        "mma_scaled_mxfp8",
        "no sm_90 reference PTX (tileiras refuses sm_90; the sm_100 PTX needs tcgen05)",
    ),
    (
        "uint_floordiv_u32",
        "no reference PTX (cuTile 1.7.0 emits invalid TileIR; tileiras refuses it)",
    ),
];

/// Corpus kernels with an acceptance test in this file (one `#[test]` each).
pub const COVERED: &[&str] = &[
    "adv_index_rows_f32",
    "arith_bf16",
    "arith_f16",
    "arith_f32",
    "arith_f64",
    "assert_nonneg_i32",
    "atomic_hist_i32",
    "atomic_ops_i32",
    "atomic_red_view_f32",
    "batched_matmul_f16",
    "bitcast_pack_f32",
    "bitwise_i32",
    "broadcast_2d_f32",
    "cast_f32_f16_bf16",
    "cast_float_int",
    "cast_int_width",
    "cat_extract_f32",
    "cmp_select_f32",
    "cmp_select_i32",
    "copy_3d_index_offset",
    "custom_reduce_scan_f32",
    "dot_1d_f32",
    "exp_log_f32",
    "fma_f32",
    "for_loop_carried_f32",
    "gather_2d_rows_f32",
    "gather_scatter_mask_f32",
    "gelu_tanh_f16",
    "global_sum_atomic_f32",
    "if_else_runtime_f32",
    "insert_subtile_f32",
    "int_arith_i32",
    "int_arith_i64",
    "int_divmod_i32",
    "iota_full_fill",
    "layernorm_rows_f32",
    "list_of_arrays_f32",
    "load_latency_hint_f32",
    "matmul_bf16_tma",
    "matmul_f16_cluster2",
    "matmul_f16_divisible",
    "matmul_f16_f16acc",
    "matmul_f16_strided",
    "matmul_f16_tma",
    "matmul_f32",
    "matmul_f64_operator",
    "matmul_fp8_e4m3",
    "matmul_i8_i32",
    "matmul_tf32",
    "minmax_neg_abs_f32",
    "nobounds_copy_f32",
    "permute_3d_f32",
    "persistent_grid_stride_f32",
    "pow_atan2_floor_ceil_f32",
    "print_debug_i32",
    "raw_offset_f32",
    "reshape_1d_to_2d_f32",
    "row_max_min_argmax_f32",
    "row_sum_f32",
    "scalar_params_axpy",
    "scan_rows",
    "slice_dynamic_f32",
    "softmax_rows_f32",
    "strided_window_f32",
    "transpose_2d_f32",
    "transpose_load_order_f16",
    "trig_f32",
    "uint_ops_u32",
    "vadd_f32_contig",
    "vadd_f32_divisible",
    "vadd_f32_strided",
    "while_break_continue_i32",
];

thread_local! {
    /// Which reference PTX the tests of this thread load ("sm_90" unless a test switches).
    static ARCH: std::cell::Cell<&'static str> = const { std::cell::Cell::new("sm_90") };
}

/// NVIDIA's reference PTX of the kernel for this thread's architecture.
fn ptx_source(name: &str) -> String {
    let arch = ARCH.with(|a| a.get());
    nvidia_reference::ptx(name, arch)
}

/// The launch's parameters as the checks made them: NVIDIA's kernels take
/// the tensor maps the checks build.
fn launch_params(_: &str, params: Vec<ptx_emu::Param>) -> Vec<ptx_emu::Param> {
    params
}

kernels::common_kernel_tests!();

// Kernels this compiler does not lower yet: checked on the reference PTX only.
kernels::kernel_tests!(matmul_f16_cluster2);

#[test]
fn every_reference_ptx_parses() {
    let mut n = 0;
    for name in nvidia_reference::kernels() {
        // sm_100 PTX (tcgen05) must parse too; executing it reports the unsupported instructions
        if let Ok(b) = nvidia_reference::build(&name, "sm_100") {
            Module::parse(&b.ptx_text()).unwrap_or_else(|e| panic!("{name} sm_100: {e}"));
        }
        // the kernels NVIDIA's tileiras refuses for sm_90 (f8E8M0 scales) or
        // whose bytecode its verifier rejects
        let Ok(b) = nvidia_reference::build(&name, "sm_90") else {
            continue;
        };
        let m = Module::parse(&b.ptx_text()).unwrap_or_else(|e| panic!("{name}: {e}"));
        assert!(m.kernel(&name).is_some(), "{name}: entry missing");
        let k = m.kernel(&name).unwrap();
        assert!(!k.insts.is_empty());
        n += 1;
    }
    assert!(n >= 70, "only {n} reference PTX files found");
}

#[test]
fn every_corpus_kernel_is_covered_or_listed() {
    let mut dirs: Vec<String> = std::fs::read_dir(corpus())
        .unwrap()
        .filter_map(|e| e.ok())
        .filter(|e| e.path().is_dir())
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect();
    dirs.sort();
    for d in &dirs {
        let covered = COVERED.contains(&d.as_str());
        let listed = NOT_COVERED.iter().any(|(n, _)| n == d);
        assert!(
            covered != listed,
            "{d}: covered={covered} listed-as-not-covered={listed}"
        );
    }
    assert_eq!(COVERED.len() + NOT_COVERED.len(), dirs.len());
}

/// NVIDIA's sm_100 PTX of the 62 kernels that use no tcgen05 tensor cores runs
/// through the same acceptance checks (same tensor-map boxes and swizzles).
#[test]
fn sm_100_reference_ptx_of_non_tensor_core_kernels() {
    ARCH.with(|a| a.set("sm_100"));
    let tests: &[(&str, fn())] = &[
        ("vadd_f32_strided", kernels::vadd_f32_strided),
        ("vadd_f32_contig", kernels::vadd_f32_contig),
        ("vadd_f32_divisible", kernels::vadd_f32_divisible),
        ("arith_f32", kernels::arith_f32),
        ("minmax_neg_abs_f32", kernels::minmax_neg_abs_f32),
        ("fma_f32", kernels::fma_f32),
        ("exp_log_f32", kernels::exp_log_f32),
        ("trig_f32", kernels::trig_f32),
        (
            "pow_atan2_floor_ceil_f32",
            kernels::pow_atan2_floor_ceil_f32,
        ),
        ("arith_f16", kernels::arith_f16),
        ("arith_bf16", kernels::arith_bf16),
        ("arith_f64", kernels::arith_f64),
        ("int_arith_i32", kernels::int_arith_i32),
        ("int_divmod_i32", kernels::int_divmod_i32),
        ("int_arith_i64", kernels::int_arith_i64),
        ("uint_ops_u32", kernels::uint_ops_u32),
        ("bitwise_i32", kernels::bitwise_i32),
        ("cmp_select_f32", kernels::cmp_select_f32),
        ("cmp_select_i32", kernels::cmp_select_i32),
        ("cast_f32_f16_bf16", kernels::cast_f32_f16_bf16),
        ("cast_float_int", kernels::cast_float_int),
        ("cast_int_width", kernels::cast_int_width),
        ("bitcast_pack_f32", kernels::bitcast_pack_f32),
        ("scalar_params_axpy", kernels::scalar_params_axpy),
        ("broadcast_2d_f32", kernels::broadcast_2d_f32),
        ("reshape_1d_to_2d_f32", kernels::reshape_1d_to_2d_f32),
        ("transpose_2d_f32", kernels::transpose_2d_f32),
        (
            "transpose_load_order_f16",
            kernels::transpose_load_order_f16,
        ),
        ("permute_3d_f32", kernels::permute_3d_f32),
        ("copy_3d_index_offset", kernels::copy_3d_index_offset),
        ("strided_window_f32", kernels::strided_window_f32),
        ("slice_dynamic_f32", kernels::slice_dynamic_f32),
        ("cat_extract_f32", kernels::cat_extract_f32),
        ("insert_subtile_f32", kernels::insert_subtile_f32),
        ("iota_full_fill", kernels::iota_full_fill),
        ("gather_scatter_mask_f32", kernels::gather_scatter_mask_f32),
        ("gather_2d_rows_f32", kernels::gather_2d_rows_f32),
        ("raw_offset_f32", kernels::raw_offset_f32),
        ("adv_index_rows_f32", kernels::adv_index_rows_f32),
        ("list_of_arrays_f32", kernels::list_of_arrays_f32),
        ("nobounds_copy_f32", kernels::nobounds_copy_f32),
        ("load_latency_hint_f32", kernels::load_latency_hint_f32),
        ("row_max_min_argmax_f32", kernels::row_max_min_argmax_f32),
        ("scan_rows", kernels::scan_rows),
        ("for_loop_carried_f32", kernels::for_loop_carried_f32),
        ("if_else_runtime_f32", kernels::if_else_runtime_f32),
        (
            "persistent_grid_stride_f32",
            kernels::persistent_grid_stride_f32,
        ),
        ("assert_nonneg_i32", kernels::assert_nonneg_i32),
        ("softmax_rows_f32", kernels::softmax_rows_f32),
        ("gelu_tanh_f16", kernels::gelu_tanh_f16),
        ("row_sum_f32", kernels::row_sum_f32),
        ("custom_reduce_scan_f32", kernels::custom_reduce_scan_f32),
        ("global_sum_atomic_f32", kernels::global_sum_atomic_f32),
        (
            "while_break_continue_i32",
            kernels::while_break_continue_i32,
        ),
        ("atomic_hist_i32", kernels::atomic_hist_i32),
        ("atomic_ops_i32", kernels::atomic_ops_i32),
        ("atomic_red_view_f32", kernels::atomic_red_view_f32),
        ("print_debug_i32", kernels::print_debug_i32),
        ("layernorm_rows_f32", kernels::layernorm_rows_f32),
        ("dot_1d_f32", kernels::dot_1d_f32),
        ("matmul_f32", kernels::matmul_f32),
        ("matmul_f64_operator", kernels::matmul_f64_operator),
    ];
    let mut failed = Vec::new();
    for (name, f) in tests {
        if std::panic::catch_unwind(f).is_err() {
            failed.push(*name);
        }
    }
    ARCH.with(|a| a.set("sm_90"));
    assert!(failed.is_empty(), "sm_100 PTX failed for {failed:?}");
}

/// NVIDIA's f16/bf16 TMA matmuls on K loops of one, two and many steps,
/// K a multiple of the 64-wide step or not.
#[test]
fn tma_matmuls_over_k_lengths() {
    kernels::tma_matmuls_over_k(&[16, 64, 104, 128, 576, 1000]);
}
