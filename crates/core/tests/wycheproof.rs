//! Project Wycheproof vectors (C2SP/wycheproof, testvectors_v1): AES-GCM with
//! 256-bit keys, 96-bit IVs and 128-bit tags through every compiled AEAD
//! backend, and HKDF-SHA-256 through the key-derivation function.

mod common;

use ale_core::aead::{Aead, KEY_LEN, TAG_LEN};
use ale_core::iv::IV_LEN;
use ale_core::keys::hkdf_sha256;

/// Runs every applicable vector through backend `A`; returns how many ran.
fn run_aes_gcm<A: Aead>(backend: &str) -> usize {
    let Some(doc) = common::load("aes_gcm_test.json") else {
        return 0;
    };
    let mut ran = 0;
    for group in doc["testGroups"].as_array().expect("groups") {
        if group["keySize"] != 256 || group["ivSize"] != 96 || group["tagSize"] != 128 {
            continue;
        }
        for t in group["tests"].as_array().expect("tests") {
            let id = &t["tcId"];
            let key: [u8; KEY_LEN] = common::hex(&t["key"]).try_into().expect("32-byte key");
            let iv: [u8; IV_LEN] = common::hex(&t["iv"]).try_into().expect("12-byte iv");
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
    assert!(ran > 50, "too few AES-256-GCM/96 vectors found ({ran})");
    ran
}

#[cfg(feature = "ring")]
#[test]
fn aes_256_gcm_ring() {
    let n = run_aes_gcm::<ale_core::aead::ring_backend::Key>("ring");
    eprintln!("ring: {n} Wycheproof AES-256-GCM vectors");
}

#[cfg(feature = "rustcrypto")]
#[test]
fn aes_256_gcm_rustcrypto() {
    let n = run_aes_gcm::<ale_core::aead::rustcrypto_backend::Key>("rustcrypto");
    eprintln!("rustcrypto: {n} Wycheproof AES-256-GCM vectors");
}

/// The vectors for other IV sizes cannot even be expressed: the API takes
/// `&[u8; 12]`. Check that such vectors exist, so this claim stays true.
#[test]
fn other_iv_sizes_are_not_representable() {
    let Some(doc) = common::load("aes_gcm_test.json") else {
        return;
    };
    let other = doc["testGroups"]
        .as_array()
        .expect("groups")
        .iter()
        .filter(|g| g["ivSize"] != 96)
        .count();
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
