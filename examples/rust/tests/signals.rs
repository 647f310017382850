//! Signals sent to a task: Ctrl+C to a pipe-mode task (send_signal, or ^C
//! typed) takes Python http.server's KeyboardInterrupt path; a task that
//! dies of it says signal 2; names; what is refused.
mod common;

use std::io::{Read, Write};
use std::net::TcpStream;
use std::path::Path;
use std::time::{Duration, Instant};

use shexec::{ErrorKind, Session, Signal, State, Stream, Task};

const PYTHON: &str = "/usr/bin/python3";
/// "ready" from the process the signal is for: forked already (a child bash
/// forks as a signal comes starts without it, and bash waits for it).
const READY_SLEEP: &str = "sh -c 'echo ready; exec sleep 60'";

/// Pump until the task's stdout holds `text` (a minute at most).
fn wait_for(task: &Task, text: &str) -> String {
    let end = Instant::now() + Duration::from_secs(60);
    loop {
        let out = task.output().stdout_str().into_owned();
        if out.contains(text) {
            return out;
        }
        assert!(Instant::now() < end && !task.is_finished(), "no {:?} in {:?}", text, out);
        task.wait(Some(Duration::from_millis(50))).unwrap();
    }
}

/// The server's task, serving: its "Serving" line, then a request answered
/// on the loopback (only inside serve_forever() does a SIGINT take its
/// KeyboardInterrupt path; the line is printed just before it).
fn start_server(s: &Session) -> Task {
    let task = s
        .command(format!("{} -u -m http.server 0 --bind 127.0.0.1", PYTHON))
        .start_task()
        .unwrap();
    let out = wait_for(&task, "Serving HTTP on");
    let port: u16 = out.split(" port ").nth(1).unwrap().split(' ').next().unwrap().parse().unwrap();
    let mut conn = TcpStream::connect(("127.0.0.1", port)).unwrap();
    conn.set_read_timeout(Some(Duration::from_secs(60))).unwrap();
    conn.write_all(b"GET / HTTP/1.0\r\n\r\n").unwrap();
    let mut reply = Vec::new();
    conn.read_to_end(&mut reply).unwrap(); // to its end: the request is over
    assert!(reply.starts_with(b"HTTP/1.0 200"), "{}", String::from_utf8_lossy(&reply));
    task
}

#[test]
fn ctrl_c_to_http_server() {
    if !Path::new(PYTHON).exists() {
        eprintln!("no {}: skipped", PYTHON);
        return;
    }
    let s = Session::new().unwrap();
    for typed in [false, true] {
        let task = start_server(&s);
        assert!(!task.interrupted());
        if typed {
            task.type_input(b"\x03").unwrap(); // no stdin(true): a ^C needs none
        } else {
            task.send_signal(Signal::Int).unwrap();
        }
        assert!(task.wait(Some(Duration::from_secs(60))).unwrap());
        let out = task.output();
        assert!(
            out.stdout_str().contains("Keyboard interrupt received, exiting."),
            "{:?}",
            out
        );
        assert_eq!((out.state, out.exit_code, out.signal), (State::Exited, Some(0), None));
        assert!(out.interrupted && task.interrupted());
        // over: nothing is sent
        assert_eq!(task.send_signal(Signal::Int).unwrap_err().kind(), ErrorKind::State);
    }
}

#[test]
fn a_task_ended_by_ctrl_c_says_signal_2() {
    let s = Session::new().unwrap();
    let task = s.command(READY_SLEEP).start_task().unwrap();
    wait_for(&task, "ready");
    task.send_signal("int".parse().unwrap()).unwrap();
    assert!(task.wait(Some(Duration::from_secs(60))).unwrap());
    let out = task.output();
    assert_eq!(out.state, State::Signaled);
    assert_eq!(out.signal, Some(Signal::Int.number()));
    assert_eq!(out.exit_code, None);
    assert!(out.interrupted);
}

#[test]
fn names_and_other_signals() {
    if cfg!(target_os = "linux") {
        assert_eq!((Signal::Int.number(), Signal::Term.number()), (2, 15));
    }
    for (name, sig) in [("SIGINT", Signal::Int), ("INT", Signal::Int), ("int", Signal::Int),
                        ("SigTerm", Signal::Term), ("usr1", Signal::Usr1), ("STOP", Signal::Stop)] {
        assert_eq!(name.parse::<Signal>().unwrap(), sig, "{}", name);
    }
    for bad in ["", "SIGSEGV", "TSTP", "2", "INT\0"] {
        let e = bad.parse::<Signal>().unwrap_err();
        assert_eq!(e.kind(), ErrorKind::InvalidArgument, "{:?}", bad);
    }
    assert_eq!(Signal::from_number(Signal::Hup.number()), Some(Signal::Hup));
    assert_eq!(Signal::Quit.to_string(), "SIGQUIT");

    // SIGUSR1 reaches the command's trap; it is no interrupt
    let s = Session::new().unwrap();
    let task = s
        .command("trap 'echo usr1; exit 7' USR1; echo ready; while :; do sleep 0.1; done")
        .start_task()
        .unwrap();
    wait_for(&task, "ready");
    task.send_signal(Signal::Usr1).unwrap();
    assert!(task.wait(Some(Duration::from_secs(60))).unwrap());
    assert_eq!(task.read(Stream::Stdout), b"ready\nusr1\n");
    let out = task.output();
    assert_eq!((out.state, out.exit_code, out.interrupted), (State::Exited, Some(7), false));
    assert_eq!(task.type_input(b"\x03").unwrap_err().kind(), ErrorKind::Pipe);
}
