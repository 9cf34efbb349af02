use super::*;

const IV: &str = "AAECAwQFBgcICQoL"; // 00..0b
const TAG: &str = "AAECAwQFBgcICQoLDA0ODw"; // 00..0f

/// The code of parsing and decoding `s`, as bytes and as UTF-16; both must agree.
fn code(s: &str) -> &'static str {
    fn run<C: CodeUnit>(units: &[C]) -> &'static str {
        match parse(units) {
            Ok(p) => {
                let mut v = Vec::new();
                decode_ciphertext(p.ciphertext_b64, &mut v)
                    .err()
                    .map_or("ok", |e| e.code())
            }
            Err(e) => e.code(),
        }
    }
    let bytes = run(s.as_bytes());
    let wide: Vec<u16> = s.encode_utf16().collect();
    assert_eq!(bytes, run(&wide), "u8 and u16 parsers disagree on {s:?}");
    bytes
}

const IV16: &str = "AAECAwQFBgcICQoLDA0ODw"; // 00..0f

#[test]
fn a_parse_with_or_without_ids_gives_what_the_scan_gives() {
    let id = [0xA5u8; KEY_ID_LEN];
    let known = [(id, key_id_text(&id))];
    let text = String::from_utf8(key_id_text(&id).to_vec()).expect("ASCII");
    assert_eq!(text, "paWlpaWlpaWlpaWlpaWlpQ");
    for envelope in [
        format!("v2:{text}:{IV}:{TAG}:aGkhPw"),
        // another id, a non-canonical spelling of the known one, a bad character
        format!("v2:AAAAAAAAAAAAAAAAAAAAAA:{IV}:{TAG}:aGkhPw"),
        format!("v2:paWlpaWlpaWlpaWlpaWlpR:{IV}:{TAG}:aGkhPw"),
        format!("v2:paWlpaWlpaWlpaWlpaWlp=:{IV}:{TAG}:aGkhPw"),
        format!("v2:{text}:{IV}:{TAG}"),
        format!("v1:{IV}:{TAG}:aGkhPw"),
        // what the in-place parse of a known id takes, and what it
        // must hand to the scan: the other IV length, separators one
        // place off, a ':' or a bad character inside a part, an empty
        // ciphertext, a cut value
        format!("v2:{text}:{IV16}:{TAG}:aGkhPw"),
        format!("v2:{text}:{IV16}:{TAG}:"),
        format!("v2:{text}:AAECAwQFBgcICQoL:DA0ODw:{TAG}:aGkhPw"),
        format!("v2:{text}:AAECAwQF:gcICQoL:{TAG}:aGkhPw"),
        format!("v2:{text}:AAECAwQFBgcICQo=:{TAG}:aGkhPw"),
        format!("v2:{text}:{IV}:AAECAwQFBgcICQoLDA0OD:w:aGkhPw"),
        format!("v2:{text}:{IV}:AAECAwQFBgcICQoLDA0ODx:aGkhPw"),
        format!("v2:{text}:{IV}:{TAG}aGkhPw"),
        format!("v2:{text}:{IV}:"),
        format!("v2:{text}:"),
        format!("v2:{text}"),
        format!("v2:{text}::{IV}:{TAG}:aGkhPw"),
        // the same for v1, which takes the in-place parse with no id
        format!("v1:{IV16}:{TAG}:aGkhPw"),
        format!("v1:{IV16}:{TAG}:"),
        format!("v1:AAECAwQFBgcICQoL:DA0ODw:{TAG}:aGkhPw"),
        format!("v1:AAECAwQF:gcICQoL:{TAG}:aGkhPw"),
        format!("v1:AAECAwQFBgcICQo=:{TAG}:aGkhPw"),
        format!("v1:{IV}:AAECAwQFBgcICQoLDA0OD:w:aGkhPw"),
        format!("v1:{IV}:AAECAwQFBgcICQoLDA0ODx:aGkhPw"),
        format!("v1:{IV}:{TAG}aGkhPw"),
        format!("v1:{IV}:{TAG}:aGk:hPw"),
        format!("v1:{IV}:"),
        "v1:".to_string(),
        format!("v1::{IV}:{TAG}:aGkhPw"),
    ] {
        let wide: Vec<u16> = envelope.encode_utf16().collect();
        for ids in [&known[..], &[]] {
            assert_eq!(
                parse_with(envelope.as_bytes(), ids),
                parse_by_scan(envelope.as_bytes(), ids),
                "{envelope}"
            );
            assert_eq!(
                parse_with(&wide[..], ids),
                parse_by_scan(&wide[..], ids),
                "{envelope}"
            );
        }
        assert_eq!(
            parse_with(envelope.as_bytes(), &known),
            parse(envelope.as_bytes()),
            "{envelope}"
        );
        assert_eq!(
            parse_with(&wide[..], &known),
            parse(&wide[..]),
            "{envelope}"
        );
    }
    let named_envelope = format!("v2:{text}:{IV}:{TAG}:aGkhPw");
    let named = parse_with(named_envelope.as_bytes(), &known).expect("parses");
    assert_eq!(named.key_id, Some(id));
    // A code unit above 0xFF where the id's text has an ASCII character.
    let mut wide: Vec<u16> = format!("v2:{text}:{IV}:{TAG}:aGkhPw")
        .encode_utf16()
        .collect();
    wide[3] = 0x170;
    assert_eq!(parse_with(&wide[..], &known), parse(&wide[..]));
    assert!(parse(&wide[..]).is_err());
}

