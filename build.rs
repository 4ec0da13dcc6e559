//! Writes `include/tileiras.h` from the C API with cbindgen.
use std::path::PathBuf;

fn main() {
    let root =
        PathBuf::from(std::env::var("CARGO_MANIFEST_DIR").expect("cargo sets CARGO_MANIFEST_DIR"));
    // The shared library is found as libtileiras.so by its users.
    if std::env::var("CARGO_CFG_TARGET_OS").as_deref() == Ok("linux") {
        println!("cargo:rustc-cdylib-link-arg=-Wl,-soname,libtileiras.so");
    }
    println!("cargo:rerun-if-changed=src/capi");
    println!("cargo:rerun-if-changed=cbindgen.toml");
    let config =
        cbindgen::Config::from_file(root.join("cbindgen.toml")).expect("cbindgen.toml is valid");
    let header = root.join("include").join("tileiras.h");
    // Only the C API module (and the files it declares) is parsed, so
    // nothing else of the crate can leak into the header.
    let builder = cbindgen::Builder::new()
        .with_config(config)
        .with_src(root.join("src/capi/mod.rs"));
    match builder.generate() {
        Ok(bindings) => {
            bindings.write_to_file(&header);
        }
        Err(e) => {
            println!("cargo:warning=cbindgen could not generate the header: {e}");
        }
    }
}
