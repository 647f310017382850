//! The main path: output, exit codes, the cwd that follows `cd`, errors.
use std::path::Path;
use std::time::Duration;

use shexec::{ErrorKind, Keep, Session, State, Unit};

#[test]
fn echo() {
    let s = Session::new().unwrap();
    let out = s.command("echo hello").exec().unwrap();
    assert_eq!(out.stdout, b"hello\n");
    assert_eq!(out.stdout_str(), "hello\n");
    assert!(out.stderr.is_empty());
    assert_eq!(out.state, State::Exited);
    assert_eq!(out.exit_code, Some(0));
    assert_eq!(out.signal, None);
    assert!(out.success() && !out.timed_out() && !out.truncated());
    assert!(out.pid > 0);
}

#[test]
fn exit_code_42() {
    let s = Session::new().unwrap();
    let out = s.command("echo before; exit 42").exec().unwrap();
    assert_eq!(out.state, State::Exited);
    assert_eq!(out.exit_code, Some(42));
    assert!(!out.success());
    assert_eq!(out.stdout_str(), "before\n");
}

#[test]
fn stderr_apart_from_stdout() {
    let s = Session::new().unwrap();
    let out = s.command("echo out; echo oops >&2; printf 'no newline' >&2").exec().unwrap();
    assert_eq!(out.stdout_str(), "out\n");
    assert_eq!(out.stderr_str(), "oops\nno newline");
    assert_eq!(out.total_bytes, (4, 15));
}

#[test]
fn bytes_are_kept_as_written() {
    let s = Session::new().unwrap();
    let out = s.command("printf 'a\\000b\\377'").exec().unwrap();
    assert_eq!(out.stdout, b"a\0b\xff");
    assert_eq!(out.stdout_str(), "a\0b\u{fffd}");
}

#[test]
fn cd_persists_across_commands() {
    let s = Session::new().unwrap();
    let out = s.command("cd /tmp").exec().unwrap();
    assert_eq!(out.cwd, Path::new("/tmp"));
    assert_eq!(s.cwd(), Path::new("/tmp"));
    let out = s.command("pwd").exec().unwrap();
    assert_eq!(out.stdout_str(), "/tmp\n");
    // a command given its own directory does not move the session
    let out = s.command("pwd; cd /usr").cwd("/").exec().unwrap();
    assert_eq!(out.stdout_str(), "/\n");
    assert_eq!(s.cwd(), Path::new("/tmp"));
}

#[test]
fn cwd_setter_and_its_error() {
    let mut s = Session::new().unwrap();
    s.set_cwd("/usr").unwrap();
    assert_eq!(s.command("pwd").exec().unwrap().stdout_str(), "/usr\n");
    s.set_cwd("bin").unwrap(); // relative to the session cwd
    assert_eq!(s.cwd(), Path::new("/usr/bin"));
    let err = s.set_cwd("/no/such/directory/here").unwrap_err();
    assert_eq!(err.kind(), ErrorKind::NoCwd);
    assert_eq!(err.code(), -3);
    assert!(!err.message().is_empty());
    assert!(err.to_string().contains(err.message()));
    assert_eq!(s.cwd(), Path::new("/usr/bin"));
    let err = s.command("pwd").cwd("/no/such/directory/here").exec().unwrap_err();
    assert_eq!(err.kind(), ErrorKind::NoCwd);
}

#[test]
fn environment_of_session_and_command() {
    let mut s = Session::new().unwrap();
    s.set_env("SHEXEC_RUST_A", "from session").unwrap();
    assert_eq!(s.getenv("SHEXEC_RUST_A").unwrap(), "from session");
    let out = s
        .command("echo \"$SHEXEC_RUST_A|$SHEXEC_RUST_B\"")
        .env("SHEXEC_RUST_B", "from command")
        .exec()
        .unwrap();
    assert_eq!(out.stdout_str(), "from session|from command\n");
    let out = s.command("echo \"${SHEXEC_RUST_A-unset}\"").env_remove("SHEXEC_RUST_A").exec();
    assert_eq!(out.unwrap().stdout_str(), "unset\n");
    s.remove_env("SHEXEC_RUST_A").unwrap();
    assert_eq!(s.getenv("SHEXEC_RUST_A"), None);
    assert_eq!(s.set_env("BAD=NAME", "x").unwrap_err().kind(), ErrorKind::InvalidArgument);
}

#[test]
fn invalid_arguments_are_errors_not_runs() {
    let s = Session::new().unwrap();
    assert_eq!(s.command("").exec().unwrap_err().kind(), ErrorKind::InvalidArgument);
    assert_eq!(s.command("echo a\0b").exec().unwrap_err().kind(), ErrorKind::InvalidArgument);
    let err = s.command("true").timeout(Duration::ZERO).exec().unwrap_err();
    assert_eq!(err.kind(), ErrorKind::InvalidArgument);
    let err = s.command("true").env("A", "b\0c").exec().unwrap_err();
    assert_eq!(err.kind(), ErrorKind::InvalidArgument);
    assert!(err.message().contains("NUL"));
}

