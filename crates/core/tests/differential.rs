//! The default AEAD backend (ring) against the pure-Rust one (RustCrypto
//! aes-gcm) on random keys, IVs, AAD and messages. Built with
//! `cargo test --features rustcrypto`.
#![cfg(all(feature = "ring", feature = "rustcrypto"))]

use ale_core::aead::{ring_backend, rustcrypto_backend, Aead};
use proptest::prelude::*;

proptest! {
    #![proptest_config(ProptestConfig { cases: 3000, ..ProptestConfig::default() })]

    #[test]
    fn ring_and_rustcrypto_agree(key in any::<[u8; 32]>(), iv in any::<[u8; 12]>(), aad in prop::collection::vec(any::<u8>(), 0..64), msg in prop::collection::vec(any::<u8>(), 0..2048)) {
        let (a, b) = (ring_backend::Key::new(&key), rustcrypto_backend::Key::new(&key));
        let (mut ca, mut cb) = (msg.clone(), msg.clone());
        let ta = a.seal_in_place(&iv, &aad, &mut ca).expect("seal");
        let tb = b.seal_in_place(&iv, &aad, &mut cb).expect("seal");
        prop_assert_eq!(&ca, &cb);
        prop_assert_eq!(ta, tb);
        // each opens the other's output
        let mut back = cb.clone();
        a.open_in_place(&iv, &aad, &mut back, &tb).expect("ring opens rustcrypto");
        prop_assert_eq!(&back, &msg);
        let mut back = ca.clone();
        b.open_in_place(&iv, &aad, &mut back, &ta).expect("rustcrypto opens ring");
        prop_assert_eq!(&back, &msg);
    }
}
