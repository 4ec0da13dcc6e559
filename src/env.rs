//! Environment variables that steer the compiler, read once per compile into
//! a typed [`Gates`].
//!
//! Each variable keeps the parse mode NVIDIA's tileiras gives it:
//!
//! | variable | mode | field |
//! |---|---|---|
//! | `TILEIR_DEBUG_DUMP_BC` | presence (any value, `0` included) | [`Gates::dump_bc`] |
//! | `TILEIR_DEBUG_DUMP_LLVM` | presence | [`Gates::dump_llvm`] |
//! | `TILEIR_ALWAYS_SWIZZLE` | presence | [`Gates::always_swizzle`] |
//! | `TILE_AS_DEBUG_UNLIMITED_SMEM` | presence | [`Gates::unlimited_smem`] |
//! | `MLIR_ENABLE_EVO` | presence | [`Gates::enable_evo`] |
//! | `TILE_AS_DEBUG_VERBOSE` | equal to `1` exactly | [`Gates::verbose`] |
//! | `TILEIR_PREFER_TMA_FOR_LOAD_STORE` | `true` / `false` | [`Gates::prefer_tma`] |
//! | `TILEIR_DELAY_TMA_STORE_WAIT` | base-10 integer | [`Gates::delay_tma_store_wait`] |
//! | `PTX_KNOBS_PATH` | path, verbatim | [`Gates::ptx_knobs_path`] |
//! | `TILEIRAS_DEBUG_DUMP_PLAN` | presence (this compiler's own) | [`Gates::dump_plan`] |
//! | `TILEIRAS_NO_TMA` | presence (this compiler's own) | [`Gates::no_tma`] |
//!
//! Where NVIDIA's tool aborts (a non-number in
//! `TILEIR_DELAY_TMA_STORE_WAIT`), [`Gates::from_env`] returns a
//! [`GateError`] with a clear message instead. A value of
//! `TILEIR_PREFER_TMA_FOR_LOAD_STORE` other than `true`/`false` is an error
//! too, for the same reason.
use std::ffi::{OsStr, OsString};

/// `TILEIR_DEBUG_DUMP_BC`.
pub const DUMP_BC: &str = "TILEIR_DEBUG_DUMP_BC";
/// `TILEIR_DEBUG_DUMP_LLVM`.
pub const DUMP_LLVM: &str = "TILEIR_DEBUG_DUMP_LLVM";
/// `TILEIR_ALWAYS_SWIZZLE`.
pub const ALWAYS_SWIZZLE: &str = "TILEIR_ALWAYS_SWIZZLE";
/// `TILE_AS_DEBUG_UNLIMITED_SMEM`.
pub const UNLIMITED_SMEM: &str = "TILE_AS_DEBUG_UNLIMITED_SMEM";
/// `MLIR_ENABLE_EVO`.
pub const ENABLE_EVO: &str = "MLIR_ENABLE_EVO";
/// `TILE_AS_DEBUG_VERBOSE`.
pub const VERBOSE: &str = "TILE_AS_DEBUG_VERBOSE";
/// `TILEIR_PREFER_TMA_FOR_LOAD_STORE`.
pub const PREFER_TMA: &str = "TILEIR_PREFER_TMA_FOR_LOAD_STORE";
/// `TILEIR_DELAY_TMA_STORE_WAIT`.
pub const DELAY_TMA_STORE_WAIT: &str = "TILEIR_DELAY_TMA_STORE_WAIT";
/// `PTX_KNOBS_PATH`.
pub const PTX_KNOBS_PATH: &str = "PTX_KNOBS_PATH";
/// `TILEIRAS_DEBUG_DUMP_PLAN`: this compiler's own, not NVIDIA's.
pub const DUMP_PLAN: &str = "TILEIRAS_DEBUG_DUMP_PLAN";
/// `TILEIRAS_NO_TMA`: this compiler's own, not NVIDIA's.
pub const NO_TMA: &str = "TILEIRAS_NO_TMA";

/// A variable whose value cannot be parsed.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("invalid value '{value}' for environment variable {name}: {expected}")]
pub struct GateError {
    /// The variable.
    pub name: &'static str,
    /// Its value, lossily as text.
    pub value: String,
    /// What was expected.
    pub expected: &'static str,
}

