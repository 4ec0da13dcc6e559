//! The subprocess harness against fake tools: statuses, messages, signals,
//! cores, timeouts, huge output, and no process left behind.
mod common;

use std::os::unix::fs::PermissionsExt;
use std::time::{Duration, Instant};

use common::*;
use tileiras::toolchain::process::{Command, Rlimit, SpawnError, Termination};

#[test]
fn captures_stdout_and_stderr_separately() {
    let (_d, tool) = fake_tool("order.sh", "order");
    let out = Command::new(&tool).run().unwrap();
    assert_eq!(out.termination, Termination::Exited(0));
    assert_eq!(out.stdout, b"1\n3\n");
    assert_eq!(out.stderr, b"2\n4\n");
    assert!(!process_exists(out.pid));
}

#[test]
fn merged_streams_keep_their_order() {
    let (_d, tool) = fake_tool("order.sh", "order");
    let out = Command::new(&tool).merge_stderr(true).run().unwrap();
    assert_eq!(out.stdout, b"1\n2\n3\n4\n");
    assert!(out.stderr.is_empty());
    // Same through the fork path.
    let out = Command::new(&tool)
        .merge_stderr(true)
        .new_session(true)
        .run()
        .unwrap();
    assert_eq!(out.stdout, b"1\n2\n3\n4\n");
}

#[test]
fn arguments_and_environment_reach_the_child() {
    let out = Command::new("sh")
        .args([
            "-c",
            "printf '%s|%s|%s' \"$1\" \"$FOO\" \"${HOME-unset}\"",
            "sh",
            "a b",
        ])
        .env("FOO", "bar")
        .env_remove("HOME")
        .run()
        .unwrap();
    assert_eq!(String::from_utf8(out.stdout).unwrap(), "a b|bar|unset");
    // stdin is /dev/null: cat ends at once.
    let out = Command::new("cat")
        .timeout(Some(Duration::from_secs(10)))
        .run()
        .unwrap();
    assert_eq!(out.termination, Termination::Exited(0));
    assert!(out.stdout.is_empty());
}

#[test]
fn exit_127_and_126_decode_to_distinct_messages() {
    let (_d, t127) = fake_tool("exit127.sh", "tool127");
    let out = Command::new(&t127).run().unwrap();
    assert_eq!(out.termination, Termination::Exited(127));
    assert_eq!(
        out.termination.to_string(),
        "exit status 127: program not found"
    );
    assert_eq!(out.stderr, b"fake-tool: something it needs was not found\n");
    let (_d, t126) = fake_tool("exit126.sh", "tool126");
    let out = Command::new(&t126).run().unwrap();
    assert_eq!(out.termination, Termination::Exited(126));
    assert_eq!(
        out.termination.to_string(),
        "exit status 126: Program could not be executed"
    );
}

#[test]
fn missing_program_names_the_path_searched() {
    let err = Command::new("no-such-tool-xyz")
        .env("PATH", "/nonexistent/a:/nonexistent/b")
        .run()
        .unwrap_err();
    assert!(matches!(err, SpawnError::NotFound { .. }));
    assert_eq!(
        err.to_string(),
        "no-such-tool-xyz: program not found (PATH searched: /nonexistent/a:/nonexistent/b)"
    );
    assert!(!err.is_system_resource());
    let err = Command::new("/nonexistent/tool").run().unwrap_err();
    assert_eq!(
        err.to_string(),
        "/nonexistent/tool: program not found (PATH searched: /nonexistent/tool)"
    );
}

#[test]
fn unexecutable_program_is_reported_on_both_paths() {
    let (_d, tool) = fake_tool("order.sh", "noexec");
    std::fs::set_permissions(&tool, std::fs::Permissions::from_mode(0o644)).unwrap();
    let expected = format!(
        "{}: Program could not be executed: Permission denied (os error 13)",
        tool.display()
    );
    let err = Command::new(&tool).run().unwrap_err();
    assert!(matches!(err, SpawnError::NotExecutable { .. }), "{err:?}");
    assert_eq!(err.to_string(), expected);
    let err = Command::new(&tool).new_session(true).run().unwrap_err();
    assert!(matches!(err, SpawnError::NotExecutable { .. }), "{err:?}");
    assert_eq!(err.to_string(), expected);
}

/// An executable file of no format the kernel runs (an ELF header for no
/// machine): `execve` fails with ENOEXEC, and the errno comes back from the
/// child however `clone` shared its memory.
#[test]
fn program_of_an_unknown_format_reports_its_errno() {
    let dir = tempfile::tempdir().unwrap();
    let tool = dir.path().join("foreign");
    let mut bytes = b"\x7fELF\x02\x01\x01".to_vec();
    bytes.resize(64, 0);
    std::fs::write(&tool, &bytes).unwrap();
    std::fs::set_permissions(&tool, std::fs::Permissions::from_mode(0o755)).unwrap();
    let expected = format!(
        "{}: Program could not be executed: Exec format error (os error {})",
        tool.display(),
        libc::ENOEXEC
    );
    for session in [false, true] {
        let err = Command::new(&tool).new_session(session).run().unwrap_err();
        assert!(matches!(err, SpawnError::NotExecutable { .. }), "{err:?}");
        assert_eq!(err.to_string(), expected);
    }
}

