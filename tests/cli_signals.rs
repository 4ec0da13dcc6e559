//! The `tileiras` tool killed mid-compile: its running child is killed, its
//! temporary files are removed, no output file appears, and it ends with
//! the signal it got. A closed standard output ends it with `SIGPIPE`.
mod common;

use std::os::unix::fs::PermissionsExt;
use std::os::unix::process::ExitStatusExt;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use common::{corpus, cuda_root, entries, process_exists, read_pid};

/// Waits up to `limit` for `done`.
fn wait_for(limit: Duration, mut done: impl FnMut() -> bool) -> bool {
    let start = Instant::now();
    while start.elapsed() < limit {
        if done() {
            return true;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    done()
}

#[test]
fn a_signal_takes_the_child_and_temporary_files_with_the_tool() {
    for signal in [libc::SIGTERM, libc::SIGINT, libc::SIGHUP] {
        // A toolkit whose ptxas is real and whose nvdisasm hangs.
        let root = tempfile::tempdir().unwrap();
        let bin = root.path().join("bin");
        std::fs::create_dir(&bin).unwrap();
        std::os::unix::fs::symlink(cuda_root().join("bin/ptxas"), bin.join("ptxas")).unwrap();
        let hang = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fake-tools/hang.sh");
        std::fs::copy(hang, bin.join("nvdisasm")).unwrap();
        std::fs::set_permissions(bin.join("nvdisasm"), std::fs::Permissions::from_mode(0o755))
            .unwrap();
        let tmp = tempfile::tempdir().unwrap();
        let out = tempfile::tempdir().unwrap();
        let mut tool = Command::new(env!("CARGO_BIN_EXE_tileiras"))
            .args(["--gpu-name=sm_90", "--emit=sass", "-o", "k.sass"])
            .arg(corpus().join("vadd_f32_contig/vadd_f32_contig.v13_3.tileir"))
            .current_dir(out.path())
            .env("CUDA_ROOT", root.path())
            .env("TMPDIR", tmp.path())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let pid_file = bin.join("hang.pid");
        assert!(
            wait_for(Duration::from_secs(60), || pid_file.exists()
                && std::fs::read_to_string(&pid_file)
                    .is_ok_and(|s| s.ends_with('\n'))),
            "nvdisasm never started"
        );
        let nvdisasm = read_pid(&pid_file);
        // The cubin nvdisasm reads lies in TMPDIR while it runs.
        assert_eq!(entries(tmp.path()).len(), 1, "{:?}", entries(tmp.path()));
        // SAFETY: signalling the child this test spawned and has not reaped.
        assert_eq!(unsafe { libc::kill(tool.id() as i32, signal) }, 0);
        let status = tool.wait().unwrap();
        assert_eq!(status.signal(), Some(signal), "{status:?}");
        assert!(entries(tmp.path()).is_empty(), "{:?}", entries(tmp.path()));
        assert!(entries(out.path()).is_empty(), "{:?}", entries(out.path()));
        assert!(
            wait_for(Duration::from_secs(10), || !process_exists(nvdisasm)),
            "nvdisasm {nvdisasm} outlived the tool (signal {signal})"
        );
    }
}

/// A reader that goes away ends the tool with `SIGPIPE`, as it ends
/// NVIDIA's (`tileiras -o - k.tileir | true`).
#[test]
fn a_closed_standard_output_ends_the_tool_with_sigpipe() {
    let mut tool = Command::new(env!("CARGO_BIN_EXE_tileiras"))
        .args(["--gpu-name=sm_90", "-o", "-"])
        .arg(corpus().join("vadd_f32_contig/vadd_f32_contig.v13_3.tileir"))
        .env("CUDA_ROOT", cuda_root())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    drop(tool.stdout.take());
    let status = tool.wait().unwrap();
    assert_eq!(status.signal(), Some(libc::SIGPIPE), "{status:?}");
}
