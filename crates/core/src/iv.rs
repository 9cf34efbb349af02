//! IVs: 96 or 128 random bits for every encryption, without a syscall per call.
//!
//! Each thread keeps a pool of random bytes and hands out 12 or 16 of them
//! per IV, refilling when the pool runs dry. A refill is the ChaCha20
//! keystream under a key of 32 fresh bytes from the OS CSPRNG
//! (`getrandom(2)`): the construction of the kernel's own generator, run
//! here with SIMD, where asking the kernel for the whole pool ran its
//! generic ChaCha20 (docs/performance.md, "Why these dependencies").
//!
//! Uniqueness, which AES-GCM requires, rests on three facts:
//! - every pool is keyed afresh by the OS generator, and every byte is
//!   handed out once, then the cursor moves past it;
//! - pools are per thread (`thread_local!`), so worker threads never share one;
//! - a `fork()` child must not replay the pool it inherited from its parent.
//!   A pool filled under an older process-wide generation is thrown away
//!   before use, and two independent watches bump the generation in a child:
//!   a `pthread_atfork` child handler, and (on Linux) a page mapped with
//!   `MADV_WIPEONFORK`, which the kernel zeroes in every child, however it was
//!   made (a raw `clone`/`fork` syscall or glibc's `_Fork` skip the handler).
//!   Where that page is unavailable, the process id is compared instead.
//!
//! A VM snapshot restored twice is a copy no process-level watch sees: both
//! copies continue the same pools (and the same kernel state, unless the
//! hypervisor reseeds it). Do not resume one snapshot of a running
//! application more than once.

use std::cell::RefCell;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Once;

use crate::error::{AleError, Result};

/// The longest IV this crate handles, in bytes.
pub const MAX_IV_LEN: usize = 16;

/// The two IV lengths an envelope may carry.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
pub enum IvLength {
    /// 96 bits: GCM's native length (`J0 = IV || 0^31 || 1`). Only this
    /// package reads it; no deployed SveltyCMS release does.
    Bits96,
    /// 128 bits, hashed into the first counter block (`J0 = GHASH(IV || 0^64
    /// || [128]64)`, NIST SP 800-38D). What SveltyCMS writes and reads.
    #[default]
    Bits128,
}

impl IvLength {
    /// The length in bytes: 12 or 16.
    pub const fn bytes(self) -> usize {
        match self {
            IvLength::Bits96 => 12,
            IvLength::Bits128 => 16,
        }
    }

    /// `Some` for 12 or 16 bytes, `None` for every other length.
    pub const fn from_bytes(n: usize) -> Option<Self> {
        match n {
            12 => Some(IvLength::Bits96),
            16 => Some(IvLength::Bits128),
            _ => None,
        }
    }
}

/// An IV of 12 or 16 bytes. IVs are public (they are stored in the envelope).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Iv {
    bytes: [u8; MAX_IV_LEN],
    len: IvLength,
}

impl Iv {
    /// Wraps 12 or 16 bytes; `None` for any other length.
    pub fn from_slice(bytes: &[u8]) -> Option<Self> {
        let len = IvLength::from_bytes(bytes.len())?;
        let mut iv = Iv {
            bytes: [0; MAX_IV_LEN],
            len,
        };
        iv.bytes[..bytes.len()].copy_from_slice(bytes);
        Some(iv)
    }

    /// The first `len` bytes of `bytes`, whose other bytes must be zero (as
    /// [`Iv::from_slice`] leaves them, so that equal IVs compare equal).
    pub(crate) fn from_padded(bytes: [u8; MAX_IV_LEN], len: IvLength) -> Self {
        debug_assert!(bytes[len.bytes()..].iter().all(|&b| b == 0));
        Iv { bytes, len }
    }

    /// A fresh random IV. Never the same bytes twice within a process, nor
    /// bytes that a parent or child process also hands out.
    pub fn random(len: IvLength) -> Result<Self> {
        let mut iv = Iv {
            bytes: [0; MAX_IV_LEN],
            len,
        };
        take_from_pool(&mut iv.bytes[..len.bytes()])?;
        Ok(iv)
    }

    pub fn as_bytes(&self) -> &[u8] {
        &self.bytes[..self.len.bytes()]
    }

    pub fn len(&self) -> IvLength {
        self.len
    }
}

/// Bytes per refill: 341 IVs of 12 bytes or 256 of 16.
const POOL_LEN: usize = 4096;

