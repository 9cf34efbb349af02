//! Freed memory holds no plaintext: a buffer reused across calls that has
//! to grow must wipe its old allocation. A global allocator watches every
//! freed block for a marker that only the plaintext contains.

use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

use ale_core::keys::RingOptions;
use ale_core::{Context, KeyRing};

const MARKER: &[u8] = b"PLAINTEXT-MARKER-7c1e";
/// A marker that search normalization leaves as it is (lower case, NFKC).
const NORMAL_MARKER: &str = "münchen-marker-5d2a";
/// Another, of Hangul syllables, which normalization also leaves as they
/// are but does not fold a character at a time: a run of them goes through
/// the passes in a scratch buffer of its own (search/normalize.rs).
const SEGMENT_MARKER: &str = "표지마커시험";

struct Watch;
static WATCHING: AtomicBool = AtomicBool::new(false);
static FREED_WITH_MARKER: AtomicUsize = AtomicUsize::new(0);
/// One test at a time: the watch is process-wide, and a test's own set-up
/// frees marker-holding blocks that another test's watch would count.
static ONE_AT_A_TIME: std::sync::Mutex<()> = std::sync::Mutex::new(());

/// Counting starts from zero for each test.
fn watch() -> std::sync::MutexGuard<'static, ()> {
    let turn = ONE_AT_A_TIME
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner());
    FREED_WITH_MARKER.store(0, Ordering::Relaxed);
    turn
}

// SAFETY: forwards to the system allocator; on dealloc it only reads the
// block it is about to free, which is still valid then.
unsafe impl GlobalAlloc for Watch {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        // SAFETY: forwarded.
        unsafe { System.alloc(layout) }
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        if WATCHING.load(Ordering::Relaxed) {
            // SAFETY: `ptr` is valid for `layout.size()` bytes until freed below.
            let block = unsafe { std::slice::from_raw_parts(ptr, layout.size()) };
            let holds = |marker: &[u8]| block.windows(marker.len()).any(|w| w == marker);
            if holds(MARKER) || holds(NORMAL_MARKER.as_bytes()) || holds(SEGMENT_MARKER.as_bytes())
            {
                FREED_WITH_MARKER.fetch_add(1, Ordering::Relaxed);
            }
        }
        // SAFETY: forwarded.
        unsafe { System.dealloc(ptr, layout) }
    }
}

#[global_allocator]
static GLOBAL: Watch = Watch;

#[test]
fn a_growing_decrypt_buffer_leaves_no_plaintext_in_freed_memory() {
    let _turn = watch();
    let ring = KeyRing::from_secrets(
        &["wiping-test-secret-0123456789-abcdef"],
        RingOptions::default(),
    )
    .expect("ring");
    let ctx = Context::new("t", "c", "f").expect("ctx");
    let small = std::str::from_utf8(MARKER).expect("ascii").to_owned();
    let large = "x".repeat(100_000);
    let env_small = ring.encrypt(&small, &ctx).expect("encrypt");
    let env_large = ring.encrypt(&large, &ctx).expect("encrypt");
    let (mut aad, mut out) = (Vec::new(), Vec::new());
    WATCHING.store(true, Ordering::Relaxed);
    // `out` holds the marker's plaintext, then must grow for the large value.
    ring.open_into(env_small.as_bytes(), &ctx, &mut aad, &mut out)
        .expect("open");
    assert_eq!(out, MARKER);
    ring.open_into(env_large.as_bytes(), &ctx, &mut aad, &mut out)
        .expect("open");
    // And an envelope written into a small buffer that held plaintext, which
    // must grow for it; then the plaintext buffer itself is freed (sealing in
    // place turned it into ciphertext).
    let mut small_out = Vec::with_capacity(MARKER.len());
    small_out.extend_from_slice(MARKER);
    small_out.clear();
    let mut buf = MARKER.to_vec();
    ring.seal_into(&mut buf, &ctx, &mut aad, &mut small_out)
        .expect("seal");
    drop(buf);
    drop(small_out);
    WATCHING.store(false, Ordering::Relaxed);
    assert_eq!(
        FREED_WITH_MARKER.load(Ordering::Relaxed),
        0,
        "plaintext left in freed memory"
    );
}

#[test]
fn normalizing_search_text_leaves_no_plaintext_in_freed_memory() {
    let _turn = watch();
    use ale_core::search::normalize::{normalize_into, Folding};
    // U+FDFA is 18 characters under NFKC, so the output outgrows the input
    // and its buffer grows; the Hangul marker before the second İ goes
    // through the passes in the scratch buffer; that İ starts a segment,
    // which the marker after it joins, and folds to i and a combining dot,
    // which sends the segment's folded text through a second NFKC pass,
    // from a copy (the first İ, alone before a space, takes its form from
    // a table).
    let text = format!("İ \u{FDFA} {NORMAL_MARKER} {SEGMENT_MARKER}İ{SEGMENT_MARKER} ").repeat(50);
    // a buffer reused from a previous value, too small for this one
    let mut out = NORMAL_MARKER.to_owned();
    WATCHING.store(true, Ordering::Relaxed);
    normalize_into(&text, Folding::default(), &mut out);
    assert!(out.contains(NORMAL_MARKER) && out.contains(SEGMENT_MARKER));
    // what the caller does with its buffer and the value (src/api/search.rs)
    zeroize::Zeroize::zeroize(&mut out);
    WATCHING.store(false, Ordering::Relaxed);
    drop(text);
    assert_eq!(
        FREED_WITH_MARKER.load(Ordering::Relaxed),
        0,
        "plaintext left in freed memory"
    );
}

#[test]
fn token_text_written_after_a_decrypt_leaves_no_plaintext_in_freed_memory() {
    let _turn = watch();
    use ale_core::search::words::{words_len, write_words};
    // the thread's result buffer after a decrypt: the plaintext, then cleared
    let mut out = MARKER.to_vec();
    out.clear();
    let tokens: Vec<u64> = (0..1000u64)
        .map(|i| i.wrapping_mul(0x9E37_79B9_7F4A_7C15))
        .collect();
    WATCHING.store(true, Ordering::Relaxed);
    // far more than its room: the buffer must grow
    write_words(&tokens, &mut out);
    WATCHING.store(false, Ordering::Relaxed);
    assert_eq!(out.len(), words_len(tokens.len()));
    assert_eq!(
        FREED_WITH_MARKER.load(Ordering::Relaxed),
        0,
        "plaintext left in freed memory"
    );
}
