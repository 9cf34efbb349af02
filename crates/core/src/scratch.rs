//! Growing and wiping a reused buffer that may hold plaintext.
//!
//! `Vec::reserve` moves the contents to a new allocation and frees the old
//! one as it is, so bytes of an earlier value (a buffer is cleared, not
//! wiped, between calls) would be left in freed memory. [`reserve`] grows by
//! allocating, copying, wiping the old allocation whole, and freeing it.
//! [`wipe`] and [`wipe_text`] wipe a buffer whole, and leave one that never
//! allocated alone: it holds nothing, and its pointer is dangling, where
//! zeroing no bytes through glibc's `memset` is slow on some hosts
//! (docs/performance.md, "Search tokens, per value").

use zeroize::{DefaultIsZeroes, Zeroize};

/// Makes room for `additional` more elements after `buf.len()`, wiping the
/// old allocation when it has to move. Growth is at least doubling, so a
/// buffer that keeps growing still costs amortised O(1) per element.
pub fn reserve<T: DefaultIsZeroes>(buf: &mut Vec<T>, additional: usize) {
    if buf.capacity() - buf.len() >= additional {
        return;
    }
    let needed = buf.len().saturating_add(additional);
    let mut grown = Vec::with_capacity(needed.max(buf.capacity().saturating_mul(2)));
    grown.extend_from_slice(buf);
    wipe(buf);
    *buf = grown;
}

/// Zeroes every element of `buf` and its spare capacity, then empties it;
/// a buffer that never allocated is left as it is.
pub fn wipe<T: DefaultIsZeroes>(buf: &mut Vec<T>) {
    if buf.capacity() > 0 {
        buf.zeroize();
    }
}

/// [`wipe`] for a String.
pub fn wipe_text(text: &mut String) {
    if text.capacity() > 0 {
        text.zeroize();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn grows_keeps_the_contents_and_wipes_the_old_allocation() {
        let mut buf: Vec<u8> = Vec::with_capacity(8);
        buf.extend_from_slice(b"secret");
        buf.clear();
        buf.extend_from_slice(b"ab");
        let old = buf.as_ptr();
        reserve(&mut buf, 100);
        assert_eq!(buf, b"ab");
        assert!(buf.capacity() >= 102);
        assert_ne!(buf.as_ptr(), old);
        // enough room already: nothing moves
        let same = buf.as_ptr();
        reserve(&mut buf, 10);
        assert_eq!(buf.as_ptr(), same);
    }

    #[test]
    fn wiping_zeroes_the_whole_allocation_and_keeps_it() {
        let mut buf: Vec<u8> = b"secret".to_vec();
        buf.truncate(2);
        let (ptr, capacity) = (buf.as_ptr(), buf.capacity());
        wipe(&mut buf);
        assert!(buf.is_empty());
        assert_eq!((buf.as_ptr(), buf.capacity()), (ptr, capacity));
        // SAFETY: the allocation is `capacity` bytes, all written (zeroed) by the wipe.
        let bytes = unsafe { std::slice::from_raw_parts(ptr, capacity) };
        assert!(bytes.iter().all(|&b| b == 0), "{bytes:?}");
        let mut text = String::from("secret");
        let ptr = text.as_ptr();
        wipe_text(&mut text);
        assert!(text.is_empty());
        // SAFETY: as above, 6 bytes zeroed by the wipe.
        assert_eq!(unsafe { std::slice::from_raw_parts(ptr, 6) }, [0; 6]);
        // never allocated: nothing to wipe, and nothing changes
        let (mut none, mut no_text) = (Vec::<u8>::new(), String::new());
        wipe(&mut none);
        wipe_text(&mut no_text);
        assert_eq!((none.capacity(), no_text.capacity()), (0, 0));
    }
}