/// The environment gates, parsed.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Gates {
    /// `TILEIR_DEBUG_DUMP_BC` is set: dump the bytecode.
    pub dump_bc: bool,
    /// `TILEIR_DEBUG_DUMP_LLVM` is set: dump the lowered IR.
    pub dump_llvm: bool,
    /// `TILEIRAS_DEBUG_DUMP_PLAN` is set: dump each entry's lowering plan
    /// ([`crate::lower::plan::Plan::dump`], `.dump.plan`) and, once
    /// lowered, its shared-memory scratch map
    /// ([`crate::lower::ScratchMap::dump`], `.dump.scratch`).
    pub dump_plan: bool,
    /// `TILEIR_ALWAYS_SWIZZLE` is set: force swizzled shared layouts.
    pub always_swizzle: bool,
    /// `TILEIRAS_NO_TMA` is set: no TMA copies in this compile (the plan
    /// copies with `cp.async` where it would use TMA), so a GPU run can time
    /// both from one bytecode and a user can fall back.
    pub no_tma: bool,
    /// `TILE_AS_DEBUG_UNLIMITED_SMEM` is set: no shared-memory cap.
    pub unlimited_smem: bool,
    /// `MLIR_ENABLE_EVO` is set.
    pub enable_evo: bool,
    /// `TILE_AS_DEBUG_VERBOSE` is exactly `1`.
    pub verbose: bool,
    /// `TILEIR_PREFER_TMA_FOR_LOAD_STORE`: `true`, `false`, or unset
    /// (`None`). The lowering has no TMA path, so `true` only draws a
    /// warning (sm_90 and newer).
    pub prefer_tma: Option<bool>,
    /// `TILEIR_DELAY_TMA_STORE_WAIT`, 0 when unset.
    pub delay_tma_store_wait: i64,
    /// `PTX_KNOBS_PATH`, verbatim.
    pub ptx_knobs_path: Option<OsString>,
}

impl Gates {
    /// Reads the gates from the process environment.
    pub fn from_env() -> Result<Gates, GateError> {
        Gates::from_lookup(|k| std::env::var_os(k))
    }

    /// Reads the gates through `var` (the process environment in
    /// [`Gates::from_env`]; a map in tests).
    pub fn from_lookup(var: impl Fn(&str) -> Option<OsString>) -> Result<Gates, GateError> {
        let present = |k: &str| var(k).is_some();
        let prefer_tma = match var(PREFER_TMA) {
            None => None,
            Some(v) if v == "true" => Some(true),
            Some(v) if v == "false" => Some(false),
            Some(v) => {
                return Err(GateError {
                    name: PREFER_TMA,
                    value: v.to_string_lossy().into_owned(),
                    expected: "expected 'true' or 'false'",
                })
            }
        };
        let delay_tma_store_wait = match var(DELAY_TMA_STORE_WAIT) {
            None => 0,
            Some(v) => parse_decimal(&v).ok_or_else(|| GateError {
                name: DELAY_TMA_STORE_WAIT,
                value: v.to_string_lossy().into_owned(),
                expected: "expected a base-10 integer",
            })?,
        };
        Ok(Gates {
            dump_bc: present(DUMP_BC),
            dump_llvm: present(DUMP_LLVM),
            dump_plan: present(DUMP_PLAN),
            always_swizzle: present(ALWAYS_SWIZZLE),
            no_tma: present(NO_TMA),
            unlimited_smem: present(UNLIMITED_SMEM),
            enable_evo: present(ENABLE_EVO),
            verbose: var(VERBOSE).is_some_and(|v| v == "1"),
            prefer_tma,
            delay_tma_store_wait,
            ptx_knobs_path: var(PTX_KNOBS_PATH),
        })
    }

    /// The `--knobs-file` path for ptxas: `PTX_KNOBS_PATH`, only when
    /// `MLIR_ENABLE_EVO` is also set.
    pub fn knobs_file(&self) -> Option<&OsStr> {
        if self.enable_evo {
            self.ptx_knobs_path.as_deref()
        } else {
            None
        }
    }
}

/// `std::stoi`-like: optional leading whitespace, optional sign, then at
/// least one digit; the whole value must be consumed (trailing whitespace
/// allowed).
fn parse_decimal(v: &OsStr) -> Option<i64> {
    let s = v.to_str()?.trim();
    let digits = s.strip_prefix(['+', '-']).unwrap_or(s);
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    s.parse::<i64>().ok()
}
