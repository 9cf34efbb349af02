//! Where the time of one encryption goes, without Node: AEAD, base64, IV,
//! UTF-16 → UTF-8 conversion, and the whole seal/open. `cargo bench -p ale-core`.

use ale_core::aead::{Aead, AeadKey};
use ale_core::envelope;
use ale_core::iv::{Iv, IvLength};
use ale_core::keys::{RingOptions, Secret};
use ale_core::secret::SecretValue;
use ale_core::{Context, KeyRing};
use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};
use std::hint::black_box;

const SIZES: [usize; 3] = [256, 4096, 65536];

fn pieces(c: &mut Criterion) {
    let key = AeadKey::new(&[7; 32]);
    let ring = KeyRing::from_secrets(
        &["bench-secret-0123456789-abcdefghijkl"],
        RingOptions::default(),
    )
    .expect("ring");
    let iv = Iv::from_slice(&[1; 16]).expect("16 bytes");
    let ctx = Context::new("tenant-bench", "content_nodes", "data").expect("ctx");
    for size in SIZES {
        let data: Vec<u8> = (0..size).map(|i| b"the quick brown fox "[i % 20]).collect();
        let mut g = c.benchmark_group(format!("{size} B"));
        g.throughput(Throughput::Bytes(size as u64));
        let mut buf = data.clone();
        g.bench_function("aead seal", |b| {
            b.iter(|| key.seal_in_place(&iv, b"t:c:f", black_box(&mut buf)))
        });
        #[cfg(feature = "rustcrypto")]
        {
            let pure = ale_core::aead::rustcrypto_backend::Key::new(&[7; 32]);
            g.bench_function("aead seal (RustCrypto aes-gcm, for comparison)", |b| {
                b.iter(|| pure.seal_in_place(&iv, b"t:c:f", black_box(&mut buf)))
            });
        }
        {
            use base64::Engine;
            let engine = base64::engine::general_purpose::URL_SAFE_NO_PAD;
            let mut text = String::new();
            g.bench_function("base64 crate encode (for comparison)", |b| {
                b.iter(|| {
                    text.clear();
                    engine.encode_string(black_box(&data), &mut text)
                })
            });
            let mut bytes = Vec::new();
            g.bench_function("base64 crate decode (for comparison)", |b| {
                b.iter(|| {
                    bytes.clear();
                    engine.decode_vec(black_box(&text), &mut bytes)
                })
            });
        }
        let mut out = Vec::new();
        g.bench_function("base64 encode (envelope write)", |b| {
            b.iter(|| envelope::write(&mut out, None, &iv, &[2; 16], black_box(&data)))
        });
        // Set-up outside the timed closures, which a name filter may skip.
        let mut env = Vec::new();
        envelope::write(&mut env, None, &iv, &[2; 16], &data);
        let parts = envelope::parse(&env[..]).expect("parse");
        let mut decoded = Vec::new();
        g.bench_function("envelope parse (IV and tag decoded)", |b| {
            b.iter(|| envelope::parse(black_box(&env[..])).map(|p| p.tag[0]))
        });
        g.bench_function("base64 decode", |b| {
            b.iter(|| envelope::decode_ciphertext(black_box(parts.ciphertext_b64), &mut decoded))
        });
        let wide: Vec<u16> = data.iter().map(|&b| u16::from(b)).collect();
        let mut utf8 = vec![0u8; size * 3];
        g.bench_function(BenchmarkId::new("utf16 → utf8", "simdutf"), |b| {
            // SAFETY: `utf8` has room for 3 bytes per unit.
            b.iter(|| unsafe {
                simdutf::convert_utf16le_to_utf8(
                    black_box(wide.as_ptr()),
                    wide.len(),
                    utf8.as_mut_ptr(),
                )
            })
        });
        let (mut aad, mut sealed) = (Vec::new(), Vec::new());
        g.bench_function("seal_into (IV + AEAD + envelope)", |b| {
            b.iter(|| {
                buf.copy_from_slice(&data);
                ring.seal_into(black_box(&mut buf), &ctx, &mut aad, &mut sealed)
            })
        });
        let mut env = data.clone();
        ring.seal_into(&mut env, &ctx, &mut aad, &mut sealed)
            .expect("seal");
        let env = sealed.clone();
        let mut opened = Vec::new();
        g.bench_function("open_into (parse + base64 + AEAD)", |b| {
            b.iter(|| ring.open_into(black_box(&env[..]), &ctx, &mut aad, &mut opened))
        });
        // v2: a ring whose key has an id (the tenant keys' envelopes), 12-byte IVs.
        let secret = [9u8; 32];
        let keyed = KeyRing::new(
            [Secret {
                label: "tenant".into(),
                value: SecretValue::Bytes(&secret),
            }],
            RingOptions {
                iv_length: IvLength::Bits96,
                ..RingOptions::default()
            },
        )
        .and_then(|r| r.with_key_ids(&[[5; 16]]))
        .expect("keyed ring");
        // The same key and IV length without an id: what v2 itself costs.
        let unkeyed = KeyRing::new(
            [Secret {
                label: "tenant".into(),
                value: SecretValue::Bytes(&secret),
            }],
            keyed.options(),
        )
        .expect("ring");
        buf.copy_from_slice(&data);
        unkeyed
            .seal_into(&mut buf, &ctx, &mut aad, &mut sealed)
            .expect("seal");
        let env1 = sealed.clone();
        g.bench_function("open_into, v1, 12-byte IV (for comparison)", |b| {
            b.iter(|| unkeyed.open_into(black_box(&env1[..]), &ctx, &mut aad, &mut opened))
        });
        g.bench_function("seal_into, v2 (keyed ring, 12-byte IV)", |b| {
            b.iter(|| {
                buf.copy_from_slice(&data);
                keyed.seal_into(black_box(&mut buf), &ctx, &mut aad, &mut sealed)
            })
        });
        buf.copy_from_slice(&data);
        keyed
            .seal_into(&mut buf, &ctx, &mut aad, &mut sealed)
            .expect("seal");
        let env2 = sealed.clone();
        g.bench_function("open_into, v2 (keyed ring, 12-byte IV)", |b| {
            b.iter(|| keyed.open_into(black_box(&env2[..]), &ctx, &mut aad, &mut opened))
        });
        // The same ring as one tenant among 10,000 of a ring of tenants.
        let keyed = std::sync::Arc::new(keyed);
        let tenants = ale_core::Rings::of_tenants(keyed.options());
        let map = tenants.tenants().expect("a ring of tenants");
        for i in 0..10_000 {
            map.set(&format!("tenant-{i}"), std::sync::Arc::clone(&keyed))
                .expect("set");
        }
        map.set("tenant-bench", std::sync::Arc::clone(&keyed))
            .expect("set");
        g.bench_function("seal_into, v2, ring of 10,000 tenants", |b| {
            b.iter(|| {
                buf.copy_from_slice(&data);
                tenants.seal(black_box(&mut buf), &ctx, &mut aad, &mut sealed)
            })
        });
        g.bench_function("open_into, v2, ring of 10,000 tenants", |b| {
            b.iter(|| tenants.open(black_box(&env2[..]), &ctx, &mut aad, &mut opened))
        });
        g.finish();
    }
    // XAES-256-GCM derives a fresh AES-256-GCM key for every value: at least
    // this set-up (key schedule and GHASH table) per seal and per open, on
    // top of two AES blocks for the derivation (docs/format.md, "v2").
    c.bench_function("aead key set-up (a fresh AES-256-GCM key)", |b| {
        b.iter(|| AeadKey::new(black_box(&[7; 32])))
    });
    // The ring of tenants looks its tenant up on every call: the map's hasher.
    {
        let names: Vec<String> = (0..10_000).map(|i| format!("tenant-{i}")).collect();
        let std_map: std::collections::HashMap<Box<str>, usize> = names
            .iter()
            .enumerate()
            .map(|(i, n)| (n.as_str().into(), i))
            .collect();
        let fold_map: foldhash::HashMap<Box<str>, usize> = names
            .iter()
            .enumerate()
            .map(|(i, n)| (n.as_str().into(), i))
            .collect();
        c.bench_function("tenant lookup among 10,000 (std SipHash-1-3)", |b| {
            b.iter(|| std_map.get(black_box("tenant-4242")))
        });
        c.bench_function("tenant lookup among 10,000 (foldhash)", |b| {
            b.iter(|| fold_map.get(black_box("tenant-4242")))
        });
    }
    c.bench_function("iv (pooled)", |b| b.iter(|| Iv::random(IvLength::Bits128)));
    c.bench_function("iv (one getrandom syscall, for comparison)", |b| {
        b.iter(|| {
            let mut iv = [0u8; 16];
            getrandom::fill(&mut iv).map(|()| iv)
        })
    });
}

