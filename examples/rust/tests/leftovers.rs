//! Processes a command leaves running: adopted as a task (the default) or
//! killed, as the session's policy says; never left behind by the session.
mod common;

use std::time::{Duration, Instant};

use common::{pid_alive, pids, wait_gone};
use shexec::{ErrorKind, LeftoverPolicy, Leftovers, Session, State};

#[test]
fn adopted_by_default_and_taken_as_a_task() {
    let s = Session::new().unwrap();
    assert_eq!(s.on_leftovers(), LeftoverPolicy::Adopt);
    let t0 = Instant::now();
    let out = s.command("sleep 300 & echo $!; echo started").exec().unwrap();
    // the run completes when its shell exits, not when the pipes close
    assert!(t0.elapsed() < Duration::from_secs(5), "{:?}", t0.elapsed());
    assert_eq!(out.exit_code, Some(0));
    let pid = pids(&out.stdout_str())[0];
    assert!(out.stdout_str().ends_with("started\n"));
    let id = match &out.leftovers {
        Leftovers::Adopted(id) => id.clone(),
        other => panic!("expected adopted leftovers, got {:?}", other),
    };
    assert!(id.starts_with('t') && id.len() == 13, "{}", id);
    assert!(pid_alive(pid));

    let task = s.take_task(&id).unwrap();
    assert_eq!(task.id(), id);
    // one owner only: a second Task would free the same C task twice
    assert_eq!(s.take_task(&id).unwrap_err().kind(), ErrorKind::State);
    assert_eq!(s.take_task("t000000000000").unwrap_err().kind(), ErrorKind::NoTask);
    assert!(!task.is_finished());
    task.kill().unwrap();
    assert!(task.wait(Some(Duration::from_secs(10))).unwrap());
    assert_eq!(task.state(), State::Killed);
    assert_eq!(task.output().exit_code, None); // not our child: no status
    assert!(wait_gone(pid, 2000), "leftover {} survived its kill", pid);
    drop(task);
    // freed: it may be taken again by nobody
    assert_eq!(s.take_task(&id).unwrap_err().kind(), ErrorKind::NoTask);
}

#[test]
fn killed_under_the_kill_policy() {
    let mut s = Session::new().unwrap();
    s.set_on_leftovers(LeftoverPolicy::Kill).unwrap();
    assert_eq!(s.on_leftovers(), LeftoverPolicy::Kill);
    let out = s.command("sleep 300 >/dev/null 2>&1 & echo $!").exec().unwrap();
    let pid = pids(&out.stdout_str())[0];
    assert_eq!(out.leftovers, Leftovers::Killed);
    assert!(wait_gone(pid, 2000), "leftover {} survived the kill policy", pid);
    // nothing left: nothing to report
    let out = s.command("true").exec().unwrap();
    assert_eq!(out.leftovers, Leftovers::None);
}

#[test]
fn adopted_leftovers_end_with_the_session() {
    let s = Session::new().unwrap();
    let out = s.command("sleep 300 & echo $!").exec().unwrap();
    let pid = pids(&out.stdout_str())[0];
    assert!(matches!(out.leftovers, Leftovers::Adopted(_)));
    assert!(pid_alive(pid));
    drop(s);
    assert!(wait_gone(pid, 2000), "leftover {} outlived its session", pid);
}
