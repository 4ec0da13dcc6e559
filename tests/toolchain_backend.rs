//! The back end in one call, for every output kind.
mod common;

use common::*;
use object::{Object, ObjectSection};
use tileiras::env::Gates;
use tileiras::toolchain::backend::{self, Request};
use tileiras::toolchain::ptxas::HostCode;
use tileiras::{Gpu, Options, OutputKind, Status};

fn options(output: OutputKind) -> Options {
    Options {
        gpu: Gpu::Sm90,
        output,
        cuda_root: Some(cuda_root()),
        ..Options::default()
    }
}

#[test]
fn every_output_kind() {
    let ptx = corpus_ptx("arith_f32", "sm_90");
    let gates = Gates::default();
    let host = HostCode::File(
        nvidia_reference::build("arith_f32", "sm_90")
            .unwrap()
            .nv_host,
    );

    let o = options(OutputKind::Ptx);
    let p = backend::run(&Request::new(&ptx, &o, &gates)).unwrap();
    assert_eq!(p.bytes, ptx.as_bytes());

    let o = options(OutputKind::Cubin);
    let mut req = Request::new(&ptx, &o, &gates);
    req.host_code = Some(host.clone());
    let cubin = backend::run(&req).unwrap().bytes;
    assert!(cubin.starts_with(b"\x7fELF"));
    let f = object::File::parse(&*cubin).unwrap();
    assert!(f.section_by_name(".nv.host").is_some());

    let o = options(OutputKind::Sass);
    let mut req = Request::new(&ptx, &o, &gates);
    req.host_code = Some(host.clone());
    let sass = String::from_utf8(backend::run(&req).unwrap().bytes).unwrap();
    assert!(sass.contains(".text.arith_f32"), "{sass}");

    let o = options(OutputKind::HostObject);
    let mut req = Request::new(&ptx, &o, &gates);
    req.host_code = Some(host);
    req.sass_in_object = true;
    let obj = backend::run(&req).unwrap().bytes;
    let f = object::File::parse(&*obj).unwrap();
    let embedded = f.section_by_name(".tileiras.cubin").unwrap();
    assert_eq!(&embedded.data().unwrap()[..cubin.len()], &cubin[..]);
    let text = f.section_by_name(".nvdisasm").unwrap();
    assert_eq!(text.data().unwrap(), sass.as_bytes());
}

#[test]
fn failures_map_to_status_codes() {
    let gates = Gates::default();
    let mut o = options(OutputKind::Cubin);
    o.ptxas = Some("/nonexistent/ptxas".into());
    let e = backend::run(&Request::new("", &o, &gates)).unwrap_err();
    assert_eq!(e.status(), Status::CompileFailed);
    assert_eq!(
        e.to_string(),
        format!(
            "cannot find ptxas; looked in:\n  /nonexistent/ptxas (explicit ptxas path)\n{}",
            tileiras::toolchain::install_hint("ptxas")
        )
    );
    let o = options(OutputKind::Cubin);
    let e = backend::run(&Request::new(
        ".version 8.0\n.target sm_90a\nbogus\n",
        &o,
        &gates,
    ))
    .unwrap_err();
    assert_eq!(e.status(), Status::CompileFailed);
    let d = e.diagnostics();
    assert_eq!(d.len(), 1);
    assert!(
        e.to_string()
            .starts_with("ptxas failed: exit status 255\nptxas "),
        "{e}"
    );
}
