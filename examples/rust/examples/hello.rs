use shexec::{Session, Stream};
use std::time::Duration;

fn main() -> Result<(), shexec::Error> {
    let session = Session::new()?;
    let out = session.command("echo hello; cd /tmp; exit 3").timeout(Duration::from_secs(10)).exec()?;
    print!("{}", out.stdout_str()); // hello
    println!("{:?} {}", out.exit_code, session.cwd().display()); // Some(3) /tmp
    let task = session.command("sleep 0.2; echo done").start_task()?;
    task.wait(None)?;
    print!("{}", String::from_utf8_lossy(&task.read(Stream::Stdout))); // done
    Ok(())
}
