//! The `tileiras` tool killed mid-compile: its running child is killed, its
//! temporary files are removed, no output file appears, and it ends with
//! the signal it got. Killed by `SIGKILL`, which no handler sees, its child
//! dies with it all the same, and the next run removes the temporary files
//! it left. A closed standard output ends it with `SIGPIPE`.
mod common;

use std::os::unix::fs::PermissionsExt;
use std::os::unix::process::{CommandExt, ExitStatusExt};
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::Duration;

use common::{
    corpus, cuda_root, entries, process_dead, process_exists, read_pid, wait_for, wait_for_pid,
};

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
        let mut command = Command::new(env!("CARGO_BIN_EXE_tileiras"));
        command
            .args(["--gpu-name=sm_90", "--emit=sass", "-o", "k.sass"])
            .arg(corpus().join("vadd_f32_contig/vadd_f32_contig.v13_3.tileir"))
            .current_dir(out.path())
            .env("CUDA_ROOT", root.path())
            .env("TMPDIR", tmp.path())
            .stderr(Stdio::null());
        // The tool keeps a signal it starts ignoring ignored (as under
        // `nohup`, which may run these tests): it starts with the default.
        // SAFETY: `signal` is async-signal-safe, as a pre-exec hook needs.
        unsafe {
            command.pre_exec(move || {
                libc::signal(signal, libc::SIG_DFL);
                Ok(())
            });
        }
        let mut tool = command.spawn().unwrap();
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

/// A toolkit folder whose `bin` holds the fake `hang.sh` as `hanging` and
/// NVIDIA's tool as the other of ptxas and nvdisasm.
fn toolkit_with_hanging(hanging: &str) -> tempfile::TempDir {
    let root = tempfile::tempdir().unwrap();
    let bin = root.path().join("bin");
    std::fs::create_dir(&bin).unwrap();
    for tool in ["ptxas", "nvdisasm"] {
        if tool == hanging {
            let hang = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fake-tools/hang.sh");
            std::fs::copy(hang, bin.join(tool)).unwrap();
            std::fs::set_permissions(bin.join(tool), std::fs::Permissions::from_mode(0o755))
                .unwrap();
        } else {
            std::os::unix::fs::symlink(cuda_root().join("bin").join(tool), bin.join(tool)).unwrap();
        }
    }
    root
}

/// Starts the tool compiling the vector add to SASS with the toolkit in
/// `root`, its temporary files in `tmp`.
fn start_tool(root: &Path, tmp: &Path, out: &Path) -> std::process::Child {
    Command::new(env!("CARGO_BIN_EXE_tileiras"))
        .args(["--gpu-name=sm_90", "--emit=sass", "-o", "k.sass"])
        .arg(corpus().join("vadd_f32_contig/vadd_f32_contig.v13_3.tileir"))
        .current_dir(out)
        .env("CUDA_ROOT", root)
        .env("TMPDIR", tmp)
        .stderr(Stdio::null())
        .spawn()
        .unwrap()
}

/// `SIGKILL` runs no handler, yet the hanging ptxas dies with the tool
/// (`PR_SET_PDEATHSIG`), as when cuTile's timeout kills `tileiras`.
#[test]
fn sigkill_takes_the_running_ptxas_with_the_tool() {
    let root = toolkit_with_hanging("ptxas");
    let tmp = tempfile::tempdir().unwrap();
    let out = tempfile::tempdir().unwrap();
    let mut tool = start_tool(root.path(), tmp.path(), out.path());
    let ptxas = wait_for_pid(&root.path().join("bin/hang.pid"));
    assert!(!process_dead(ptxas));
    // SAFETY: signalling the child this test spawned and has not reaped.
    assert_eq!(unsafe { libc::kill(tool.id() as i32, libc::SIGKILL) }, 0);
    let status = tool.wait().unwrap();
    assert_eq!(status.signal(), Some(libc::SIGKILL), "{status:?}");
    let dead = wait_for(Duration::from_secs(1), || process_dead(ptxas));
    if !dead {
        // SAFETY: taking down the stray this test made, before failing.
        unsafe { libc::kill(ptxas as i32, libc::SIGKILL) };
    }
    assert!(
        dead,
        "ptxas {ptxas} outlived the SIGKILLed tool by a second"
    );
    assert!(entries(out.path()).is_empty(), "{:?}", entries(out.path()));
}

/// A run killed by `SIGKILL` leaves its cubin in TMPDIR (nothing can remove
/// it then); the next run that writes there removes it, and leaves nothing
/// of its own. The file of a run still going, and a file that only looks
/// like ours, stay.
#[test]
fn the_next_run_removes_what_a_sigkilled_run_left_in_tmpdir() {
    let tmp = tempfile::tempdir().unwrap();
    let out = tempfile::tempdir().unwrap();
    std::fs::write(tmp.path().join("tileiras-keep.cubin"), b"x").unwrap();
    let roots = [
        toolkit_with_hanging("nvdisasm"),
        toolkit_with_hanging("nvdisasm"),
    ];
    let outs = [tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap()];
    let mut killed = start_tool(roots[0].path(), tmp.path(), outs[0].path());
    let killed_nvdisasm = wait_for_pid(&roots[0].path().join("bin/hang.pid"));
    let mut live = start_tool(roots[1].path(), tmp.path(), outs[1].path());
    let live_nvdisasm = wait_for_pid(&roots[1].path().join("bin/hang.pid"));
    let all = entries(tmp.path());
    assert_eq!(all.len(), 3, "{all:?}");
    // SAFETY: signalling the child this test spawned and has not reaped.
    assert_eq!(unsafe { libc::kill(killed.id() as i32, libc::SIGKILL) }, 0);
    let status = killed.wait().unwrap();
    assert_eq!(status.signal(), Some(libc::SIGKILL), "{status:?}");
    assert_eq!(
        entries(tmp.path()),
        all,
        "no one removed the killed run's cubin"
    );
    // The next run, with working tools and the same TMPDIR.
    let status = Command::new(env!("CARGO_BIN_EXE_tileiras"))
        .args(["--gpu-name=sm_90", "--emit=sass", "-o", "k.sass"])
        .arg(corpus().join("vadd_f32_contig/vadd_f32_contig.v13_3.tileir"))
        .current_dir(out.path())
        .env("CUDA_ROOT", cuda_root())
        .env("TMPDIR", tmp.path())
        .status()
        .unwrap();
    assert!(status.success(), "{status:?}");
    assert_eq!(entries(out.path()), ["k.sass"]);
    let left = entries(tmp.path());
    // SAFETY: signalling the child this test spawned and has not reaped;
    // its handler kills its nvdisasm and removes its cubin.
    assert_eq!(unsafe { libc::kill(live.id() as i32, libc::SIGTERM) }, 0);
    let status = live.wait().unwrap();
    assert_eq!(status.signal(), Some(libc::SIGTERM), "{status:?}");
    for pid in [killed_nvdisasm, live_nvdisasm] {
        if !wait_for(Duration::from_secs(10), || process_dead(pid)) {
            // SAFETY: taking down a stray this test made.
            unsafe { libc::kill(pid as i32, libc::SIGKILL) };
        }
    }
    assert_eq!(left.len(), 2, "{left:?}");
    assert!(
        left.contains(&"tileiras-keep.cubin".to_string()),
        "{left:?}"
    );
    assert!(left.iter().all(|f| all.contains(f)), "{all:?} {left:?}");
    assert_eq!(entries(tmp.path()), ["tileiras-keep.cubin"]);
}
