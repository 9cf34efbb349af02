//! Growing a reused buffer that may hold plaintext.
//!
//! `Vec::reserve` moves the contents to a new allocation and frees the old
//! one as it is, so bytes of an earlier value (a buffer is cleared, not
//! wiped, between calls) would be left in freed memory. [`reserve`] grows by
//! allocating, copying, wiping the old allocation whole, and freeing it.

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
    // Zeroes every element and the spare capacity, then empties it.
    buf.zeroize();
    *buf = grown;
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
}