fn hard_core_limit() -> u64 {
    let mut r = libc::rlimit {
        rlim_cur: 0,
        rlim_max: 0,
    };
    // SAFETY: getrlimit writes into a valid struct.
    assert_eq!(unsafe { libc::getrlimit(libc::RLIMIT_CORE, &mut r) }, 0);
    r.rlim_max
}

#[test]
fn signal_without_core() {
    let (dir, tool) = fake_tool("segv.sh", "segv");
    let out = Command::new(&tool).env("FAKE_CORE", "0").run().unwrap();
    assert_eq!(
        out.termination,
        Termination::Signaled {
            signal: libc::SIGSEGV,
            core_dumped: false
        }
    );
    assert_eq!(out.termination.to_string(), "Segmentation fault");
    assert_eq!(
        tileiras::toolchain::process::signal_name(libc::SIGSEGV),
        "SIGSEGV"
    );
    assert_eq!(tileiras::toolchain::process::signal_name(64), "SIG64");
    assert_eq!(out.stderr, b"about to crash\n");
    assert!(!entries(dir.path()).iter().any(|e| e.starts_with("core")));
}

#[test]
fn signal_with_core_through_the_child_and_through_setrlimit() {
    // This machine's hard core limit decides what a child may do.
    let can_dump = hard_core_limit() > 0;
    let expect = |t: Termination| {
        assert_eq!(
            t,
            Termination::Signaled {
                signal: libc::SIGSEGV,
                core_dumped: can_dump
            }
        );
        let text = if can_dump {
            "Segmentation fault (core dumped)"
        } else {
            "Segmentation fault"
        };
        assert_eq!(t.to_string(), text);
    };
    // The script raises its own soft limit (ulimit -c).
    let (_d, tool) = fake_tool("segv.sh", "segv");
    expect(
        Command::new(&tool)
            .env("FAKE_CORE", "1")
            .run()
            .unwrap()
            .termination,
    );
    // The harness sets the limit before exec (fork path, setrlimit).
    let (_d2, tool) = fake_tool("segv.sh", "segv");
    let limit = if can_dump { libc::RLIM_INFINITY } else { 0 };
    let mut cmd = Command::new(&tool);
    cmd.env_remove("FAKE_CORE").rlimit(Rlimit {
        resource: libc::RLIMIT_CORE as i32,
        soft: limit,
        hard: limit,
    });
    assert!(cmd.uses_fork());
    expect(cmd.run().unwrap().termination);
}

#[test]
fn timeout_kills_and_reaps_the_child() {
    let (dir, tool) = fake_tool("hang.sh", "hang");
    let start = Instant::now();
    let out = Command::new(&tool)
        .timeout(Some(Duration::from_millis(500)))
        .run()
        .unwrap();
    let took = start.elapsed();
    assert_eq!(out.termination, Termination::TimedOut { reaped: true });
    assert_eq!(out.termination.to_string(), "Child timed out");
    assert!(took >= Duration::from_millis(500), "{took:?}");
    assert!(took < Duration::from_secs(5), "{took:?}");
    let pid = read_pid(&dir.path().join("hang.pid"));
    assert_eq!(pid, out.pid);
    assert!(!process_exists(pid), "child {pid} left behind");
    assert_eq!(
        Termination::TimedOut { reaped: false }.to_string(),
        "Child timed out but wouldn't die"
    );
}

#[test]
fn timeout_in_a_new_session_kills_the_whole_group() {
    let (dir, tool) = fake_tool("hang-tree.sh", "hang-tree");
    let out = Command::new(&tool)
        .new_session(true)
        .timeout(Some(Duration::from_millis(500)))
        .run()
        .unwrap();
    assert_eq!(out.termination, Termination::TimedOut { reaped: true });
    let child = read_pid(&dir.path().join("hang.pid"));
    let grandchild = read_pid(&dir.path().join("grandchild.pid"));
    assert!(!process_exists(child));
    // The grandchild was killed with the group; init reaps it shortly.
    let deadline = Instant::now() + Duration::from_secs(5);
    while process_exists(grandchild) && Instant::now() < deadline {
        let stat = std::fs::read_to_string(format!("/proc/{grandchild}/stat")).unwrap_or_default();
        if stat.contains(") Z ") {
            break; // dead, waiting for its new parent to reap it
        }
        std::thread::sleep(Duration::from_millis(10));
    }
    let stat = std::fs::read_to_string(format!("/proc/{grandchild}/stat")).unwrap_or_default();
    assert!(
        stat.is_empty() || stat.contains(") Z "),
        "grandchild alive: {stat}"
    );
}

