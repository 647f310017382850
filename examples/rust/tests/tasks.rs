//! Background tasks: read what is new, write input, kill, wait, watch until
//! quiet, and a Task outliving its Session value.
mod common;

use std::path::Path;
use std::sync::{Arc, Mutex};
use std::thread;
use std::time::{Duration, Instant};

use common::{pid_alive, pids, wait_gone};
use shexec::{ErrorKind, Leftovers, Session, State, Stream};

#[test]
fn read_returns_what_is_new() {
    let s = Session::new().unwrap();
    let task = s.command("echo one; echo err >&2; sleep 1; echo two").start_task().unwrap();
    assert!(task.id().starts_with('t'));
    // pump until the first line is read, well before the end
    let t0 = Instant::now();
    let mut first = Vec::new();
    while first.is_empty() && t0.elapsed() < Duration::from_secs(5) {
        assert!(!task.wait(Some(Duration::from_millis(50))).unwrap());
        first = task.read(Stream::Stdout);
    }
    assert_eq!(first, b"one\n");
    assert!(!task.is_finished());
    assert!(task.wait(None).unwrap());
    assert_eq!(task.read(Stream::Stdout), b"two\n");
    assert_eq!(task.read(Stream::Stdout), b"");
    assert_eq!(task.read(Stream::Stderr), b"err\n");
    let out = task.output(); // everything, not only what is new
    assert_eq!(out.stdout_str(), "one\ntwo\n");
    assert_eq!(out.state, State::Exited);
    assert_eq!(out.exit_code, Some(0));
}

#[test]
fn write_to_stdin_then_close_it() {
    let s = Session::new().unwrap();
    let task = s.command("read line; echo \"got $line\"; cat").stdin(true).start_task().unwrap();
    task.write(b"hello\n").unwrap();
    task.write(b"more\nand more\n").unwrap();
    task.close_stdin().unwrap();
    assert!(task.wait(Some(Duration::from_secs(10))).unwrap());
    assert_eq!(task.read(Stream::Stdout), b"got hello\nmore\nand more\n");
    assert_eq!(task.output().exit_code, Some(0));
    // the process ended: input can no longer be written
    assert_eq!(task.write(b"late").unwrap_err().kind(), ErrorKind::Pipe);

    let no_stdin = s.command("sleep 0.1").start_task().unwrap();
    assert_eq!(no_stdin.write(b"x").unwrap_err().kind(), ErrorKind::Pipe);
}

#[test]
fn resize_a_running_terminal() {
    let s = Session::new().unwrap();
    let task = s
        .command("trap 'echo WINCH $(stty size)' WINCH; echo ready; sleep 20 & wait $!; kill $!")
        .pty(true)
        .start_task()
        .unwrap();
    let t0 = Instant::now();
    while !task.output().stdout_str().contains("ready") && t0.elapsed() < Duration::from_secs(10) {
        task.wait(Some(Duration::from_millis(50))).unwrap();
    }
    task.wait(Some(Duration::from_millis(100))).unwrap(); // `wait` is waiting
    assert_eq!(task.set_pty_size(0, 30).unwrap_err().kind(), ErrorKind::InvalidArgument);
    task.set_pty_size(100, 30).unwrap();
    assert!(task.wait(Some(Duration::from_secs(10))).unwrap());
    assert_eq!(task.output().stdout_str(), "ready\nWINCH 30 100\n");
    assert_eq!(task.set_pty_size(80, 24).unwrap_err().kind(), ErrorKind::State);
    // a task on pipes has no terminal
    let pipes = s.command("sleep 20").start_task().unwrap();
    assert_eq!(pipes.set_pty_size(80, 24).unwrap_err().kind(), ErrorKind::State);
}

#[test]
fn kill_then_wait() {
    let s = Session::new().unwrap();
    let task = s.command("sleep 300").start_task().unwrap();
    let pid = task.pid();
    assert!(pid > 0 && pid_alive(pid));
    // a wait that times out says so
    let t0 = Instant::now();
    assert!(!task.wait(Some(Duration::from_millis(200))).unwrap());
    assert!(t0.elapsed() >= Duration::from_millis(200));
    assert_eq!(task.state(), State::Running);
    task.kill().unwrap();
    assert!(task.wait(Some(Duration::from_secs(10))).unwrap());
    assert!(t0.elapsed() < Duration::from_secs(10));
    assert_eq!(task.state(), State::Killed);
    assert_eq!(task.output().signal, Some(15));
    assert!(wait_gone(pid, 2000));
    task.kill().unwrap(); // a finished task is left as it is
    assert_eq!(task.state(), State::Killed);
}

#[test]
fn task_timeout_and_drop_ends_it() {
    let s = Session::new().unwrap();
    let task = s.command("sleep 300").timeout(Duration::from_millis(300)).start_task().unwrap();
    assert!(task.wait(Some(Duration::from_secs(10))).unwrap());
    assert_eq!(task.state(), State::TimedOut);

    let task = s.command("sleep 300").start_task().unwrap();
    let pid = task.pid();
    drop(task); // ends the command, and waits for that
    assert!(wait_gone(pid, 2000));
}

#[test]
fn task_slots_are_bounded() {
    let mut s = Session::new().unwrap();
    s.set_max_tasks(1).unwrap();
    let a = s.command("sleep 300").start_task().unwrap();
    let err = s.command("sleep 300").start_task().unwrap_err();
    assert_eq!(err.kind(), ErrorKind::Limit);
    assert!(!err.message().is_empty());
    drop(a); // frees the slot
    let b = s.command("true").start_task().unwrap();
    assert!(b.wait(None).unwrap());
}