/// Fills `pool` with the ChaCha20 keystream under a fresh key from the OS
/// generator. The generator wipes its state when dropped and `seed` is
/// wiped here; the copy `from_seed` takes by value is not, which is fine
/// for a key that only makes public IVs.
fn refill(pool: &mut [u8; POOL_LEN]) -> Result<()> {
    use chacha20::rand_core::{Rng, SeedableRng};
    use zeroize::Zeroize;
    let mut seed = [0u8; 32];
    getrandom::fill(&mut seed).map_err(|_| AleError::RngUnavailable)?;
    let mut generator = chacha20::ChaCha20Rng::from_seed(seed);
    seed.zeroize();
    generator.fill_bytes(pool);
    Ok(())
}

static FORK_GENERATION: AtomicU64 = AtomicU64::new(0);

/// Moves the process-wide generation on when this process is a fork child
/// that no earlier call has seen, by the kernel-wiped page (Linux) or,
/// without one, by a changed process id. The generation moves before the
/// fork is marked as seen, so no thread can see the mark and the old
/// generation together (an extra move only costs a refill).
fn note_fork() {
    #[cfg(target_os = "linux")]
    if let Some(page) = wipe_on_fork_page() {
        // 1 in the process that mapped the page and in children that have
        // seen their fork; 0 in a child that has not.
        if page.load(Ordering::Acquire) == 0 {
            FORK_GENERATION.fetch_add(1, Ordering::SeqCst);
            page.store(1, Ordering::Release);
        }
        return;
    }
    static PID: AtomicU64 = AtomicU64::new(0);
    let pid = u64::from(std::process::id());
    let seen = PID.load(Ordering::Acquire);
    if seen != pid {
        if seen != 0 {
            FORK_GENERATION.fetch_add(1, Ordering::SeqCst);
        }
        PID.store(pid, Ordering::Release);
    }
}

/// A page the kernel zeroes in every fork child, holding 1; `None` where
/// `MADV_WIPEONFORK` is unavailable (kernels before 4.14).
#[cfg(target_os = "linux")]
fn wipe_on_fork_page() -> Option<&'static AtomicU64> {
    static PAGE: std::sync::OnceLock<Option<&'static AtomicU64>> = std::sync::OnceLock::new();
    *PAGE.get_or_init(|| {
        const LEN: usize = 4096;
        // SAFETY: an anonymous private mapping of one page; nothing else
        // refers to it. It is never unmapped (it lives for the process).
        unsafe {
            let addr = libc::mmap(
                std::ptr::null_mut(),
                LEN,
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_PRIVATE | libc::MAP_ANONYMOUS,
                -1,
                0,
            );
            if addr == libc::MAP_FAILED {
                return None;
            }
            if libc::madvise(addr, LEN, libc::MADV_WIPEONFORK) != 0 {
                libc::munmap(addr, LEN);
                return None;
            }
            // Page-aligned, zero-filled, and valid for the process's life.
            let page = &*addr.cast::<AtomicU64>();
            page.store(1, Ordering::Release);
            Some(page)
        }
    })
}
static REGISTER_ATFORK: Once = Once::new();
static FORK_HANDLER_MISSING: AtomicBool = AtomicBool::new(false);

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
        // could repeat IVs, so fall back to drawing every IV from the kernel.
        if rc != 0 {
            FORK_HANDLER_MISSING.store(true, Ordering::SeqCst);
        }
    });
}

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

