//! A timeout ends the whole process tree, and the output so far is kept.
mod common;

use std::fs;
use std::time::{Duration, Instant};

use common::{pid_alive, pids, temp_path};
use shexec::{Session, State};

#[test]
fn timeout_keeps_partial_output_and_kills_the_tree() {
    let s = Session::new().unwrap();
    let file = temp_path("timeout-pids");
    let f = file.display();
    // two background children, a grandchild under a nested shell, and the
    // shell itself blocked: all must be gone when exec returns
    let cmd = format!(
        "sleep 300 & echo $! >> {f}; sleep 300 & echo $! >> {f}; \
         sh -c 'sleep 300 & echo $! >> {f}; wait' & \
         echo partial; sleep 300",
        f = f
    );
    let t0 = Instant::now();
    let out = s.command(cmd).timeout(Duration::from_millis(700)).exec().unwrap();
    let took = t0.elapsed();
    assert_eq!(out.state, State::TimedOut);
    assert!(out.timed_out());
    assert_eq!(out.exit_code, None);
    assert_eq!(out.signal, Some(15));
    assert_eq!(out.stdout_str(), "partial\n");
    assert!(took >= Duration::from_millis(700), "{:?}", took);
    assert!(took < Duration::from_secs(10), "{:?}", took);

    let listed = pids(&fs::read_to_string(&file).unwrap());
    let _ = fs::remove_file(&file);
    assert_eq!(listed.len(), 3, "{:?}", listed);
    for pid in listed.iter().copied().chain(Some(out.pid)) {
        assert!(!pid_alive(pid), "pid {} survived the timeout", pid);
    }
}

#[test]
fn session_timeouts_apply_and_clamp() {
    let mut s = Session::new().unwrap();
    s.set_timeouts(Duration::from_millis(300), Duration::from_millis(600)).unwrap();
    let t0 = Instant::now();
    let out = s.command("sleep 30").exec().unwrap(); // the session default
    assert_eq!(out.state, State::TimedOut);
    // a larger timeout is clamped to the session's maximum
    let out = s.command("sleep 30").timeout(Duration::from_secs(60)).exec().unwrap();
    assert_eq!(out.state, State::TimedOut);
    assert!(t0.elapsed() < Duration::from_secs(10), "{:?}", t0.elapsed());
    // the cwd of a timed-out command is not taken
    let before = s.cwd();
    let out = s.command("cd /; sleep 30").exec().unwrap();
    assert_eq!(out.state, State::TimedOut);
    assert_eq!(s.cwd(), before);
}
