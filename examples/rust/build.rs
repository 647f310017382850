//! Finds libshexec and links it dynamically, with an rpath so that tests and
//! binaries run without LD_LIBRARY_PATH.
//!
//! Where the library is looked for, first match wins:
//!   1. SHEXEC_LIB_DIR: a directory holding libshexec.so (explicit beats
//!      anything discovered, so a test can pin the library of its tree);
//!   2. `pkg-config --libs shexec`, when pkg-config knows the package (an
//!      installed library, `make install`);
//!   3. the in-tree build directory, ../../build next to this crate (a
//!      checkout of the project, after `make`).
//!
//! Cargo does not pass link arguments on to dependents, so the directory is
//! also published as `lib_dir` metadata: a dependent's build script reads it
//! as DEP_SHEXEC_LIB_DIR and can emit the same rpath for its own binaries.
use std::env;
use std::path::{Path, PathBuf};
use std::process::Command;

fn main() {
    println!("cargo:rerun-if-changed=build.rs");
    println!("cargo:rerun-if-env-changed=SHEXEC_LIB_DIR");
    println!("cargo:rerun-if-env-changed=PKG_CONFIG_PATH");
    println!("cargo:rerun-if-env-changed=PKG_CONFIG");

    let dirs = match env::var_os("SHEXEC_LIB_DIR").filter(|d| !d.is_empty()) {
        Some(dir) => vec![PathBuf::from(dir)],
        None => pkg_config_dirs().unwrap_or_else(in_tree_dir),
    };
    for dir in &dirs {
        if !dir.join("libshexec.so").exists() {
            println!(
                "cargo:warning=no libshexec.so in {} (build the library with `make`, \
                 or set SHEXEC_LIB_DIR)",
                dir.display()
            );
        }
        println!("cargo:rustc-link-search=native={}", dir.display());
        println!("cargo:rustc-link-arg=-Wl,-rpath,{}", dir.display());
    }
    if let Some(dir) = dirs.first() {
        println!("cargo:lib_dir={}", dir.display());
    }
    println!("cargo:rustc-link-lib=dylib=shexec");
}

/// The -L directories pkg-config gives for shexec, or None when pkg-config is
/// missing or does not know the package. An empty list is a library in the
/// linker's default path: nothing to add.
fn pkg_config_dirs() -> Option<Vec<PathBuf>> {
    let program = env::var_os("PKG_CONFIG").unwrap_or_else(|| "pkg-config".into());
    let out = Command::new(program).args(["--libs", "shexec"]).output().ok()?;
    if !out.status.success() {
        return None;
    }
    let text = String::from_utf8_lossy(&out.stdout);
    Some(
        text.split_whitespace()
            .filter_map(|arg| arg.strip_prefix("-L"))
            .filter(|dir| !dir.is_empty())
            .map(PathBuf::from)
            .collect(),
    )
}

fn in_tree_dir() -> Vec<PathBuf> {
    let manifest = env::var_os("CARGO_MANIFEST_DIR").expect("cargo sets CARGO_MANIFEST_DIR");
    let dir = Path::new(&manifest).join("../../build");
    // absolute and without "..": the rpath must hold wherever the binary runs from
    vec![dir.canonicalize().unwrap_or(dir)]
}
