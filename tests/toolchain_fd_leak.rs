//! No descriptor outlives a run, whatever the outcome. (Alone in its own
//! test binary: other tests' threads would open descriptors meanwhile.)
mod common;

use std::time::Duration;

use common::*;
use tileiras::toolchain::process::Command;
use tileiras::toolchain::ptxas::{self, PtxasJob};
use tileiras::toolchain::Toolkit;

fn open_fds() -> usize {
    std::fs::read_dir("/proc/self/fd").unwrap().count()
}

#[test]
fn runs_leave_no_descriptor_behind() {
    let (_a, order) = fake_tool("order.sh", "order");
    let (_b, hang) = fake_tool("hang.sh", "hang");
    let (_c, fail) = fake_tool("fail.sh", "ptxas");
    let tk = Toolkit::from_paths(&fail, "/nonexistent");
    // Warm up anything lazily opened.
    Command::new(&order).run().unwrap();
    let before = open_fds();
    for _ in 0..20 {
        Command::new(&order).run().unwrap();
        Command::new(&order)
            .merge_stderr(true)
            .new_session(true)
            .run()
            .unwrap();
        Command::new("/nonexistent/x").run().unwrap_err();
        Command::new(&hang)
            .timeout(Some(Duration::from_millis(20)))
            .run()
            .unwrap();
        ptxas::assemble(&tk, &PtxasJob::with_arch("x".repeat(200_000), "sm_90a")).unwrap_err();
    }
    assert_eq!(open_fds(), before);
}