#[test]
fn task_output_closure_and_another_thread() {
    let s = Session::new().unwrap();
    let seen = Arc::new(Mutex::new(Vec::new()));
    let sink = Arc::clone(&seen);
    let task = s
        .command("for i in 1 2 3; do echo $i; sleep 0.05; done")
        .on_output(move |stream, data| {
            assert_eq!(stream, Stream::Stdout);
            sink.lock().unwrap().extend_from_slice(data);
        })
        .start_task()
        .unwrap();
    // the task waits on another thread while this one runs commands in the
    // same session: the two are serialized, and both complete
    let waiter = thread::spawn(move || {
        assert!(task.wait(None).unwrap());
        task.output()
    });
    for _ in 0..5 {
        assert_eq!(s.command("echo main").exec().unwrap().stdout_str(), "main\n");
    }
    let out = waiter.join().unwrap();
    assert_eq!(out.stdout_str(), "1\n2\n3\n");
    assert_eq!(&*seen.lock().unwrap(), b"1\n2\n3\n");
}

#[test]
fn task_outlives_its_session_value() {
    let mut s = Session::new().unwrap();
    s.set_cwd("/tmp").unwrap();
    let task = s.command("echo before; sleep 0.3; pwd").start_task().unwrap();
    drop(s);
    // the session lives on inside the task, on any thread
    let out = thread::spawn(move || {
        assert!(task.wait(None).unwrap());
        task.output()
    })
    .join()
    .unwrap();
    assert_eq!(out.stdout_str(), "before\n/tmp\n");
    assert_eq!(out.exit_code, Some(0));
    assert_eq!(out.cwd, Path::new("/tmp"));
}

#[test]
fn last_handle_frees_the_session_and_its_leftovers() {
    let s = Session::new().unwrap();
    let out = s.command("sleep 300 & echo $!").exec().unwrap();
    let leftover = pids(&out.stdout_str())[0];
    assert!(matches!(out.leftovers, Leftovers::Adopted(_)));
    let task = s.command("sleep 300").start_task().unwrap();
    let pid = task.pid();
    drop(s);
    // the task holds the session: neither its command nor the session's
    // adopted leftovers are ended by dropping the Session value
    thread::sleep(Duration::from_millis(100));
    assert!(pid_alive(pid) && pid_alive(leftover));
    assert_eq!(task.state(), State::Running);
    drop(task); // the last handle: the task, then the session, are freed
    assert!(wait_gone(pid, 2000), "task {} survived", pid);
    assert!(wait_gone(leftover, 2000), "leftover {} survived its session", leftover);
}

#[test]
fn callbacks_may_use_the_session_but_not_start_commands() {
    let s = Session::new().unwrap();
    let mut cwd_seen = None;
    let mut nested = None;
    let out = s
        .command("echo x")
        .on_output(|_, _| {
            // an accessor from inside the loop: allowed
            cwd_seen = Some(s.cwd());
            // starting a command from inside the loop: refused, not a deadlock
            nested = Some(s.command("true").start_task().map(|_| ()));
        })
        .exec()
        .unwrap();
    assert_eq!(out.stdout_str(), "x\n");
    assert_eq!(cwd_seen, Some(s.cwd()));
    assert_eq!(nested.unwrap().unwrap_err().kind(), ErrorKind::State);
    // and the session is fine afterwards
    assert_eq!(s.command("echo y").exec().unwrap().stdout_str(), "y\n");
}

#[test]
fn watch_returns_when_quiet_ended_or_at_its_time() {
    use shexec::Watch;
    let s = Session::new().unwrap();
    let task = s.command("echo a; sleep 0.4; echo b; sleep 30").start_task().unwrap();
    let t0 = Instant::now();
    assert_eq!(task.watch(Duration::from_millis(800), Some(Duration::from_secs(20))).unwrap(),
               Watch::Quiet);
    // b came at ~0.4 s: quiet 0.8 s after it, not 0.8 s after the call
    let took = t0.elapsed();
    assert!(took >= Duration::from_millis(1100) && took < Duration::from_secs(8), "{:?}", took);
    assert_eq!(task.read(Stream::Stdout), b"a\nb\n");
    assert!(task.quiet() >= Duration::from_millis(800));
    // silent before the call: the quiet counts from the call
    let t0 = Instant::now();
    assert_eq!(task.watch(Duration::from_millis(500), None).unwrap(), Watch::Quiet);
    assert!(t0.elapsed() >= Duration::from_millis(450));
    drop(task);

    let busy = s.command("while :; do echo x; sleep 0.1; done").start_task().unwrap();
    let t0 = Instant::now();
    assert_eq!(busy.watch(Duration::from_millis(600), Some(Duration::from_millis(1000))).unwrap(),
               Watch::Time);
    assert!(t0.elapsed() >= Duration::from_millis(950));
    drop(busy);

    let short = s.command("sleep 0.3; exit 4").start_task().unwrap();
    assert_eq!(short.watch(Duration::from_secs(5), Some(Duration::from_secs(20))).unwrap(),
               Watch::Ended);
    assert_eq!(short.output().exit_code, Some(4));

    if std::fs::read_to_string("/proc/self/syscall").is_ok() {
        let asks = s.command("read x; echo got $x").stdin(true).start_task().unwrap();
        assert_eq!(asks.watch(Duration::ZERO, Some(Duration::from_secs(20))).unwrap(), Watch::Input);
        asks.write(b"y\n").unwrap();
        assert_eq!(asks.watch(Duration::ZERO, Some(Duration::from_secs(20))).unwrap(), Watch::Ended);
        assert_eq!(asks.read(Stream::Stdout), b"got y\n");
    }
}
