//! Output files: regular files replaced atomically with their mode kept,
//! devices and FIFOs written in place, symbolic links followed.
mod common;

use common::entries;
use std::os::unix::fs::{FileTypeExt, PermissionsExt};
use std::path::Path;
use tileiras::elf;

fn mode(p: &Path) -> u32 {
    std::fs::metadata(p).unwrap().permissions().mode() & 0o777
}

#[test]
fn a_regular_file_is_created_and_replaced() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("out.o");
    elf::write_output(&p, b"first").unwrap();
    assert_eq!(std::fs::read(&p).unwrap(), b"first");
    elf::write_output(&p, b"second, longer").unwrap();
    assert_eq!(std::fs::read(&p).unwrap(), b"second, longer");
    assert_eq!(entries(dir.path()), ["out.o"]);
    // A new file's mode follows the umask like a freshly created file.
    let plain = dir.path().join("plain");
    std::fs::File::create(&plain).unwrap();
    assert_eq!(mode(&p), mode(&plain));
}

#[test]
fn a_failed_write_leaves_the_file_system_as_it_was() {
    let dir = tempfile::tempdir().unwrap();
    // Missing folder: error, nothing created.
    let missing = dir.path().join("no/such/dir/out.o");
    assert!(elf::write_output(&missing, b"x").is_err());
    assert!(entries(dir.path()).is_empty());
    // The target is a non-empty directory: rename fails, temp file removed.
    let target = dir.path().join("taken");
    std::fs::create_dir(&target).unwrap();
    std::fs::write(target.join("keep"), b"k").unwrap();
    assert!(elf::write_output(&target, b"x").is_err());
    assert_eq!(entries(dir.path()), ["taken"]);
    assert_eq!(entries(&target), ["keep"]);
    // A relative path with no folder part writes in the current folder's
    // sense of ".": exercised through a bare name error path instead.
    assert!(elf::write_output(std::path::Path::new("/"), b"x").is_err());
}

#[test]
fn a_replaced_file_keeps_its_mode() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("k.cubin");
    std::fs::write(&p, b"old").unwrap();
    for m in [0o600, 0o751] {
        std::fs::set_permissions(&p, std::fs::Permissions::from_mode(m)).unwrap();
        elf::write_output(&p, b"new").unwrap();
        assert_eq!(std::fs::read(&p).unwrap(), b"new");
        assert_eq!(mode(&p), m);
    }
    assert_eq!(entries(dir.path()), ["k.cubin"]);
}

#[test]
fn symbolic_links_are_followed_and_stay() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    std::fs::create_dir(d.join("out")).unwrap();
    // A chain of two links, the first relative to its own folder.
    std::os::unix::fs::symlink("out/mid", d.join("first")).unwrap();
    std::os::unix::fs::symlink(d.join("out/k.cubin"), d.join("out/mid")).unwrap();
    std::fs::write(d.join("out/k.cubin"), b"old").unwrap();
    elf::write_output(&d.join("first"), b"new").unwrap();
    assert_eq!(std::fs::read(d.join("out/k.cubin")).unwrap(), b"new");
    for link in ["first", "out/mid"] {
        let m = std::fs::symlink_metadata(d.join(link)).unwrap();
        assert!(m.file_type().is_symlink(), "{link}");
    }
    // A dangling link: the file it names is created.
    std::os::unix::fs::symlink("made.cubin", d.join("out/dangling")).unwrap();
    elf::write_output(&d.join("out/dangling"), b"made").unwrap();
    assert_eq!(std::fs::read(d.join("out/made.cubin")).unwrap(), b"made");
    assert_eq!(
        entries(&d.join("out")),
        ["dangling", "k.cubin", "made.cubin", "mid"]
    );
    // A loop is an error and writes nothing.
    std::os::unix::fs::symlink("b", d.join("a")).unwrap();
    std::os::unix::fs::symlink("a", d.join("b")).unwrap();
    assert!(elf::write_output(&d.join("a"), b"x").is_err());
    assert_eq!(entries(d), ["a", "b", "first", "out"]);
}

#[test]
fn fifos_are_written_in_place_through_links_too() {
    let dir = tempfile::tempdir().unwrap();
    let fifo = dir.path().join("pipe");
    nix::unistd::mkfifo(&fifo, nix::sys::stat::Mode::from_bits_truncate(0o600)).unwrap();
    let link = dir.path().join("link");
    std::os::unix::fs::symlink("pipe", &link).unwrap();
    for (path, text) in [(&fifo, "through the pipe"), (&link, "through the link")] {
        let reader = {
            let fifo = fifo.clone();
            std::thread::spawn(move || std::fs::read(fifo).unwrap())
        };
        elf::write_output(path, text.as_bytes()).unwrap();
        assert_eq!(reader.join().unwrap(), text.as_bytes());
    }
    let m = std::fs::symlink_metadata(&fifo).unwrap();
    assert!(m.file_type().is_fifo(), "{m:?}");
    assert_eq!(entries(dir.path()), ["link", "pipe"]);
}
