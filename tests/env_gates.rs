//! Environment gates: each variable's parse mode, through an injected
//! lookup (the process environment is never touched).
use std::collections::HashMap;
use std::ffi::OsString;

use tileiras::env::{GateError, Gates};

fn gates(vars: &[(&str, &str)]) -> Result<Gates, GateError> {
    let map: HashMap<String, OsString> = vars
        .iter()
        .map(|(k, v)| (k.to_string(), OsString::from(v)))
        .collect();
    Gates::from_lookup(|k| map.get(k).cloned())
}

#[test]
fn nothing_set_is_the_default() {
    assert_eq!(gates(&[]).unwrap(), Gates::default());
    assert_eq!(gates(&[]).unwrap().delay_tma_store_wait, 0);
}

#[test]
fn presence_only_gates_ignore_the_value() {
    for v in ["", "0", "false", "1", "anything"] {
        let g = gates(&[
            ("TILEIR_DEBUG_DUMP_BC", v),
            ("TILEIR_DEBUG_DUMP_LLVM", v),
            ("TILEIR_ALWAYS_SWIZZLE", v),
            ("TILE_AS_DEBUG_UNLIMITED_SMEM", v),
            ("MLIR_ENABLE_EVO", v),
            ("TILEIRAS_DEBUG_DUMP_PLAN", v),
        ])
        .unwrap();
        assert!(g.dump_bc && g.dump_llvm && g.always_swizzle && g.unlimited_smem && g.enable_evo);
        assert!(g.dump_plan);
    }
}

#[test]
fn verbose_is_exactly_1() {
    assert!(gates(&[("TILE_AS_DEBUG_VERBOSE", "1")]).unwrap().verbose);
    for v in ["", "0", "true", "yes", " 1", "1 ", "01"] {
        assert!(
            !gates(&[("TILE_AS_DEBUG_VERBOSE", v)]).unwrap().verbose,
            "{v:?}"
        );
    }
}

#[test]
fn prefer_tma_is_true_or_false() {
    let p = |v| gates(&[("TILEIR_PREFER_TMA_FOR_LOAD_STORE", v)]);
    assert_eq!(p("true").unwrap().prefer_tma, Some(true));
    assert_eq!(p("false").unwrap().prefer_tma, Some(false));
    assert_eq!(gates(&[]).unwrap().prefer_tma, None);
    let e = p("TRUE").unwrap_err();
    assert_eq!(
        e.to_string(),
        "invalid value 'TRUE' for environment variable TILEIR_PREFER_TMA_FOR_LOAD_STORE: expected 'true' or 'false'"
    );
}

#[test]
fn delay_is_a_base_10_integer() {
    let d = |v| gates(&[("TILEIR_DELAY_TMA_STORE_WAIT", v)]);
    assert_eq!(d("0").unwrap().delay_tma_store_wait, 0);
    assert_eq!(d("42").unwrap().delay_tma_store_wait, 42);
    assert_eq!(d("-3").unwrap().delay_tma_store_wait, -3);
    assert_eq!(d(" +7 ").unwrap().delay_tma_store_wait, 7);
    assert_eq!(d("010").unwrap().delay_tma_store_wait, 10);
    for bad in [
        "foo",
        "",
        "0x10",
        "1.5",
        "12abc",
        "-",
        "99999999999999999999",
    ] {
        let e = d(bad).unwrap_err();
        assert_eq!(e.name, "TILEIR_DELAY_TMA_STORE_WAIT");
        assert_eq!(
            e.to_string(),
            format!("invalid value '{bad}' for environment variable TILEIR_DELAY_TMA_STORE_WAIT: expected a base-10 integer")
        );
    }
}

#[test]
fn knobs_path_is_verbatim_and_gated_by_evo() {
    let odd = " /path with spaces/../k;nobs\"x";
    let g = gates(&[("PTX_KNOBS_PATH", odd)]).unwrap();
    assert_eq!(
        g.ptx_knobs_path.as_deref(),
        Some(OsString::from(odd).as_os_str())
    );
    assert_eq!(g.knobs_file(), None);
    let g = gates(&[("PTX_KNOBS_PATH", odd), ("MLIR_ENABLE_EVO", "")]).unwrap();
    assert_eq!(g.knobs_file(), Some(OsString::from(odd).as_os_str()));
    let g = gates(&[("MLIR_ENABLE_EVO", "1")]).unwrap();
    assert_eq!(g.knobs_file(), None);
    assert_eq!(gates(&[]).unwrap().knobs_file(), None);
}

#[test]
fn from_env_reads_the_process_environment() {
    // Whatever this process has set, reading must not fail on the
    // presence-only and path variables; it is read once into a value.
    let g = Gates::from_env();
    if std::env::var_os("TILEIR_DELAY_TMA_STORE_WAIT").is_none()
        && std::env::var_os("TILEIR_PREFER_TMA_FOR_LOAD_STORE").is_none()
    {
        assert!(g.is_ok());
    }
}
