//! The README's example (examples/hello.rs), step by step with the values it
//! prints, and the example program itself when cargo built it.
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

use shexec::{Session, Stream};

#[test]
fn hello_steps() {
    let session = Session::new().unwrap();
    let out = session
        .command("echo hello; cd /tmp; exit 3")
        .timeout(Duration::from_secs(10))
        .exec()
        .unwrap();
    assert_eq!(out.stdout_str(), "hello\n");
    assert_eq!(out.exit_code, Some(3));
    assert_eq!(session.cwd(), Path::new("/tmp"));
    let task = session.command("sleep 0.2; echo done").start_task().unwrap();
    assert!(task.wait(None).unwrap());
    assert_eq!(task.read(Stream::Stdout), b"done\n");
}

/// target/debug/examples/hello, beside this test's target/debug/deps/.
fn example_binary() -> Option<PathBuf> {
    let exe = std::env::current_exe().ok()?;
    let path = exe.parent()?.parent()?.join("examples").join("hello");
    if path.exists() {
        Some(path)
    } else {
        None
    }
}

#[test]
fn hello_example_prints_what_the_readme_says() {
    // `cargo test` builds the examples before it runs any test; a narrower
    // invocation (`cargo test --test hello`) may not have: nothing to run
    let path = match example_binary() {
        Some(p) => p,
        None => {
            eprintln!("examples/hello not built: skipped");
            return;
        }
    };
    let out = Command::new(path).output().unwrap();
    assert!(out.status.success(), "{:?}", out);
    assert_eq!(String::from_utf8_lossy(&out.stdout), "hello\nSome(3) /tmp\ndone\n");
}