#[test]
fn round_trips_the_layout() {
    let bytes: [u8; 16] = core::array::from_fn(|i| u8::try_from(i).expect("small"));
    let tag = bytes;
    for (iv, iv_b64) in [(&bytes[..12], IV), (&bytes[..], IV16)] {
        let iv = Iv::from_slice(iv).expect("12 or 16");
        let mut out = Vec::new();
        write(&mut out, None, &iv, &tag, b"hi!?");
        assert_eq!(out, format!("v1:{iv_b64}:{TAG}:aGkhPw").as_bytes());
        assert_eq!(out.len(), encoded_len(iv.len(), false, 4));
        let p = parse(&out[..]).expect("parses");
        assert_eq!(
            (p.key_id, p.iv, p.tag, p.ciphertext_b64),
            (None, iv, tag, &b"aGkhPw"[..])
        );
        write(&mut out, Some(&tag), &iv, &tag, b"hi!?");
        assert_eq!(out, format!("v2:{TAG}:{iv_b64}:{TAG}:aGkhPw").as_bytes());
        assert_eq!(out.len(), encoded_len(iv.len(), true, 4));
        let p = parse(&out[..]).expect("parses");
        assert_eq!(
            (p.key_id, p.iv, p.tag, p.ciphertext_b64),
            (Some(tag), iv, tag, &b"aGkhPw"[..])
        );
    }
    assert_eq!(overhead(IvLength::Bits128, false), 49);
    assert_eq!(overhead(IvLength::Bits96, false), 43);
    assert_eq!(overhead(IvLength::Bits96, true), 66);
}

#[test]
fn v2_has_exactly_five_parts_and_a_canonical_key_id() {
    assert_eq!(code(&format!("v2:{TAG}:{IV}:{TAG}:aGkhPw")), "ok");
    assert_eq!(code(&format!("v2:{TAG}:{IV}:{TAG}:")), "ok");
    for bad in [
        format!("v2:{IV}:{TAG}:aGkhPw"),
        format!("v2:{TAG}:{IV}:{TAG}"),
        format!("v2:{TAG}:{IV}:{TAG}:aGk:hPw"),
        format!("v2::{IV}:{TAG}:"),
        format!("v2:{TAG}A:{IV}:{TAG}:"),
        format!("v2:{}:{IV}:{TAG}:", &TAG[..21]),
        format!("v2:AAECAwQFBgcICQoLDA0ODx:{IV}:{TAG}:"),
        format!("v2:AAECAwQFBgcICQoLDA0OD+:{IV}:{TAG}:"),
        format!("v2:{TAG}"),
        "v2:".to_string(),
    ] {
        assert_eq!(code(&bad), "ALE_MALFORMED_ENVELOPE", "{bad:?}");
    }
}

#[test]
fn empty_ciphertext_is_valid() {
    assert_eq!(code(&format!("v1:{IV}:{TAG}:")), "ok");
}

#[test]
fn prefix_must_be_v_digits_colon() {
    for s in [
        "",
        "v",
        "v:",
        "1:a:b:c",
        "V1:x:y:z",
        "va:x",
        "v1",
        "v1x:",
        " v1:",
        "plain text",
    ] {
        assert_eq!(code(s), "ALE_MALFORMED_ENVELOPE", "{s:?}");
    }
    assert_eq!(code("v01:a:b:c"), "ALE_MALFORMED_ENVELOPE");
    // a character whose low byte is 'v' (U+0176) is not 'v'
    assert_eq!(
        code(&format!("\u{0176}1:{IV}:{TAG}:")),
        "ALE_MALFORMED_ENVELOPE"
    );
}

#[test]
fn other_versions_are_unsupported() {
    for (s, v) in [
        ("v0:x", 0),
        ("v3:a:b:c", 3),
        ("v10:", 10),
        ("v9999999999999999999:", 9_999_999_999_999_999_999),
    ] {
        assert_eq!(
            parse(s.as_bytes()).err(),
            Some(AleError::UnsupportedVersion(v)),
            "{s:?}"
        );
    }
}

#[test]
fn a_version_of_more_than_19_digits_is_malformed_whatever_follows() {
    // decided on the first 21 characters, so that a long value's head decides it
    for tail in [":", ":x", "", "9999x"] {
        let s = format!("v{}{tail}", "9".repeat(20));
        assert_eq!(code(&s), "ALE_MALFORMED_ENVELOPE", "{s:?}");
    }
}

