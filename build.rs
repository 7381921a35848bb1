//! Link settings of release builds on Linux, for the memory of the running process and the
//! size of the binary (benches/scripts/bench-lean.py measures both):
//!
//! - **Start-up code first.** `link/startup-order.txt` lists the functions a start and a
//!   first answer run, in the order they run (`scripts/order-startup.py` writes it); the
//!   linker places them side by side at the front of the code. The kernel maps code a
//!   page-cache folio at a time, so code spread over the whole binary would make most of it
//!   resident. Only with a linker known to take `--symbol-ordering-file` (rustc's own lld, the
//!   default for x86_64 Linux since Rust 1.90); names the build no longer has are skipped.
//! - **Packed relative relocations** (`DT_RELR`, where the C library applies them: glibc
//!   2.36 and later). A position-independent binary has one relocation per pointer in its
//!   data, 55,000 here; as plain `RELA` entries they are 1.3 MB that the loader reads at
//!   every start, as `RELR` 15 KB: start-up and the resident pages both shrink.
//! - **No symbol table** in the installed binary (a third of its size): a panic still names
//!   its file and line. `MYPI_KEEP_SYMBOLS=1` keeps it (for profilers and
//!   `scripts/order-startup.py`); it is a link argument rather than the profile's `strip`,
//!   which would change every symbol's name and so the list above.

use std::env;
use std::path::Path;
use std::process::Command;

fn main() {
    println!("cargo:rerun-if-changed=build.rs");
    println!("cargo:rerun-if-changed=link/startup-order.txt");
    println!("cargo:rerun-if-env-changed=MYPI_KEEP_SYMBOLS");
    println!("cargo:rerun-if-env-changed=RUSTC_LINKER");
    let var = |k: &str| env::var(k).unwrap_or_default();
    if var("PROFILE") != "release" || var("CARGO_CFG_TARGET_OS") != "linux" {
        return;
    }
    if var("MYPI_KEEP_SYMBOLS") != "1" {
        println!("cargo:rustc-link-arg-bins=-Wl,--strip-all");
    }
    let order = Path::new(&var("CARGO_MANIFEST_DIR")).join("link/startup-order.txt");
    if order.is_file() && rust_lld_links(&var) {
        println!(
            "cargo:rustc-link-arg-bins=-Wl,--symbol-ordering-file={}",
            order.display()
        );
        println!("cargo:rustc-link-arg-bins=-Wl,--no-warn-symbol-ordering");
    }
    if rust_lld_links(&var) && glibc_has_relr() {
        println!("cargo:rustc-link-arg-bins=-Wl,-z,pack-relative-relocs");
    }
}

/// Whether rustc's own lld links this build: x86_64 Linux (GNU), Rust 1.90 or later, and
/// no linker chosen in the configuration or the flags.
fn rust_lld_links(var: &dyn Fn(&str) -> String) -> bool {
    if var("TARGET") != "x86_64-unknown-linux-gnu" || !var("RUSTC_LINKER").is_empty() {
        return false;
    }
    let flags = var("CARGO_ENCODED_RUSTFLAGS");
    if ["linker", "fuse-ld", "link-self-contained"]
        .iter()
        .any(|f| flags.contains(f))
    {
        return false;
    }
    let rustc = env::var("RUSTC").unwrap_or_else(|_| "rustc".into());
    let Ok(out) = Command::new(rustc).arg("-V").output() else {
        return false;
    };
    let version = String::from_utf8_lossy(&out.stdout);
    let minor = version
        .split_whitespace()
        .nth(1)
        .and_then(|v| v.split('.').nth(1))
        .and_then(|m| m.parse::<u32>().ok());
    minor.is_some_and(|m| m >= 90)
}

/// Whether this machine's C library applies packed relative relocations (`DT_RELR`, glibc
/// 2.36 and later); the binary is built for the machine that builds it.
fn glibc_has_relr() -> bool {
    let Ok(out) = Command::new("getconf").arg("GNU_LIBC_VERSION").output() else {
        return false;
    };
    let text = String::from_utf8_lossy(&out.stdout);
    let mut parts = text
        .split_whitespace()
        .nth(1)
        .unwrap_or_default()
        .split('.')
        .map(|p| p.parse::<u32>().unwrap_or(0));
    let (major, minor) = (parts.next().unwrap_or(0), parts.next().unwrap_or(0));
    (major, minor) >= (2, 36)
}
