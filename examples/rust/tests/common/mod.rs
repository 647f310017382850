//! Helpers shared by the integration tests (each test binary uses a part).
#![allow(dead_code)]

use std::fs;
use std::path::PathBuf;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::thread;
use std::time::{Duration, Instant};

/// True when `pid` exists and is not a zombie: a process reparented to an
/// init that does not reap stays a zombie, and a zombie runs nothing.
pub fn pid_alive(pid: i64) -> bool {
    let stat = match fs::read_to_string(format!("/proc/{}/stat", pid)) {
        Ok(s) => s,
        Err(_) => return false,
    };
    // the state follows the command name, which is in parentheses
    match stat.rfind(')') {
        Some(i) => !matches!(stat[i + 1..].trim_start().chars().next(), Some('Z') | Some('X')),
        None => false,
    }
}

/// Wait up to `ms` for `pid` to be gone; true when it is.
pub fn wait_gone(pid: i64, ms: u64) -> bool {
    let end = Instant::now() + Duration::from_millis(ms);
    while pid_alive(pid) {
        if Instant::now() > end {
            return false;
        }
        thread::sleep(Duration::from_millis(2));
    }
    true
}

/// A path for a file of this test, unique in the machine's temp directory.
pub fn temp_path(tag: &str) -> PathBuf {
    static N: AtomicUsize = AtomicUsize::new(0);
    let n = N.fetch_add(1, Ordering::Relaxed);
    std::env::temp_dir().join(format!("shexec-rust-{}-{}-{}", std::process::id(), tag, n))
}

/// The pids listed one per line in `text`.
pub fn pids(text: &str) -> Vec<i64> {
    text.lines().filter_map(|l| l.trim().parse().ok()).collect()
}

/// Open descriptors of this process.
pub fn fd_count() -> usize {
    fs::read_dir("/proc/self/fd").expect("/proc/self/fd").count()
}