/// Search tokens of a 256 B value (search/index.rs), ASCII and multi-script:
/// the per-value cost a searchable column adds to a write.
fn search(c: &mut Criterion) {
    use ale_core::search::index::{value_tokens, Indexes};
    use ale_core::search::normalize::Folding;
    use ale_core::search::tokens::ColumnTokens;
    let ctx = ale_core::Context::new("tenant-bench", "content_nodes", "name").expect("valid");
    let column = ColumnTokens::new(&[5; 32], &ctx);
    let ascii = "Jane Doe <jane.doe@example.com>, Senior Editor at Example Media; writes about privacy, databases and the web. ".repeat(3);
    let mixed =
        "Jürgen Müller (Lüdenscheid) — Иван Петров, 東京都渋谷区 1-2-3; İstanbul'da çalışıyor. "
            .repeat(3);
    let (ascii, mixed) = (
        &ascii[..256],
        &mixed[..mixed
            .char_indices()
            .nth(120)
            .map_or(mixed.len(), |(i, _)| i)],
    );
    let lorem = lorem_4k();
    let (mut scratch, mut out) = (String::new(), Vec::new());
    let mut g = c.benchmark_group("search tokens");
    // The gated write's index: a 4 KB text's words (bench/search.mjs).
    g.bench_function(format!("words, 4 KB lorem ({} bytes)", lorem.len()), |b| {
        let words = Indexes {
            contains: false,
            prefix: false,
            words: true,
        };
        b.iter(|| {
            value_tokens(
                &column,
                black_box(&lorem),
                words,
                Folding::default(),
                &mut scratch,
                &mut out,
            )
        })
    });
    for (name, text) in [("256 B ASCII", ascii), ("multi-script", mixed)] {
        for (what, indexes) in [
            (
                "contains",
                Indexes {
                    contains: true,
                    prefix: false,
                    words: false,
                },
            ),
            (
                "contains+prefix+words",
                Indexes {
                    contains: true,
                    prefix: true,
                    words: true,
                },
            ),
            (
                "words",
                Indexes {
                    contains: false,
                    prefix: false,
                    words: true,
                },
            ),
        ] {
            g.bench_function(format!("{what}, {name} ({} bytes)", text.len()), |b| {
                b.iter(|| {
                    value_tokens(
                        &column,
                        black_box(text),
                        indexes,
                        Folding::default(),
                        &mut scratch,
                        &mut out,
                    )
                })
            });
        }
    }
    g.bench_function(
        format!("normalize, multi-script ({} bytes)", mixed.len()),
        |b| {
            b.iter(|| {
                ale_core::search::normalize::normalize_into(
                    black_box(mixed),
                    Folding::default(),
                    &mut scratch,
                )
            })
        },
    );
    // the tokens of the ASCII value's trigrams, as value_tokens sorts them
    let mut tokens = Vec::new();
    column.tokens_into(
        ale_core::search::tokens::Kind::Contains,
        ale_core::search::grams::trigrams(ascii).map(str::as_bytes),
        &mut tokens,
    );
    g.bench_function(format!("sort_distinct, {} tokens", tokens.len()), |b| {
        b.iter_batched_ref(
            || tokens.clone(),
            ale_core::search::sorting::sort_distinct,
            criterion::BatchSize::SmallInput,
        )
    });
    // the 4 KB text's word tokens, repeats included, as the gated write sorts them
    let mut word_tokens = Vec::new();
    column.tokens_into(
        ale_core::search::tokens::Kind::Word,
        ale_core::search::grams::words(&lorem.to_ascii_lowercase()).map(str::as_bytes),
        &mut word_tokens,
    );
    g.bench_function(
        format!("sort_distinct, 4 KB words ({} tokens)", word_tokens.len()),
        |b| {
            b.iter_batched_ref(
                || word_tokens.clone(),
                ale_core::search::sorting::sort_distinct,
                criterion::BatchSize::SmallInput,
            )
        },
    );
    g.bench_function(
        format!("sort_unstable and dedup, {} tokens", tokens.len()),
        |b| {
            b.iter_batched_ref(
                || tokens.clone(),
                |t| {
                    t.sort_unstable();
                    t.dedup();
                },
                criterion::BatchSize::SmallInput,
            )
        },
    );
    // the stored text FTS5 and FULLTEXT index, for the 4 KB words' count of tokens
    let many: Vec<u64> = (0..418u64)
        .map(|i| i.wrapping_mul(0x9E37_79B9_7F4A_7C15))
        .collect();
    let mut text = Vec::new();
    g.bench_function(format!("token text (words), {} tokens", many.len()), |b| {
        b.iter(|| {
            text.clear();
            ale_core::search::words::write_words(black_box(&many), &mut text);
        })
    });
    g.bench_function("column key (HKDF + AES key schedule + subkeys)", |b| {
        b.iter(|| ColumnTokens::new(black_box(&[5; 32]), &ctx))
    });
    g.finish();
}

