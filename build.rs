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
/// Only where the link goes through a linker that reads such a list
/// (lld's `--symbol-ordering-file`), which is tried on a tiny library
/// first: Rust's own lld does on x86_64 Linux (glibc) since Rust 1.90, a
/// distribution's rustc linking through GNU ld does not. A build that names
/// its own linker (cargo-zigbuild does, for the released binaries) is laid
/// out as before, as is any with `ALE_HOT_ORDER=0`.
fn hot_code_together() {
    println!("cargo:rerun-if-changed=link/hot-symbols.txt");
    println!("cargo:rerun-if-env-changed=ALE_HOT_ORDER");
    println!("cargo:rerun-if-env-changed=ALE_LINK_MAP");
    println!("cargo:rerun-if-env-changed=CARGO_TARGET_X86_64_UNKNOWN_LINUX_GNU_LINKER");
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
        || !linker_takes_an_order()
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

/// Whether rustc's default linker for this target takes a symbol order:
/// links an empty library with the two options, in OUT_DIR.
fn linker_takes_an_order() -> bool {
    let (Ok(out), Ok(target)) = (env::var("OUT_DIR"), env::var("TARGET")) else {
        return false;
    };
    let dir = Path::new(&out);
    let source = dir.join("order_probe.rs");
    let order = dir.join("order_probe.txt");
    if std::fs::write(&source, "").is_err() || std::fs::write(&order, "order_probe\n").is_err() {
        return false;
    }
    let rustc = env::var("RUSTC").unwrap_or_else(|_| "rustc".into());
    Command::new(rustc)
        .args([
            "--crate-type",
            "cdylib",
            "--crate-name",
            "order_probe",
            "--target",
            &target,
            "--out-dir",
        ])
        .arg(dir)
        .arg(format!(
            "-Clink-arg=-Wl,--symbol-ordering-file={}",
            order.display()
        ))
        .args(["-Clink-arg=-Wl,--no-warn-symbol-ordering"])
        .arg(&source)
        .output()
        .is_ok_and(|done| done.status.success())
}
