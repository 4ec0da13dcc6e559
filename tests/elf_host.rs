//! The host object (read back with `object`, and linked into a C program)
//! and atomic writes.
mod common;

use common::*;
use object::{Object, ObjectSection, ObjectSymbol};
use tileiras::elf::{self, CUBIN_SECTION, CUBIN_SIZE_SYMBOL, CUBIN_SYMBOL, SASS_SECTION};
use tileiras::toolchain::ptxas::{self, PtxasJob};
use tileiras::{HostArch, HostOs};

fn sample_cubin() -> Vec<u8> {
    let j = PtxasJob::with_arch(corpus_ptx("arith_f32", "sm_90"), "sm_90a");
    ptxas::assemble(&toolkit(), &j).unwrap().cubin
}

fn check_object(bytes: &[u8], cubin: &[u8], sass: Option<&str>, arch: HostArch, os: HostOs) {
    let f = object::File::parse(bytes).unwrap();
    assert_eq!(
        f.format(),
        match os {
            HostOs::Linux => object::BinaryFormat::Elf,
            HostOs::Windows => object::BinaryFormat::Coff,
        }
    );
    assert_eq!(
        f.architecture(),
        match arch {
            HostArch::X86_64 => object::Architecture::X86_64,
            HostArch::Aarch64 => object::Architecture::Aarch64,
        }
    );
    if os == HostOs::Linux {
        assert_eq!(f.kind(), object::ObjectKind::Relocatable);
    }
    let sec = f.section_by_name(CUBIN_SECTION).unwrap();
    let sym = f.symbol_by_name(CUBIN_SYMBOL).unwrap();
    assert!(sym.is_global() && sym.is_definition());
    assert_eq!(sym.section_index(), Some(sec.index()));
    let data = sec.data().unwrap();
    let start = (sym.address() - sec.address()) as usize;
    assert_eq!(&data[start..start + cubin.len()], cubin);
    if os == HostOs::Linux {
        assert_eq!(sym.size(), cubin.len() as u64);
    }
    let size_sym = f.symbol_by_name(CUBIN_SIZE_SYMBOL).unwrap();
    assert!(size_sym.is_global() && size_sym.is_definition());
    let size_sec = f
        .section_by_index(size_sym.section_index().unwrap())
        .unwrap();
    let off = (size_sym.address() - size_sec.address()) as usize;
    let raw = &size_sec.data().unwrap()[off..off + 8];
    assert_eq!(
        u64::from_le_bytes(raw.try_into().unwrap()),
        cubin.len() as u64
    );
    match sass {
        Some(text) => {
            let s = f.section_by_name(SASS_SECTION).unwrap();
            assert_eq!(s.data().unwrap(), text.as_bytes());
        }
        None => assert!(f.section_by_name(SASS_SECTION).is_none()),
    }
}

#[test]
fn every_host_reads_back() {
    let cubin = sample_cubin();
    let sass = "\t.text.arith_f32:\n  /*0000*/ LDC R1, c[0x0][0x37c] ;\n";
    for arch in [HostArch::X86_64, HostArch::Aarch64] {
        for os in [HostOs::Linux, HostOs::Windows] {
            for s in [None, Some(sass)] {
                let obj = elf::host_object(&cubin, s, arch, os).unwrap();
                check_object(&obj, &cubin, s, arch, os);
            }
        }
    }
    // An empty cubin is still a valid object.
    let obj = elf::host_object(&[], None, HostArch::X86_64, HostOs::Linux).unwrap();
    check_object(&obj, &[], None, HostArch::X86_64, HostOs::Linux);
}

#[test]
fn a_c_program_links_the_object_and_reads_the_cubin_back() {
    let cubin = sample_cubin();
    let arch = if cfg!(target_arch = "aarch64") {
        HostArch::Aarch64
    } else {
        HostArch::X86_64
    };
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let obj = elf::host_object(&cubin, Some("SASS"), arch, HostOs::Linux).unwrap();
    elf::write_output(&d.join("kernel.o"), &obj).unwrap();
    std::fs::write(
        d.join("main.c"),
        r#"#include <stdio.h>
extern const unsigned char tileiras_cubin[];
extern const unsigned long long tileiras_cubin_size;
int main(int argc, char **argv) {
    FILE *f = fopen(argv[1], "wb");
    if (!f) return 2;
    if (fwrite(tileiras_cubin, 1, tileiras_cubin_size, f) != tileiras_cubin_size) return 3;
    return fclose(f) == 0 ? 0 : 4;
}
"#,
    )
    .unwrap();
    let cc = std::process::Command::new("cc")
        .current_dir(d)
        .args(["-o", "reader", "main.c", "kernel.o"])
        .output()
        .expect("the system C compiler `cc` is needed");
    assert!(
        cc.status.success(),
        "{}",
        String::from_utf8_lossy(&cc.stderr)
    );
    let run = std::process::Command::new(d.join("reader"))
        .arg(d.join("back.cubin"))
        .output()
        .unwrap();
    assert!(run.status.success(), "{run:?}");
    assert_eq!(std::fs::read(d.join("back.cubin")).unwrap(), cubin);
}