/// About 4 KB of lorem ipsum, capitalized sentences of lorem words (some of
/// them Faker's) drawn by a fixed LCG: the shape of bench/search.mjs's texts.
fn lorem_4k() -> String {
    const WORDS: &[&str] = &[
        "lorem",
        "ipsum",
        "dolor",
        "sit",
        "amet",
        "consectetur",
        "adipiscing",
        "elit",
        "sed",
        "do",
        "eiusmod",
        "tempor",
        "incididunt",
        "ut",
        "labore",
        "et",
        "dolore",
        "magna",
        "aliqua",
        "enim",
        "ad",
        "minim",
        "veniam",
        "quis",
        "nostrud",
        "exercitation",
        "ullamco",
        "laboris",
        "nisi",
        "aliquip",
        "ex",
        "ea",
        "commodo",
        "consequat",
        "duis",
        "aute",
        "irure",
        "in",
        "reprehenderit",
        "voluptate",
        "velit",
        "esse",
        "cillum",
        "fugiat",
        "nulla",
        "pariatur",
        "excepteur",
        "sint",
        "occaecat",
        "cupidatat",
        "non",
        "proident",
        "sunt",
        "culpa",
        "qui",
        "officia",
        "deserunt",
        "mollit",
        "anim",
        "id",
        "est",
        "laborum",
        "vicinus",
        "tergo",
        "auditor",
        "theca",
        "caste",
        "vobis",
        "tabgo",
        "carbo",
        "curso",
        "suscipio",
        "adduco",
        "combibo",
        "demoror",
        "bellicus",
        "arguo",
    ];
    let (mut text, mut state, mut start) = (String::new(), 7u64, true);
    while text.len() < 4096 {
        state = state
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        let word = WORDS[(state >> 33) as usize % WORDS.len()];
        if start {
            text.push_str(&word[..1].to_uppercase());
            text.push_str(&word[1..]);
        } else {
            text.push_str(word);
        }
        start = (state >> 20) % 9 == 0;
        text.push_str(if start { ". " } else { " " });
    }
    text.truncate(4096);
    text
}

criterion_group!(benches, pieces, search);
criterion_main!(benches);