#[test]
fn exactly_four_parts() {
    assert_eq!(code(&format!("v1:{IV}:{TAG}")), "ALE_MALFORMED_ENVELOPE");
    assert_eq!(code(&format!("v1:{IV}")), "ALE_MALFORMED_ENVELOPE");
    assert_eq!(
        code(&format!("v1:{IV}:{TAG}:AAAA:AAAA")),
        "ALE_MALFORMED_ENVELOPE"
    );
    assert_eq!(code(&format!("v1:{IV}:{TAG}::")), "ALE_MALFORMED_ENVELOPE");
}

#[test]
fn iv_must_be_16_or_22_chars_and_tag_22() {
    assert_eq!(code(&format!("v1:{IV}:{TAG}:")), "ok");
    assert_eq!(code(&format!("v1:{IV16}:{TAG}:")), "ok");
    for iv in [
        "",
        &IV[..15],
        &format!("{IV}A"),
        &IV[..8],
        &format!("{IV}{IV}"),
        &IV16[..21],
        &format!("{IV16}A"),
        &IV16[..11],
        &format!("{IV16}{IV16}"),
        // 22 characters with stray bits in the last one
        "AAECAwQFBgcICQoLDA0ODx",
    ] {
        assert_eq!(
            code(&format!("v1:{iv}:{TAG}:")),
            "ALE_MALFORMED_ENVELOPE",
            "iv {iv:?}"
        );
    }
    for tag in [
        "",
        &TAG[..21],
        &format!("{TAG}A"),
        &TAG[..11],
        &format!("{TAG}{TAG}"),
    ] {
        assert_eq!(
            code(&format!("v1:{IV}:{tag}:")),
            "ALE_MALFORMED_ENVELOPE",
            "tag {tag:?}"
        );
    }
}

#[test]
fn padding_white_space_and_foreign_characters_are_rejected() {
    for ct in [
        "aGk=",
        "aGkhPw==",
        "aGk+",
        "aGk/",
        "aG k",
        "aGkhP w",
        "aGk\n",
        "aGkh\tPw",
        "aGké",
        "aG\u{0100}",
    ] {
        assert_eq!(
            code(&format!("v1:{IV}:{TAG}:{ct}")),
            "ALE_MALFORMED_ENVELOPE",
            "{ct:?}"
        );
    }
    assert_eq!(
        code(&format!("v1:AAECAwQFBgcICQo+:{TAG}:")),
        "ALE_MALFORMED_ENVELOPE"
    );
    assert_eq!(
        code(&format!("v1:AAECAwQFBgcI CQo:{TAG}:")),
        "ALE_MALFORMED_ENVELOPE"
    );
    assert_eq!(
        code(&format!("v1:{IV}:AAECAwQFBgcICQoLDA0OD=:")),
        "ALE_MALFORMED_ENVELOPE"
    );
}

#[test]
fn non_canonical_trailing_bits_are_rejected() {
    // "aGkhPw" is canonical; "aGkhPx" decodes to the same bytes with a stray bit.
    assert_eq!(code(&format!("v1:{IV}:{TAG}:aGkhPw")), "ok");
    assert_eq!(
        code(&format!("v1:{IV}:{TAG}:aGkhPx")),
        "ALE_MALFORMED_ENVELOPE"
    );
    assert_eq!(code(&format!("v1:{IV}:{TAG}:aGk")), "ok");
    assert_eq!(
        code(&format!("v1:{IV}:{TAG}:aGl")),
        "ALE_MALFORMED_ENVELOPE"
    );
    // the tag's last character carries 2 unused bits
    assert_eq!(
        code(&format!("v1:{IV}:AAECAwQFBgcICQoLDA0ODx:")),
        "ALE_MALFORMED_ENVELOPE"
    );
    // one character short of a byte
    assert_eq!(
        code(&format!("v1:{IV}:{TAG}:aGkhP")),
        "ALE_MALFORMED_ENVELOPE"
    );
}

#[test]
fn agrees_with_the_base64_crate() {
    use base64::engine::general_purpose::URL_SAFE_NO_PAD;
    use base64::Engine;
    let data: Vec<u8> = (0..=255u8).cycle().take(1200).collect();
    for n in 0..data.len() {
        let mut out = Vec::new();
        write(
            &mut out,
            None,
            &Iv::from_slice(&[7; 16]).expect("16"),
            &[9; 16],
            &data[..n],
        );
        let p = parse(&out[..]).expect("parses");
        assert_eq!(
            p.ciphertext_b64,
            URL_SAFE_NO_PAD.encode(&data[..n]).as_bytes()
        );
        let mut back = Vec::new();
        decode_ciphertext(p.ciphertext_b64, &mut back).expect("decodes");
        assert_eq!(back, &data[..n]);
        let wide: Vec<u16> = p.ciphertext_b64.iter().map(|&b| u16::from(b)).collect();
        decode_ciphertext(&wide[..], &mut back).expect("decodes from UTF-16");
        assert_eq!(back, &data[..n]);
    }
}
