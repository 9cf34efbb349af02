//! IVs: 96 random bits for every encryption, without a syscall per call.
//!
//! Each thread keeps a pool of bytes drawn from the OS CSPRNG (`getrandom(2)`)
//! and hands out 12 of them per IV, refilling when the pool runs dry.
//!
//! Uniqueness, which AES-GCM requires, rests on three facts:
//! - every byte comes from the OS generator and is handed out once, then the
//!   cursor moves past it;
//! - pools are per thread (`thread_local!`), so worker threads never share one;
//! - a `fork()` child must not replay the pool it inherited from its parent. A
//!   `pthread_atfork` child handler bumps a process-wide generation counter,
//!   and a pool filled under an older generation is thrown away before use.

use std::cell::RefCell;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Once;

use crate::error::{AleError, Result};

/// Length of an IV in bytes (96 bits).
pub const IV_LEN: usize = 12;

/// IVs per refill: 341 × 12 = 4092 bytes, one `getrandom` call.
const POOL_IVS: usize = 341;
const POOL_LEN: usize = POOL_IVS * IV_LEN;

static FORK_GENERATION: AtomicU64 = AtomicU64::new(0);
static REGISTER_ATFORK: Once = Once::new();

extern "C" fn after_fork_in_child() {
    // Async-signal-safe: a single atomic add.
    FORK_GENERATION.fetch_add(1, Ordering::SeqCst);
}

fn register_fork_handler() {
    REGISTER_ATFORK.call_once(|| {
        // SAFETY: `after_fork_in_child` is an `extern "C" fn()` with static
        // lifetime that only touches an atomic, so it is safe to call in the
        // child between fork() and exec().
        let rc = unsafe { libc::pthread_atfork(None, None, Some(after_fork_in_child)) };
        // pthread_atfork only fails with ENOMEM; without the handler a fork
        // could repeat IVs, so fall back to refilling on every call.
        if rc != 0 {
            FORK_HANDLER_MISSING.store(true, Ordering::SeqCst);
        }
    });
}

static FORK_HANDLER_MISSING: std::sync::atomic::AtomicBool =
    std::sync::atomic::AtomicBool::new(false);

struct Pool {
    bytes: [u8; POOL_LEN],
    /// Next unused byte; `POOL_LEN` means empty.
    cursor: usize,
    generation: u64,
}

thread_local! {
    static POOL: RefCell<Pool> = const {
        RefCell::new(Pool { bytes: [0; POOL_LEN], cursor: POOL_LEN, generation: 0 })
    };
}

/// Returns a fresh random IV. Never returns the same bytes twice within a
/// process, nor bytes that a parent or child process also returns.
pub fn next_iv() -> Result<[u8; IV_LEN]> {
    register_fork_handler();
    POOL.with(|cell| {
        let mut pool = cell.borrow_mut();
        // The child handler runs in the only thread of the new process before
        // any code of ours, so an Acquire load sees its increment.
        let generation = FORK_GENERATION.load(Ordering::Acquire);
        let stale = pool.generation != generation || FORK_HANDLER_MISSING.load(Ordering::Relaxed);
        if stale || pool.cursor + IV_LEN > POOL_LEN {
            let fill_len = if FORK_HANDLER_MISSING.load(Ordering::Relaxed) {
                IV_LEN
            } else {
                POOL_LEN
            };
            getrandom::fill(&mut pool.bytes[..fill_len]).map_err(|_| AleError::RngUnavailable)?;
            pool.cursor = 0;
            pool.generation = generation;
        }
        let start = pool.cursor;
        let mut iv = [0u8; IV_LEN];
        iv.copy_from_slice(&pool.bytes[start..start + IV_LEN]);
        // Burn what was handed out so no later state can repeat it.
        pool.bytes[start..start + IV_LEN].fill(0);
        pool.cursor = start + IV_LEN;
        Ok(iv)
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashSet;

    #[test]
    fn ivs_are_unique_across_many_refills() {
        let mut seen = HashSet::new();
        for _ in 0..(POOL_IVS * 20) {
            assert!(seen.insert(next_iv().expect("rng")), "repeated IV");
        }
    }

    #[test]
    fn ivs_are_unique_across_threads() {
        let handles: Vec<_> = (0..4)
            .map(|_| {
                std::thread::spawn(|| {
                    (0..POOL_IVS * 3)
                        .map(|_| next_iv().expect("rng"))
                        .collect::<Vec<_>>()
                })
            })
            .collect();
        let mut seen = HashSet::new();
        for h in handles {
            for iv in h.join().expect("thread") {
                assert!(seen.insert(iv), "IV repeated across threads");
            }
        }
    }

    /// A forked child must not hand out what its parent hands out next.
    #[test]
    fn fork_child_does_not_replay_parent_pool() {
        // Prime the pool so the child inherits a partly used one.
        let _ = next_iv().expect("rng");
        let mut fds = [0i32; 2];
        // SAFETY: `fds` is a valid array of two c_ints for pipe(2).
        assert_eq!(unsafe { libc::pipe(fds.as_mut_ptr()) }, 0);
        const N: usize = 64;
        // SAFETY: the child only calls next_iv (no locks held by other threads
        // are needed: the pool is thread-local and the atomics are lock-free),
        // write(2) and _exit(2).
        let pid = unsafe { libc::fork() };
        assert!(pid >= 0, "fork failed");
        if pid == 0 {
            let mut out = Vec::with_capacity(N * IV_LEN);
            for _ in 0..N {
                match next_iv() {
                    Ok(iv) => out.extend_from_slice(&iv),
                    // SAFETY: terminating the child without running Rust destructors.
                    Err(_) => unsafe { libc::_exit(2) },
                }
            }
            // SAFETY: fds[1] is the open write end; `out` is a valid buffer.
            let written = unsafe { libc::write(fds[1], out.as_ptr().cast(), out.len()) };
            let code = i32::from(usize::try_from(written).ok() != Some(out.len()));
            // SAFETY: terminating the forked child immediately is the intent.
            unsafe { libc::_exit(code) };
        }
        let parent: HashSet<[u8; IV_LEN]> = (0..N).map(|_| next_iv().expect("rng")).collect();
        let mut buf = vec![0u8; N * IV_LEN];
        let mut got = 0;
        while got < buf.len() {
            // SAFETY: reading into the unfilled tail of `buf` from the pipe's read end.
            let r = unsafe { libc::read(fds[0], buf[got..].as_mut_ptr().cast(), buf.len() - got) };
            assert!(r > 0, "child wrote too little");
            got += usize::try_from(r).expect("positive");
        }
        let mut status = 0;
        // SAFETY: waiting on our own child pid.
        unsafe { libc::waitpid(pid, &mut status, 0) };
        assert!(libc::WIFEXITED(status) && libc::WEXITSTATUS(status) == 0);
        for chunk in buf.chunks_exact(IV_LEN) {
            let iv: [u8; IV_LEN] = chunk.try_into().expect("12 bytes");
            assert!(!parent.contains(&iv), "child replayed an IV of its parent");
        }
        // SAFETY: closing the pipe fds we opened.
        unsafe {
            libc::close(fds[0]);
            libc::close(fds[1]);
        }
    }
}
