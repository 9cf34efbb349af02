//! Project Wycheproof vectors (C2SP/wycheproof, testvectors_v1): AES-GCM with
//! 256-bit keys, 96- and 128-bit IVs and 128-bit tags through every compiled
//! AEAD backend, and HKDF-SHA-256 through the key-derivation function.

mod common;

use ale_core::aead::{Aead, KEY_LEN, TAG_LEN};
use ale_core::iv::Iv;
use ale_core::secret::hkdf_sha256;

/// Runs every vector with a 256-bit key, a `iv_bits` IV and a 128-bit tag
/// through backend `A`; returns how many ran.
fn run_aes_gcm<A: Aead>(backend: &str, iv_bits: u64) -> usize {
    let Some(doc) = common::load("aes_gcm_test.json") else {
        return 0;
    };
    let mut ran = 0;
    for group in doc["testGroups"].as_array().expect("groups") {
        if group["keySize"] != 256 || group["ivSize"] != iv_bits || group["tagSize"] != 128 {
            continue;
        }
        for t in group["tests"].as_array().expect("tests") {
            let id = &t["tcId"];
            let key: [u8; KEY_LEN] = common::hex(&t["key"]).try_into().expect("32-byte key");
            let iv = Iv::from_slice(&common::hex(&t["iv"])).expect("12- or 16-byte iv");
            let tag: [u8; TAG_LEN] = common::hex(&t["tag"]).try_into().expect("16-byte tag");
            let (aad, msg, ct) = (
                common::hex(&t["aad"]),
                common::hex(&t["msg"]),
                common::hex(&t["ct"]),
            );
            let valid = t["result"] == "valid";
            let k = A::new(&key);

            let mut buf = ct.clone();
            let opened = k.open_in_place(&iv, &aad, &mut buf, &tag);
            if valid {
                assert!(opened.is_ok(), "{backend} tcId {id}: valid vector rejected");
                assert_eq!(buf, msg, "{backend} tcId {id}: wrong plaintext");
                let mut sealed = msg.clone();
                let got = k.seal_in_place(&iv, &aad, &mut sealed).expect("seal");
                assert_eq!(
                    (sealed, got),
                    (ct, tag),
                    "{backend} tcId {id}: wrong ciphertext or tag"
                );
            } else {
                assert_eq!(
                    opened.map_err(|e| e.code()),
                    Err("ALE_AUTH_FAILED"),
                    "{backend} tcId {id}"
                );
                assert!(
                    buf.iter().all(|&b| b == 0),
                    "{backend} tcId {id}: plaintext left after failure"
                );
            }
            ran += 1;
        }
    }
    ran
}

/// Both IV lengths through backend `A`, with the counts the vector file has.
fn run_both<A: Aead>(backend: &str) {
    if common::load("aes_gcm_test.json").is_none() {
        return;
    }
    let (n96, n128) = (
        run_aes_gcm::<A>(backend, 96),
        run_aes_gcm::<A>(backend, 128),
    );
    assert!(n96 > 50, "too few AES-256-GCM/96 vectors ({n96})");
    assert_eq!(n128, 19, "AES-256-GCM/128-bit-IV vectors");
    eprintln!(
        "{backend}: {n96} Wycheproof AES-256-GCM vectors with 96-bit IVs, {n128} with 128-bit IVs"
    );
}

#[cfg(feature = "aws-lc")]
#[test]
fn aes_256_gcm_aws_lc() {
    run_both::<ale_core::aead::aws_lc_backend::Key>("aws-lc");
}

#[cfg(feature = "rustcrypto")]
#[test]
fn aes_256_gcm_rustcrypto() {
    run_both::<ale_core::aead::rustcrypto_backend::Key>("rustcrypto");
}

/// The vectors for every other IV size cannot even be expressed: an `Iv` is
/// 12 or 16 bytes. Check that such vectors exist, so this claim stays true.
#[test]
fn other_iv_sizes_are_not_representable() {
    let Some(doc) = common::load("aes_gcm_test.json") else {
        return;
    };
    let mut other = 0;
    for group in doc["testGroups"].as_array().expect("groups") {
        if matches!(group["ivSize"].as_u64(), Some(96 | 128)) {
            continue;
        }
        for t in group["tests"].as_array().expect("tests") {
            assert!(
                Iv::from_slice(&common::hex(&t["iv"])).is_none(),
                "tcId {}",
                t["tcId"]
            );
            other += 1;
        }
    }
    assert!(other > 0);
}

#[test]
fn hkdf_sha256_vectors() {
    let Some(doc) = common::load("hkdf_sha256_test.json") else {
        return;
    };
    let mut ran = 0;
    for group in doc["testGroups"].as_array().expect("groups") {
        for t in group["tests"].as_array().expect("tests") {
            let size = usize::try_from(t["size"].as_u64().expect("size")).expect("size");
            let salt = common::hex(&t["salt"]);
            let mut okm = vec![0u8; size];
            let got = hkdf_sha256(
                Some(&salt),
                &common::hex(&t["ikm"]),
                &common::hex(&t["info"]),
                &mut okm,
            );
            if t["result"] == "valid" {
                assert!(got.is_ok(), "tcId {}", t["tcId"]);
                assert_eq!(okm, common::hex(&t["okm"]), "tcId {}", t["tcId"]);
            } else {
                assert!(got.is_err(), "tcId {} must be refused", t["tcId"]);
            }
            ran += 1;
        }
    }
    assert!(ran > 50);
    eprintln!("{ran} Wycheproof HKDF-SHA-256 vectors");
}