#[test]
fn grandchild_holding_the_pipes_does_not_hang_an_untimed_run() {
    // The child exits at once; a background sleep keeps stdout open.
    let start = Instant::now();
    let out = Command::new("sh")
        .args(["-c", "echo hi; sleep 300 & echo $! >&2; exit 4"])
        .run()
        .unwrap();
    assert!(start.elapsed() < Duration::from_secs(5));
    assert_eq!(out.termination, Termination::Exited(4));
    assert_eq!(out.stdout, b"hi\n");
    let pid: i32 = String::from_utf8(out.stderr)
        .unwrap()
        .trim()
        .parse()
        .unwrap();
    // SAFETY: killing the stray sleep this test started.
    unsafe { libc::kill(pid, libc::SIGKILL) };
}

#[test]
fn enormous_output_on_both_streams_does_not_deadlock() {
    let (_d, tool) = fake_tool("bigerr.sh", "bigerr");
    let out = Command::new(&tool)
        .timeout(Some(Duration::from_secs(60)))
        .run()
        .unwrap();
    assert_eq!(out.termination, Termination::Exited(3));
    assert_eq!(out.stderr.len(), 6_000_000 + 4);
    assert_eq!(out.stdout.len(), 6 + 7 + 3_000_000);
    assert!(out.stderr.ends_with(b"eend\n"));
    let merged = Command::new(&tool).merge_stderr(true).run().unwrap();
    assert_eq!(merged.stdout.len(), 9_000_000 + 6 + 7 + 4);
    assert!(merged.stdout.starts_with(b"start\neee"));
    assert!(merged.stdout.ends_with(b"oooend\n"));
}

#[test]
fn resource_usage_is_reported() {
    let out = Command::new("sh")
        .args(["-c", "i=0; while [ $i -lt 20000 ]; do i=$((i+1)); done"])
        .run()
        .unwrap();
    assert!(out.termination.success());
    assert!(out.usage.max_rss_kib > 0);
    assert!(out.usage.user_time + out.usage.system_time > Duration::ZERO);
}

#[test]
fn many_threads_spawn_at_once() {
    let handles: Vec<_> = (0..16)
        .map(|i| {
            std::thread::spawn(move || {
                let out = Command::new("sh")
                    .args(["-c", &format!("echo {i}; echo e{i} >&2")])
                    .timeout(Some(Duration::from_secs(30)))
                    .run()
                    .unwrap();
                assert_eq!(out.stdout, format!("{i}\n").into_bytes());
                assert_eq!(out.stderr, format!("e{i}\n").into_bytes());
            })
        })
        .collect();
    for h in handles {
        h.join().unwrap();
    }
}

#[test]
fn path_search_skips_files_without_execute_permission() {
    let a = tempfile::tempdir().unwrap();
    let (b, good) = fake_tool("order.sh", "tool-x");
    let bad = a.path().join("tool-x");
    std::fs::write(&bad, "#!/bin/sh\nexit 9\n").unwrap();
    std::fs::set_permissions(&bad, std::fs::Permissions::from_mode(0o644)).unwrap();
    let path = std::env::join_paths([a.path(), b.path()]).unwrap();
    let out = Command::new("tool-x").env("PATH", &path).run().unwrap();
    assert_eq!(out.stdout, b"1\n3\n");
    drop(good);
    let err = Command::new("tool-x")
        .env("PATH", a.path())
        .run()
        .unwrap_err();
    assert_eq!(
        err.to_string(),
        format!(
            "{}: Program could not be executed: Permission denied (os error 13)",
            bad.display()
        )
    );
}

#[test]
fn children_get_default_sigpipe_although_rust_ignores_it() {
    // The Rust runtime ignores SIGPIPE in this process; an inherited
    // ignore would make `yes` report EPIPE instead of dying quietly.
    for fork in [false, true] {
        let out = Command::new("sh")
            .args(["-c", "yes | head -n 1"])
            .new_session(fork)
            .timeout(Some(Duration::from_secs(20)))
            .run()
            .unwrap();
        assert_eq!(out.stdout, b"y\n");
        assert_eq!(
            String::from_utf8_lossy(&out.stderr),
            "",
            "fork path: {fork}"
        );
    }
}

#[test]
fn timeouts_on_many_threads_at_once_are_independent() {
    // Half the threads hang and time out, half finish normally; no
    // process-wide signal handler is involved, so neither disturbs the other.
    let (_d, hang) = fake_tool("hang.sh", "hang");
    std::thread::scope(|s| {
        let hs: Vec<_> = (0..8)
            .map(|i| {
                let hang = &hang;
                s.spawn(move || {
                    if i % 2 == 0 {
                        let t = Instant::now();
                        let out = Command::new(hang)
                            .timeout(Some(Duration::from_millis(300 + 50 * i)))
                            .run()
                            .unwrap();
                        assert_eq!(out.termination, Termination::TimedOut { reaped: true });
                        assert!(t.elapsed() >= Duration::from_millis(300 + 50 * i));
                        assert!(!process_exists(out.pid));
                    } else {
                        let out = Command::new("sh")
                            .args(["-c", "sleep 0.2; echo ok"])
                            .timeout(Some(Duration::from_secs(30)))
                            .run()
                            .unwrap();
                        assert_eq!(out.termination, Termination::Exited(0));
                        assert_eq!(out.stdout, b"ok\n");
                    }
                })
            })
            .collect();
        for h in hs {
            h.join().unwrap();
        }
    });
}
