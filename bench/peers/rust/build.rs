//! The binding's library directory as this binary's rpath (cargo hands a
//! dependency's link arguments to no one, only its `links` metadata), and
//! the compiler's version for `version`.
use std::env;
use std::process::Command;

fn main() {
    println!("cargo:rerun-if-changed=build.rs");
    if let Some(dir) = env::var_os("DEP_SHEXEC_LIB_DIR") {
        println!("cargo:rustc-link-arg=-Wl,-rpath,{}", dir.to_string_lossy());
    }
    let rustc = env::var_os("RUSTC").unwrap_or_else(|| "rustc".into());
    if let Ok(out) = Command::new(rustc).arg("--version").output() {
        // "rustc 1.63.0 (4b91a6ea7 2022-08-08)" -> "1.63.0"
        let text = String::from_utf8_lossy(&out.stdout);
        if let Some(version) = text.split_whitespace().nth(1) {
            println!("cargo:rustc-env=PEER_RUSTC_VERSION={}", version);
        }
    }
}
