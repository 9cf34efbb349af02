#!/usr/bin/env bash
# Cross-builds the addon for the platform packages this machine can build,
# with cargo-zigbuild (zig as the C compiler and linker, from PyPI), and
# checks each artifact: its file format and architecture, that it exports
# napi_register_module_v1, and for musl that it needs musl's libc.so and no
# glibc symbol version. The gnu targets are built against glibc 2.28 (the
# `.2.28` suffix tells zig which glibc to link against), the floor of Node
# 24's own Linux builds, and scripts/check-glibc.sh checks every Linux
# artifact against it. Outputs go to target/cross/ale.<platform>.node.
#
#   scripts/cross-build.sh                          # every target below
#   scripts/cross-build.sh aarch64-unknown-linux-gnu
#
# Windows (MSVC) and running the Darwin and musl builds need their own
# runners: see .github/workflows/release.yml.
set -euo pipefail
cd "$(dirname "$0")/.."
log() { printf '[cross-build] %s\n' "$*" >&2; }

all=(x86_64-unknown-linux-gnu aarch64-unknown-linux-gnu x86_64-unknown-linux-musl aarch64-unknown-linux-musl aarch64-apple-darwin x86_64-apple-darwin)
targets=("$@")
[ ${#targets[@]} -gt 0 ] || targets=("${all[@]}")

if ! command -v cargo-zigbuild >/dev/null || ! python3 -m ziglang version >/dev/null 2>&1; then
  log "installing zig and cargo-zigbuild from PyPI"
  pip install --quiet ziglang==0.17.1 cargo-zigbuild==0.24.1
fi
rustup target add "${targets[@]}" >/dev/null 2>&1
rustup component add llvm-tools >/dev/null 2>&1
tools="$(rustc --print sysroot)/lib/rustlib/$(rustc -vV | sed -n 's/^host: //p')/bin"

platform() {
  case "$1" in
    aarch64-unknown-linux-gnu) echo linux-arm64-gnu ;;
    aarch64-unknown-linux-musl) echo linux-arm64-musl ;;
    x86_64-unknown-linux-musl) echo linux-x64-musl ;;
    x86_64-unknown-linux-gnu) echo linux-x64-gnu ;;
    aarch64-apple-darwin) echo darwin-arm64 ;;
    x86_64-apple-darwin) echo darwin-x64 ;;
    *) log "no platform package for $1"; exit 2 ;;
  esac
}

fail() { log "$1: $2"; exit 1; }

check() {
  local target=$1 file=$2 format arch kind
  local headers
  headers=$("$tools/llvm-readobj" --file-headers "$file" 2>/dev/null || true)
  format=$(sed -n 's/^Format: //p' <<<"$headers")
  arch=$(sed -n 's/^Arch: //p' <<<"$headers")
  kind=$(grep -oE '(Type: SharedObject|FileType: DynamicLibrary)' <<<"$headers" | head -n 1)
  case "$target" in
    *-linux-*) [[ $format == elf64-* ]] && [ "$kind" = "Type: SharedObject" ] || fail "$target" "not an ELF shared object: $format $kind" ;;
    *-apple-*) [[ $format == Mach-O* ]] && [ "$kind" = "FileType: DynamicLibrary" ] || fail "$target" "not a Mach-O dylib: $format $kind" ;;
  esac
  [ "$arch" = "${target%%-*}" ] || fail "$target" "architecture $arch"
  # ELF: the dynamic symbol table (the static one is stripped); Mach-O: the
  # external symbols, with the leading underscore.
  local symbols=(--extern-only)
  [[ $target == *-linux-* ]] && symbols=(--dynamic)
  local exported
  exported=$("$tools/llvm-nm" "${symbols[@]}" --defined-only "$file")
  grep -qE ' T _?napi_register_module_v1$' <<<"$exported" || fail "$target" "napi_register_module_v1 is not exported"
  if [[ $target == *-musl ]]; then
    # A shared library has no interpreter of its own: it runs under the
    # loader of the Node or Bun that loads it. What ties it to musl is its
    # needed libc (musl's is libc.so, glibc's libc.so.6) and the absence of
    # glibc symbol versions.
    local needed
    needed=$("$tools/llvm-objdump" -p "$file" | awk '/NEEDED/ {print $2}' | tr '\n' ' ')
    [ "$needed" = "libc.so " ] || fail "$target" "needs $needed(musl's libc.so only expected)"
    local versions
    versions=$("$tools/llvm-objdump" -T "$file")
    ! grep -q 'GLIBC_' <<<"$versions" || fail "$target" "has glibc symbol versions"
  fi
  log "$target: $format ($arch, ${kind#*: }), exports napi_register_module_v1${needed:+, needs ${needed% }, no glibc versions}"
}

glibc=2.28 # the oldest glibc the gnu binaries load on
# Apart from the native build's target/x86_64-unknown-linux-gnu: zig as the
# compiler changes the build scripts' inputs, so sharing it would make each
# build redo the other's AWS-LC.
export CARGO_TARGET_DIR=target/zig
mkdir -p target/cross
for target in "${targets[@]}"; do
  log "building $target"
  started=$SECONDS
  if [[ $target == *-musl ]]; then
    # A cdylib cannot link musl statically.
    RUSTFLAGS="-C target-feature=-crt-static" cargo zigbuild --quiet --release --target "$target" --lib
  elif [[ $target == *-linux-gnu ]]; then
    # cargo-zigbuild passes the suffix to zig only; Cargo builds (and puts the
    # output under) the plain target.
    cargo zigbuild --quiet --release --target "$target.$glibc" --lib
  else
    cargo zigbuild --quiet --release --target "$target" --lib
  fi
  lib=$CARGO_TARGET_DIR/$target/release/libsveltycms_ale.so
  [[ $target == *-apple-* ]] && lib=$CARGO_TARGET_DIR/$target/release/libsveltycms_ale.dylib
  out=target/cross/ale.$(platform "$target").node
  cp "$lib" "$out"
  check "$target" "$out"
  if [[ $target == *-linux-* ]]; then
    OBJDUMP="$tools/llvm-objdump" scripts/check-glibc.sh "$out" 2>&1 | sed 's/^/[cross-build] /' >&2
  fi
  log "$target built in $((SECONDS - started)) s: $out"
done
