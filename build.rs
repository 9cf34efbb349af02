use std::env;
use std::path::Path;
use std::process::Command;

fn main() {
    napi_build::setup();
    hot_code_together();
}

/// Lays out the functions one hot call runs (ours, AWS-LC's and simdutf's)
/// next to each other, in the order of `link/hot-symbols.txt`, so that a
/// cold call touches a few pages of code instead of one page per function:
/// inside a database write the caches are cold between two calls, and a
/// call then costs what it touches (docs/performance.md, "The cold
/// footprint"). `node scripts/hot-symbols.mjs` writes the list.
///
/// Only where the link is known to go through lld, which reads such a list
/// (`--symbol-ordering-file`): Rust's own linker on x86_64 Linux (glibc)
/// since Rust 1.90, with no linker chosen by the build. GNU ld and zig
/// refuse the option, so a build that names its own linker (cargo-zigbuild
/// does, for the released binaries) is laid out as before.
/// `ALE_HOT_ORDER=0` turns it off.
fn hot_code_together() {
    println!("cargo:rerun-if-changed=link/hot-symbols.txt");
    println!("cargo:rerun-if-env-changed=ALE_HOT_ORDER");
    println!("cargo:rerun-if-env-changed=ALE_LINK_MAP");
    if env::var("ALE_HOT_ORDER").is_ok_and(|v| v == "0") {
        return;
    }
    let list =
        Path::new(&env::var("CARGO_MANIFEST_DIR").unwrap_or_default()).join("link/hot-symbols.txt");
    let linker_chosen = env::var_os("RUSTC_LINKER").is_some()
        || env::var("CARGO_ENCODED_RUSTFLAGS").is_ok_and(|flags| flags.contains("link"));
    if env::var("TARGET").as_deref() != Ok("x86_64-unknown-linux-gnu")
        || linker_chosen
        || !list.is_file()
        || !rustc_links_with_lld()
    {
        return;
    }
    println!(
        "cargo:rustc-cdylib-link-arg=-Wl,--symbol-ordering-file={}",
        list.display()
    );
    // Names the list has and this build lacks (another version of a
    // dependency) are left out, not errors.
    println!("cargo:rustc-cdylib-link-arg=-Wl,--no-warn-symbol-ordering");
    // scripts/hot-symbols.mjs names the functions of this very build by
    // the linker's map: the build it profiles must be this one, whose
    // symbol names carry hashes of how it was built.
    if let Ok(map) = env::var("ALE_LINK_MAP") {
        println!("cargo:rustc-cdylib-link-arg=-Wl,-Map={map}");
        println!("cargo:rustc-cdylib-link-arg=-Wl,--no-demangle"); // the names the list needs
    }
}

/// Whether the compiler links with its own lld by default on this target:
/// Rust 1.90 and later.
fn rustc_links_with_lld() -> bool {
    let rustc = env::var("RUSTC").unwrap_or_else(|_| "rustc".into());
    let Ok(out) = Command::new(rustc).arg("--version").output() else {
        return false;
    };
    // "rustc 1.95.0 (59807616e 2026-04-14)"
    let text = String::from_utf8_lossy(&out.stdout);
    let mut numbers = text
        .split_whitespace()
        .nth(1)
        .unwrap_or("")
        .split('.')
        .map(|n| n.parse::<u32>().unwrap_or(0));
    let (major, minor) = (numbers.next().unwrap_or(0), numbers.next().unwrap_or(0));
    (major, minor) >= (1, 90)
}