#[test]
fn signal_and_pty_and_limit() {
    let mut s = Session::new().unwrap();
    let out = s.command("kill -9 $$").exec().unwrap();
    assert_eq!(out.state, State::Signaled);
    assert_eq!(out.signal, Some(9));
    assert_eq!(out.exit_code, None);

    let out = s.command("test -t 1 && echo tty || echo pipe").pty(true).exec().unwrap();
    assert_eq!(out.stdout_str().trim_end(), "tty");
    let out = s.command("test -t 1 && echo tty || echo pipe").exec().unwrap();
    assert_eq!(out.stdout_str(), "pipe\n");

    s.set_output_limit(10, Unit::Bytes, Keep::Head).unwrap();
    assert_eq!(s.output_limit(), (10, Unit::Bytes, Keep::Head));
    let out = s.command("printf '%0100d' 0").exec().unwrap();
    assert!(out.stdout_truncated && out.truncated());
    assert!(out.stdout.starts_with(b"0000000000\n[output truncated"), "{}", out.stdout_str());
    assert_eq!(out.total_bytes.0, 100);
    assert_eq!(out.total_lines, (1, 0));
}

#[test]
fn a_limit_that_holds_the_notice() {
    let mut s = Session::new().unwrap();
    let cmd = "for i in $(seq 3000); do echo \"$i \u{e9}\u{20ac}\u{1f600}\"; done";
    assert!(!s.output_within_limit());
    for unit in [Unit::Chars, Unit::Bytes] {
        for keep in [Keep::Head, Keep::HeadTail] {
            s.set_output_limit_within(600, unit, keep).unwrap();
            assert_eq!(s.output_limit(), (600, unit, keep));
            assert!(s.output_within_limit());
            let out = s.command(cmd).exec().unwrap();
            // valid UTF-8: no character split
            let text = String::from_utf8(out.stdout.clone()).unwrap();
            let size = if unit == Unit::Bytes { text.len() } else { text.chars().count() };
            assert!(size <= 600 && size > 590, "{:?} {:?}: {}: {}", unit, keep, size, text);
            assert!(text.contains("[output truncated: kept the first "), "{}", text);
            assert_eq!(out.total_lines.0, 3000);
        }
    }
    // per command, and the default: the notice on top of the limit
    s.set_output_limit(600, Unit::Chars, Keep::Head).unwrap();
    assert!(!s.output_within_limit());
    let out = s.command(cmd).output_limit_within(600, Unit::Bytes, Keep::Head).exec().unwrap();
    assert!(out.stdout.len() <= 600);
    assert!(s.command(cmd).exec().unwrap().stdout_str().chars().count() > 700);
}

#[test]
fn settings_read_back() {
    let mut s = Session::new().unwrap();
    s.set_timeouts(Duration::from_secs(3), Duration::from_secs(7)).unwrap();
    assert_eq!(s.timeouts(), (Duration::from_secs(3), Duration::from_secs(7)));
    let err = s.set_timeouts(Duration::from_secs(9), Duration::from_secs(7)).unwrap_err();
    assert_eq!(err.kind(), ErrorKind::InvalidArgument);
    s.set_kill_grace(Duration::from_millis(250)).unwrap();
    assert_eq!(s.kill_grace(), Duration::from_millis(250));
    assert_eq!(s.leftovers_drain(), Duration::from_millis(100));
    let err = s.set_leftovers_drain(Duration::from_millis(2001)).unwrap_err();
    assert_eq!(err.kind(), ErrorKind::InvalidArgument);
    s.set_leftovers_drain(Duration::from_secs(1)).unwrap();
    assert_eq!(s.leftovers_drain(), Duration::from_secs(1));
    // the late line of what the command left running is its own
    let out = s.command("{ sleep 0.05; echo late; } &").exec().unwrap();
    assert_eq!(out.stdout_str(), "late\n");
    assert!(matches!(out.leftovers, shexec::Leftovers::None));
    s.set_max_tasks(3).unwrap();
    assert_eq!(s.max_tasks(), 3);
    s.set_shell(&["/bin/sh"]).unwrap();
    assert_eq!(s.shell().unwrap(), vec!["/bin/sh"]);
    assert_eq!(s.command("echo $0").exec().unwrap().stdout_str(), "sh\n");
    s.reset_shell().unwrap();
    assert_eq!(s.shell(), None);
    assert!(s.env_inherit());
    s.set_env_inherit(false).unwrap();
    assert!(!s.env_inherit());
    let (_, detail) = s.containment();
    assert!(!detail.is_empty());
    // off: process groups, and the session says why
    let mut off = Session::new().unwrap();
    off.set_containment("off").unwrap();
    let (kind, why) = off.containment();
    assert_eq!(kind, shexec::Containment::ProcessGroup);
    assert!(!why.is_empty());
    assert_eq!(off.set_containment("elsewhere").unwrap_err().kind(), ErrorKind::InvalidArgument);
    assert_eq!(off.command("echo $((1+1))").exec().unwrap().stdout_str(), "2\n");
    assert!(shexec::version().starts_with(|c: char| c.is_ascii_digit()));
    assert_eq!(shexec::strerror(12345), "unknown error");
    assert_ne!(shexec::strerror(ErrorKind::NoTask.code()), "unknown error");
    assert_eq!(ErrorKind::from_code(-9), ErrorKind::NoTask);
    assert_eq!(ErrorKind::from_code(-99), ErrorKind::Other(-99));
}