/// Fills `dst` (at most [`MAX_IV_LEN`] bytes) with pool bytes never handed out before.
fn take_from_pool(dst: &mut [u8]) -> Result<()> {
    register_fork_handler();
    if FORK_HANDLER_MISSING.load(Ordering::Relaxed) {
        return getrandom::fill(dst).map_err(|_| AleError::RngUnavailable);
    }
    POOL.with(|cell| {
        let mut pool = cell.borrow_mut();
        note_fork();
        // The child handler runs in the only thread of the new process before
        // any code of ours, so an Acquire load sees its increment.
        let generation = FORK_GENERATION.load(Ordering::Acquire);
        if pool.generation != generation || pool.cursor + dst.len() > POOL_LEN {
            refill(&mut pool.bytes)?;
            pool.cursor = 0;
            pool.generation = generation;
        }
        let range = pool.cursor..pool.cursor + dst.len();
        dst.copy_from_slice(&pool.bytes[range.clone()]);
        // Burn what was handed out so no later state can repeat it.
        pool.bytes[range.clone()].fill(0);
        pool.cursor = range.end;
        Ok(())
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashSet;

    fn next_iv() -> Result<Iv> {
        Iv::random(IvLength::Bits96)
    }
    const IV_LEN: usize = 12;
    const POOL_IVS: usize = POOL_LEN / IV_LEN;

    #[test]
    fn ivs_are_unique_across_many_refills() {
        let mut seen = HashSet::new();
        for i in 0..(POOL_IVS * 20) {
            // alternate lengths, so refills happen at uneven cursors
            let len = if i % 3 == 0 {
                IvLength::Bits128
            } else {
                IvLength::Bits96
            };
            let iv = Iv::random(len).expect("rng");
            assert_eq!(iv.as_bytes().len(), len.bytes());
            assert!(seen.insert(iv.as_bytes()[..12].to_vec()), "repeated IV");
        }
    }

    #[test]
    fn only_12_and_16_bytes_make_an_iv() {
        for n in [0, 1, 8, 11, 13, 15, 17, 24, 32] {
            assert!(Iv::from_slice(&vec![0; n]).is_none(), "{n}");
        }
        assert_eq!(
            Iv::from_slice(&[1; 12]).map(|iv| iv.len()),
            Some(IvLength::Bits96)
        );
        assert_eq!(
            Iv::from_slice(&[1; 16]).map(|iv| iv.len()),
            Some(IvLength::Bits128)
        );
        assert_eq!(IvLength::default(), IvLength::Bits128);
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

    /// A way to fork: 0 in the child, the child's pid in the parent.
    type Fork = unsafe fn() -> libc::pid_t;

    /// glibc's fork(), which runs the `pthread_atfork` handlers.
    unsafe fn libc_fork() -> libc::pid_t {
        // SAFETY: see `child_does_not_replay_parent_pool`.
        unsafe { libc::fork() }
    }

    /// A raw clone(SIGCHLD) system call: a fork that runs no handler, as
    /// `syscall(SYS_fork)`, glibc's `_Fork` or a CRIU-style copy would.
    #[cfg(target_os = "linux")]
    unsafe fn raw_fork() -> libc::pid_t {
        // SAFETY: clone with only SIGCHLD and a null stack is fork(2) without
        // glibc's wrapper; see `child_does_not_replay_parent_pool`.
        let pid = unsafe { libc::syscall(libc::SYS_clone, libc::SIGCHLD, 0, 0, 0, 0) };
        libc::pid_t::try_from(pid).unwrap_or(-1)
    }

    /// A forked child must not hand out what its parent hands out next.
    fn child_does_not_replay_parent_pool(fork: Fork) {
        // Prime the pool so the child inherits a partly used one.
        let _ = next_iv().expect("rng");
        let mut fds = [0i32; 2];
        // SAFETY: `fds` is a valid array of two c_ints for pipe(2).
        assert_eq!(unsafe { libc::pipe(fds.as_mut_ptr()) }, 0);
        const N: usize = 64;
        // Allocated before the fork: after a raw clone no atfork handler
        // resets malloc's locks, so a child that allocated could wait forever
        // on a lock another test thread held at that moment (it did, once).
        let mut out = Vec::with_capacity(N * IV_LEN);
        // SAFETY: the child only calls next_iv (no locks held by other threads
        // are needed: the pool is thread-local and the atomics and the
        // initialised OnceLock are lock-free), writes into `out`'s capacity,
        // write(2) and _exit(2).
        let pid = unsafe { fork() };
        assert!(pid >= 0, "fork failed");
        if pid == 0 {
            for _ in 0..N {
                match next_iv() {
                    Ok(iv) => out.extend_from_slice(iv.as_bytes()),
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
        // The parent's write end closed, so that a child that ends early
        // reads as the end of the pipe; a child stuck for 30 s is killed.
        // SAFETY: fds[1] is our open write end, not used again.
        unsafe { libc::close(fds[1]) };
        let parent: HashSet<Iv> = (0..N).map(|_| next_iv().expect("rng")).collect();
        let mut buf = vec![0u8; N * IV_LEN];
        let mut got = 0;
        while got < buf.len() {
            let mut ready = libc::pollfd {
                fd: fds[0],
                events: libc::POLLIN,
                revents: 0,
            };
            // SAFETY: one valid pollfd.
            if unsafe { libc::poll(&mut ready, 1, 30_000) } != 1 {
                // SAFETY: our own child.
                unsafe { libc::kill(pid, libc::SIGKILL) };
                panic!("the forked child wrote nothing for 30 s");
            }
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
            let iv = Iv::from_slice(chunk).expect("12 bytes");
            assert!(!parent.contains(&iv), "child replayed an IV of its parent");
        }
        // SAFETY: closing the read end we opened.
        unsafe { libc::close(fds[0]) };
    }

    #[test]
    fn fork_child_does_not_replay_parent_pool() {
        child_does_not_replay_parent_pool(libc_fork);
    }

    /// No `pthread_atfork` handler runs here; the wiped page must catch it.
    #[cfg(target_os = "linux")]
    #[test]
    fn raw_fork_child_does_not_replay_parent_pool() {
        assert!(
            wipe_on_fork_page().is_some(),
            "MADV_WIPEONFORK is unavailable here"
        );
        child_does_not_replay_parent_pool(raw_fork);
    }
}
