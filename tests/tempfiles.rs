//! Temporary files named after their owner: a sweep removes those of dead
//! processes of this host and nothing else.
use std::ffi::OsStr;
use std::path::Path;

use tileiras::tempfiles::{self, name_prefix, sweep, PREFIX};

fn names(dir: &Path) -> Vec<String> {
    let mut v: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    v.sort();
    v
}

/// The pid of a process that has ended and been reaped.
fn dead_pid() -> u32 {
    let mut child = std::process::Command::new("true").spawn().unwrap();
    let pid = child.id();
    child.wait().unwrap();
    pid
}

/// Our prefix with another owner: `tileiras-<host>-<pid>-<start>-`.
fn prefix_of(pid: u32, start: &str) -> String {
    let ours = name_prefix();
    let host = ours[PREFIX.len()..].split('-').next().unwrap();
    format!("{PREFIX}{host}-{pid}-{start}-")
}

#[test]
fn a_sweep_removes_only_files_of_dead_owners_of_this_host() {
    let dir = tempfile::tempdir().unwrap();
    let me = std::process::id();
    let my_start = name_prefix()[PREFIX.len()..]
        .split('-')
        .nth(2)
        .unwrap()
        .to_string();
    let dead = format!("{}abc123.ptx", prefix_of(dead_pid(), "1"));
    // Our pid, but another start time: a process that had our pid before.
    let reused = format!("{}abc123.o", prefix_of(me, "0"));
    let live = format!("{}abc123.cubin", name_prefix());
    let other_host = format!("{PREFIX}0123456789abcdef-{}-1-abc123.ptx", dead_pid());
    let unrelated = ["tileiras-abc123.ptx", "tileiras-x-1-2-y", "notes.txt"];
    for f in [&dead, &reused, &live, &other_host]
        .into_iter()
        .map(String::as_str)
        .chain(unrelated)
    {
        std::fs::write(dir.path().join(f), b"x").unwrap();
    }
    // A directory is never removed, whatever its name.
    let dead_dir = format!("{}dir", prefix_of(dead_pid(), "1"));
    std::fs::create_dir(dir.path().join(&dead_dir)).unwrap();
    assert_ne!(my_start, "0");
    assert_eq!(sweep(dir.path(), OsStr::new("")), 2);
    let mut expected: Vec<String> = [&live, &other_host, &dead_dir]
        .into_iter()
        .cloned()
        .chain(unrelated.iter().map(|s| s.to_string()))
        .collect();
    expected.sort();
    assert_eq!(names(dir.path()), expected);
}

#[test]
fn a_lead_selects_the_output_files_of_one_name() {
    let dir = tempfile::tempdir().unwrap();
    let owner = prefix_of(dead_pid(), "1");
    let mine = format!(".k.sass.{owner}abc123.tmp");
    let other = format!(".j.sass.{owner}abc123.tmp");
    std::fs::write(dir.path().join(&mine), b"x").unwrap();
    std::fs::write(dir.path().join(&other), b"x").unwrap();
    assert_eq!(sweep(dir.path(), OsStr::new(".k.sass.")), 1);
    assert_eq!(names(dir.path()), [other]);
}

#[test]
fn create_names_the_file_after_this_process_and_removes_it_on_drop() {
    let dir = tempfile::tempdir().unwrap();
    let stale = format!("{}abc123.ptx", prefix_of(dead_pid(), "1"));
    std::fs::write(dir.path().join(&stale), b"x").unwrap();
    let t = tempfiles::create(Some(dir.path()), ".ptx", b"hello").unwrap();
    let name = t.path().file_name().unwrap().to_string_lossy().into_owned();
    assert!(name.starts_with(&name_prefix()), "{name}");
    assert!(name.ends_with(".ptx"), "{name}");
    assert_eq!(std::fs::read(t.path()).unwrap(), b"hello");
    // The first file this process made there swept the stale one.
    assert_eq!(names(dir.path()), [name]);
    drop(t);
    assert!(names(dir.path()).is_empty());
}
