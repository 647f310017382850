//! No descriptor is left behind by sessions, runs, tasks and timeouts.
//! Alone in its test binary: other tests' sessions would open descriptors
//! of their own meanwhile.
mod common;

use std::time::Duration;

use common::fd_count;
use shexec::{Session, State, Stream};

fn cycle() {
    let mut s = Session::new().unwrap();
    s.set_kill_grace(Duration::from_millis(300)).unwrap();
    for i in 0..5 {
        let out = s.command(format!("echo {}; echo e >&2", i)).exec().unwrap();
        assert_eq!(out.stdout_str(), format!("{}\n", i));
    }
    let out = s.command("echo x; sleep 300").timeout(Duration::from_millis(200)).exec().unwrap();
    assert_eq!(out.state, State::TimedOut);
    let out = s.command("true").pty(true).exec().unwrap();
    assert_eq!(out.exit_code, Some(0));
    let done = s.command("echo done").start_task().unwrap();
    let fed = s.command("cat").stdin(true).start_task().unwrap();
    fed.write(b"in\n").unwrap();
    fed.close_stdin().unwrap();
    let killed = s.command("sleep 300").start_task().unwrap();
    killed.kill().unwrap();
    for t in [&done, &fed, &killed] {
        assert!(t.wait(Some(Duration::from_secs(10))).unwrap());
    }
    assert_eq!(fed.read(Stream::Stdout), b"in\n");
    let running = s.command("sleep 300").start_task().unwrap();
    let out = s.command("sleep 300 & echo left").exec().unwrap(); // adopted leftovers
    assert_eq!(out.stdout_str(), "left\n");
    drop(s); // the tasks keep the session; the last of them frees it
    drop(running);
    drop((done, fed, killed));
}

#[test]
fn no_descriptor_leaks() {
    cycle(); // first use may open what lives as long as the process
    let before = fd_count();
    cycle();
    cycle();
    let after = fd_count();
    assert_eq!(before, after, "descriptors leaked");
}
