//! What a value under a tenant key costs beside one under the static ring,
//! at 256 B, piece by piece: v1 with a 16-byte IV (the static ring), v1
//! with a 12-byte IV, v2 (a keyed ring: the key id in the envelope and the
//! AAD), and v2 through a ring of 10,000 tenants.
//!
//! Criterion (`benches/pieces.rs`) times one contender after another; on a
//! host whose speed drifts within minutes that makes a difference of a few
//! percent unreadable. This times them in interleaved rounds and reports
//! the median ratio of each to v1 with a 12-byte IV, with its quartiles.
//!
//!     cargo run --release -p ale-core --example tenant_overhead [seal|open]
use std::hint::black_box;
use std::sync::Arc;
use std::time::Instant;

use ale_core::iv::IvLength;
use ale_core::keys::{RingOptions, Secret};
use ale_core::secret::SecretValue;
use ale_core::{Context, KeyRing, Result, Rings};

const ROUNDS: usize = 300;
const CALLS: u32 = 2_000;

fn ring(iv_length: IvLength, id: Option<[u8; 16]>) -> Result<KeyRing> {
    let secret = [9u8; 32];
    let ring = KeyRing::new(
        [Secret {
            label: "tenant".into(),
            value: SecretValue::Bytes(&secret),
        }],
        RingOptions {
            iv_length,
            ..RingOptions::default()
        },
    )?;
    match id {
        Some(id) => ring.with_key_ids(&[id]),
        None => Ok(ring),
    }
}

#[allow(
    clippy::cast_possible_truncation,
    clippy::cast_sign_loss,
    clippy::cast_precision_loss
)]
fn quantile(sorted: &[f64], q: f64) -> f64 {
    let last = sorted.len() - 1;
    sorted[((q * last as f64).round() as usize).min(last)]
}

fn main() -> Result<()> {
    let open = std::env::args().nth(1).as_deref() != Some("seal");
    let ctx = Context::new("tenant-bench", "content_nodes", "data")?;
    let keyed = Arc::new(ring(IvLength::Bits96, Some([5; 16]))?);
    let tenants = Rings::of_tenants(keyed.options());
    for i in 0..10_000 {
        tenants
            .tenants()?
            .set(&format!("tenant-{i}"), Arc::clone(&keyed))?;
    }
    tenants.tenants()?.set("tenant-bench", Arc::clone(&keyed))?;
    let static_ring = Rings::one(ring(IvLength::Bits128, None)?);
    let v1_12 = Rings::one(ring(IvLength::Bits96, None)?);
    let keyed = Rings::one(ring(IvLength::Bits96, Some([5; 16]))?);
    let contenders: [(&str, &Rings); 4] = [
        ("v1, 16-byte IV (the static ring)", &static_ring),
        ("v1, 12-byte IV", &v1_12),
        ("v2, 12-byte IV (a keyed ring)", &keyed),
        ("v2 through a ring of 10,000 tenants", &tenants),
    ];
    let (mut aad, mut out) = (Vec::new(), Vec::new());
    let mut envelopes = Vec::new();
    for (_, r) in contenders {
        let mut plaintext = [b'a'; 256];
        let mut envelope = Vec::new();
        r.seal(&mut plaintext, &ctx, &mut aad, &mut envelope)?;
        envelopes.push(envelope);
    }
    let mut times = vec![Vec::with_capacity(ROUNDS); contenders.len()];
    for round in 0..ROUNDS {
        // Each round starts with another contender, so none always runs first.
        for k in (0..contenders.len()).map(|i| (i + round) % contenders.len()) {
            let r = contenders[k].1;
            let start = Instant::now();
            for _ in 0..CALLS {
                if open {
                    black_box(r.open(black_box(&envelopes[k][..]), &ctx, &mut aad, &mut out)?);
                } else {
                    let mut plaintext = [b'a'; 256];
                    black_box(r.seal(black_box(&mut plaintext), &ctx, &mut aad, &mut out)?);
                }
            }
            times[k].push(start.elapsed().as_nanos() as f64 / f64::from(CALLS));
        }
    }
    println!(
        "256 B {}, {ROUNDS} interleaved rounds of {CALLS} calls",
        if open { "open" } else { "seal" }
    );
    for (k, (name, _)) in contenders.iter().enumerate() {
        let mut ratios: Vec<f64> = times[k]
            .iter()
            .zip(&times[1])
            .map(|(t, base)| t / base)
            .collect();
        ratios.sort_by(f64::total_cmp);
        let mut ns = times[k].clone();
        ns.sort_by(f64::total_cmp);
        println!(
            "{name:38} {:6.0} ns   × v1 12-byte IV: {:.3} [{:.3}, {:.3}]",
            quantile(&ns, 0.5),
            quantile(&ratios, 0.5),
            quantile(&ratios, 0.25),
            quantile(&ratios, 0.75),
        );
    }
    Ok(())
}
