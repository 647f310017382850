//! The Rust contender of the libshexec benchmark: bench/main.c runs it as
//! build/bench/peer-rust (`make bench-peers` builds it) and parses the one
//! line "RESULT key=value ..." it prints. Any failed run exits non-zero, so
//! the driver stops.
//!
//!     peer-rust version
//!     peer-rust spawn std|shexec SHELL N HOST_MIB [BUDGET_S]
//!         sequential runs of `true`: `std` as a Rust agent host runs a
//!         command without the library (std::process::Command, its own
//!         process group, pipes read to the end, a 120 s timeout, as Codex
//!         CLI does), `shexec` through the binding, one session throughout
//!
//! The loop mirrors bench/peers/peer.py (t_spawn): HOST_MIB MiB held and
//! touched first (a big host: fork copies its page tables), 10 warm-up runs,
//! then N runs; a budget in seconds ends each phase early so that a slow
//! spawner still gives a rate.
use std::io;
use std::os::unix::process::CommandExt;
use std::process::{self, Command, Stdio};
use std::sync::mpsc;
use std::thread;
use std::time::{Duration, Instant};

use shexec::Session;

const TIMEOUT: Duration = Duration::from_secs(120);
const SIGKILL: i32 = 9;

extern "C" {
    // POSIX, from the C library std links anyway; pid_t is int on Linux
    fn setpgid(pid: i32, pgid: i32) -> i32;
    fn kill(pid: i32, sig: i32) -> i32;
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let args: Vec<&str> = args.iter().map(|a| a.as_str()).collect();
    let outcome = match args.as_slice() {
        ["version"] => {
            let version = option_env!("PEER_RUSTC_VERSION").unwrap_or(env!("CARGO_PKG_VERSION"));
            println!("RESULT version={}", version);
            Ok(())
        }
        ["spawn", mode, shell, n, mib] => spawn(mode, shell, n, mib, "0"),
        ["spawn", mode, shell, n, mib, budget] => spawn(mode, shell, n, mib, budget),
        _ => {
            eprintln!("usage: peer-rust version | spawn std|shexec SHELL N HOST_MIB [BUDGET_S]");
            process::exit(2);
        }
    };
    if let Err(e) = outcome {
        eprintln!("peer-rust: {}", e);
        process::exit(1);
    }
}

fn number<T: std::str::FromStr>(text: &str, what: &str) -> Result<T, String> {
    text.parse().map_err(|_| format!("bad {}: {:?}", what, text))
}

fn spawn(mode: &str, shell: &str, n: &str, mib: &str, budget: &str) -> Result<(), String> {
    let n: u64 = number(n, "N")?;
    let mib: usize = number(mib, "HOST_MIB")?;
    let budget: f64 = number(budget, "BUDGET_S")?;
    let mut one: Box<dyn FnMut() -> Result<(), String>> = match mode {
        "std" => {
            let shell = shell.to_string();
            Box::new(move || run_std(&shell))
        }
        "shexec" => {
            // one session, as a host keeps one per agent; on process
            // groups like the bench's own sessions (row 1c prices cgroups)
            let mut session = Session::new().map_err(|e| e.to_string())?;
            session.set_shell(&[shell]).map_err(|e| e.to_string())?;
            session.set_containment("off").map_err(|e| e.to_string())?;
            Box::new(move || run_shexec(&session))
        }
        other => return Err(format!("unknown spawn mode {}", other)),
    };
    let ballast = hold_memory(mib);

    let t0 = Instant::now();
    for _ in 0..10 {
        one()?;
        if budget > 0.0 && t0.elapsed().as_secs_f64() > budget / 4.0 {
            break;
        }
    }
    let t0 = Instant::now();
    let mut done = 0u64;
    while done < n {
        one()?;
        done += 1;
        if budget > 0.0 && done >= 3 && t0.elapsed().as_secs_f64() > budget {
            break;
        }
    }
    let dt = t0.elapsed().as_secs_f64();
    drop(ballast);
    println!("RESULT runs_per_s={:.3} runs={}", done as f64 / dt, done);
    Ok(())
}

/// `SHELL -c true` the way a Rust agent host runs a command without the
/// library (Codex CLI's shell tool): its own process group (so a timeout can
/// kill the tree), stdin from /dev/null, stdout and stderr piped and read to
/// the end, the exit awaited with a timeout, after which the group is killed.
///
/// std has no wait with a timeout, and Codex awaits the child under
/// tokio::time::timeout; the std equivalent used here is a waiting thread:
/// it runs wait_with_output() (both pipes read with poll(), then the child
/// reaped) and sends the result, which this thread receives with
/// recv_timeout(120 s). A try_wait() poll loop would add its sleep to every
/// run instead.
///
/// The process group is set in pre_exec (setpgid(0, 0)), as Codex does:
/// Command::process_group() is newer than this crate's Rust. A pre_exec hook
/// also makes std fork and exec rather than posix_spawn, as Codex's does.
fn run_std(shell: &str) -> Result<(), String> {
    let mut cmd = Command::new(shell);
    cmd.arg("-c").arg("true").stdin(Stdio::null()).stdout(Stdio::piped()).stderr(Stdio::piped());
    // SAFETY: between fork and exec the hook calls setpgid() alone, which is
    // async-signal-safe, and allocates nothing
    unsafe {
        cmd.pre_exec(|| {
            if setpgid(0, 0) == 0 {
                Ok(())
            } else {
                Err(io::Error::last_os_error())
            }
        });
    }
    let child = cmd.spawn().map_err(|e| format!("spawn {}: {}", shell, e))?;
    let pid = child.id() as i32;
    let (tx, rx) = mpsc::channel();
    let waiter = thread::spawn(move || {
        let _ = tx.send(child.wait_with_output());
    });
    let outcome = match rx.recv_timeout(TIMEOUT) {
        Ok(Ok(out)) if out.status.success() => Ok(()),
        Ok(Ok(out)) => Err(format!("`true` ended {}", out.status)),
        Ok(Err(e)) => Err(format!("wait: {}", e)),
        Err(_) => {
            // SAFETY: plain syscall; the group is the child's own, and the
            // child is not reaped yet (the waiter still waits), so its id
            // cannot have been reused
            unsafe { kill(-pid, SIGKILL) };
            Err(format!("`true` timed out after {:?}", TIMEOUT))
        }
    };
    waiter.join().map_err(|_| "the waiting thread panicked".to_string())?;
    outcome
}

fn run_shexec(session: &Session) -> Result<(), String> {
    let out = session.command("true").timeout(TIMEOUT).exec().map_err(|e| e.to_string())?;
    if out.exit_code != Some(0) {
        return Err(format!("`true` ended {:?} {:?}", out.state, out.exit_code));
    }
    Ok(())
}

/// HOST_MIB MiB, every page written: resident, as a heap in use.
fn hold_memory(mib: usize) -> Vec<u8> {
    let mut ballast = vec![0u8; mib << 20];
    for i in (0..ballast.len()).step_by(4096) {
        // volatile: a write never read could be dropped, and the page with it
        // SAFETY: i is in bounds; a plain byte store
        unsafe { std::ptr::write_volatile(ballast.as_mut_ptr().add(i), 1) };
    }
    ballast
}
