//! The default AEAD backend (AWS-LC) against the pure-Rust one (RustCrypto
//! aes-gcm) on random keys, IVs of both lengths, AAD and messages. Built with
//! `cargo test --features rustcrypto`.
#![cfg(all(feature = "aws-lc", feature = "rustcrypto"))]

use ale_core::aead::{aws_lc_backend, rustcrypto_backend, Aead};
use ale_core::iv::Iv;
use proptest::prelude::*;

proptest! {
    #![proptest_config(ProptestConfig { cases: 3000, ..ProptestConfig::default() })]

    #[test]
    fn aws_lc_and_rustcrypto_agree(key in any::<[u8; 32]>(), iv in any::<[u8; 16]>(), wide_iv in any::<bool>(), aad in prop::collection::vec(any::<u8>(), 0..64), msg in prop::collection::vec(any::<u8>(), 0..2048)) {
        let iv = Iv::from_slice(if wide_iv { &iv[..] } else { &iv[..12] }).expect("12 or 16 bytes");
        let (a, b) = (aws_lc_backend::Key::new(&key), rustcrypto_backend::Key::new(&key));
        let (mut ca, mut cb) = (msg.clone(), msg.clone());
        let ta = a.seal_in_place(&iv, &aad, &mut ca).expect("seal");
        let tb = b.seal_in_place(&iv, &aad, &mut cb).expect("seal");
        prop_assert_eq!(&ca, &cb);
        prop_assert_eq!(ta, tb);
        // each opens the other's output
        let mut back = cb.clone();
        a.open_in_place(&iv, &aad, &mut back, &tb).expect("AWS-LC opens RustCrypto");
        prop_assert_eq!(&back, &msg);
        let mut back = ca.clone();
        b.open_in_place(&iv, &aad, &mut back, &ta).expect("RustCrypto opens AWS-LC");
        prop_assert_eq!(&back, &msg);
    }
}
