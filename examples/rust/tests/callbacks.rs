//! Output closures: chunks in order as they come, and panics that never
//! cross into the library.
mod common;

use std::cell::Cell;
use std::panic::{self, AssertUnwindSafe};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use common::{pid_alive, wait_gone};
use shexec::{Session, State, Stream, Task};

fn panic_text(payload: &(dyn std::any::Any + Send)) -> String {
    if let Some(s) = payload.downcast_ref::<&str>() {
        s.to_string()
    } else if let Some(s) = payload.downcast_ref::<String>() {
        s.clone()
    } else {
        "<not a string>".to_string()
    }
}

#[test]
fn chunks_arrive_in_order_while_the_command_runs() {
    let s = Session::new().unwrap();
    let mut chunks: Vec<(Stream, Vec<u8>, Instant)> = Vec::new();
    let out = s
        .command("for i in $(seq 1 40); do echo line $i; echo e$i >&2; sleep 0.01; done")
        .on_output(|stream, data| chunks.push((stream, data.to_vec(), Instant::now())))
        .exec()
        .unwrap();
    let end = Instant::now();
    let joined = |which: Stream| -> Vec<u8> {
        chunks.iter().filter(|c| c.0 == which).flat_map(|c| c.1.iter().copied()).collect()
    };
    assert_eq!(joined(Stream::Stdout), out.stdout);
    assert_eq!(joined(Stream::Stderr), out.stderr);
    let expected: String = (1..=40).map(|i| format!("line {}\n", i)).collect();
    assert_eq!(out.stdout_str(), expected);
    // streamed, not handed over at the end
    let stdout_chunks = chunks.iter().filter(|c| c.0 == Stream::Stdout).count();
    assert!(stdout_chunks > 1, "{} chunk(s)", stdout_chunks);
    assert!(end.duration_since(chunks[0].2) > Duration::from_millis(200));
}

#[test]
fn panic_in_exec_closure_is_resumed_after_the_command_ended() {
    // the default grace: a child bash forks as the SIGTERM comes gets it
    // from the library too, so the cancel does not wait for the SIGKILL
    let s = Session::new().unwrap();
    let calls = Cell::new(0);
    let t0 = Instant::now();
    let result = panic::catch_unwind(AssertUnwindSafe(|| {
        s.command("echo first; sleep 30; echo never")
            .on_output(|_, _| {
                calls.set(calls.get() + 1);
                panic!("boom from a callback");
            })
            .exec()
    }));
    let payload = result.expect_err("the closure's panic reaches the caller of exec");
    assert_eq!(panic_text(&*payload), "boom from a callback");
    assert_eq!(calls.get(), 1, "a closure that panicked is not called again");
    // the command was cancelled, not waited for
    assert!(t0.elapsed() < Duration::from_secs(20), "{:?}", t0.elapsed());
    // the session is usable, with nothing left running
    let out = s.command("echo still here").exec().unwrap();
    assert_eq!(out.stdout_str(), "still here\n");
    assert_eq!(s.wait(Some(Duration::ZERO)).unwrap(), 0);
}

#[test]
fn panic_in_task_closure_kills_it_and_is_resumed_by_wait() {
    let s = Session::new().unwrap(); // the default grace, as above
    let task = s
        .command("echo a; sleep 300")
        .on_output(|_, _| panic!("boom from a task"))
        .start_task()
        .unwrap();
    let pid = task.pid();
    let result = panic::catch_unwind(AssertUnwindSafe(|| task.wait(None)));
    let payload = result.expect_err("the task's panic reaches Task::wait");
    assert_eq!(panic_text(&*payload), "boom from a task");
    // resumed once; the task was killed and ends
    assert!(task.wait(Some(Duration::from_secs(10))).unwrap());
    assert_eq!(task.state(), State::Killed);
    assert!(wait_gone(pid, 2000));
    assert_eq!(s.command("echo ok").exec().unwrap().stdout_str(), "ok\n");
}

#[test]
fn a_task_dropped_from_its_own_closure() {
    let s = Session::new().unwrap(); // the default grace, as above
    let holder: Arc<Mutex<Option<Task>>> = Arc::new(Mutex::new(None));
    let inside = Arc::clone(&holder);
    let task = s
        .command("echo go; sleep 300")
        .on_output(move |_, _| {
            // frees the task whose closure this is, while it runs
            drop(inside.lock().unwrap().take());
        })
        .start_task()
        .unwrap();
    let pid = task.pid();
    *holder.lock().unwrap() = Some(task);
    let t0 = Instant::now();
    while holder.lock().unwrap().is_some() && t0.elapsed() < Duration::from_secs(10) {
        s.wait(Some(Duration::from_millis(100))).unwrap();
    }
    assert!(holder.lock().unwrap().is_none());
    // freed from a callback, the task is ended as the loop goes on
    while pid_alive(pid) && t0.elapsed() < Duration::from_secs(10) {
        s.wait(Some(Duration::from_millis(20))).unwrap();
    }
    assert!(wait_gone(pid, 1000), "the task dropped from its closure still runs");
    // the closure (and the Arc it held) went once the loop returned
    assert_eq!(Arc::strong_count(&holder), 1);
    assert_eq!(s.command("echo ok").exec().unwrap().stdout_str(), "ok\n");
}
