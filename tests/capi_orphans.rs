//! A process that dies inside the C API, by `SIGKILL`, takes the ptxas it
//! was running with it: the library installs no signal handler, so only
//! the parent-death signal each child asks for can do that.
//!
//! The test runs this test binary again as the dying process: with
//! `CHILD_ENV` set, [`compiling_child`] compiles with a ptxas that hangs.
mod common;

use std::ffi::CString;
use std::os::unix::ffi::OsStrExt;
use std::os::unix::process::ExitStatusExt;
use std::process::{Command, Stdio};
use std::time::Duration;

use common::{corpus, fake_tool, process_dead, wait_for, wait_for_pid};
use tileiras::capi::*;

/// Set to the hanging ptxas' path when this binary runs as the child.
const CHILD_ENV: &str = "TILEIRAS_TEST_HANGING_PTXAS";

/// The child's part: compiles the vector add through the C API with the
/// ptxas named by `CHILD_ENV`, which never returns. Does nothing in an
/// ordinary test run.
#[test]
fn compiling_child() {
    let Some(ptxas) = std::env::var_os(CHILD_ENV) else {
        return;
    };
    let ptxas = CString::new(ptxas.as_bytes()).unwrap();
    let gpu = CString::new("sm_90").unwrap();
    let bytes =
        std::fs::read(corpus().join("vadd_f32_contig/vadd_f32_contig.v13_3.tileir")).unwrap();
    let mut config = common::capi::config();
    config.gpu_name = gpu.as_ptr();
    config.ptxas_path = ptxas.as_ptr();
    config.output_kind = tileirasOutputKind::TILEIRAS_OUTPUT_CUBIN as u32;
    let r = common::capi::compile(&config, &bytes);
    panic!("the hanging ptxas returned: {r:?}");
}

#[test]
fn sigkill_inside_the_c_api_takes_the_running_ptxas_along() {
    let (dir, ptxas) = fake_tool("hang.sh", "ptxas");
    let mut child = Command::new(std::env::current_exe().unwrap())
        .args([
            "--exact",
            "compiling_child",
            "--nocapture",
            "--test-threads=1",
        ])
        .env(CHILD_ENV, &ptxas)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let pid = wait_for_pid(&dir.path().join("hang.pid"));
    assert!(!process_dead(pid));
    // SAFETY: signalling the child this test spawned and has not reaped.
    assert_eq!(unsafe { libc::kill(child.id() as i32, libc::SIGKILL) }, 0);
    let status = child.wait().unwrap();
    assert_eq!(status.signal(), Some(libc::SIGKILL), "{status:?}");
    let dead = wait_for(Duration::from_secs(1), || process_dead(pid));
    if !dead {
        // SAFETY: taking down the stray this test made, before failing.
        unsafe { libc::kill(pid as i32, libc::SIGKILL) };
    }
    assert!(
        dead,
        "ptxas {pid} outlived the process that ran it by a second"
    );
}
