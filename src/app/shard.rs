//! `--shard I/N`: N processes split a fleet of contexts between them.

/// `--shard I/N`: the contexts of shard I of N. A context's shard is the one of highest
/// score for its name (rendezvous, or highest-random-weight, hashing: Thaler and Ravishankar,
/// 1998): each context's shard depends on its name and N alone, so adding or removing a
/// context moves no other one, and the shards of N processes are disjoint and cover the
/// fleet. The hash is fixed (FNV-1a, then splitmix64's finalizer), so every process and
/// every version agree.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Shard {
    index: u32,
    of: u32,
}

impl Shard {
    /// Shard `index` of `of` (`None` unless 0 ≤ index < of).
    pub fn new(index: u32, of: u32) -> Option<Shard> {
        (index < of).then_some(Shard { index, of })
    }

    /// Whether `context` belongs to this shard.
    pub fn keeps(&self, context: &str) -> bool {
        shard_of(context, self.of) == self.index
    }
}

impl std::fmt::Display for Shard {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}/{}", self.index, self.of)
    }
}

/// The shard of `context` among `of` (`of` ≥ 1).
pub fn shard_of(context: &str, of: u32) -> u32 {
    (0..of.max(1))
        .max_by_key(|&j| score(context, j))
        .unwrap_or(0)
}

/// `context`'s weight for shard `j`.
fn score(context: &str, j: u32) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for b in context.bytes().chain(j.to_le_bytes()) {
        h ^= u64::from(b);
        h = h.wrapping_mul(0x0000_0100_0000_01b3);
    }
    // splitmix64's finalizer: FNV's low bits alone mix poorly.
    h = (h ^ (h >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    h = (h ^ (h >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    h ^ (h >> 31)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// 1,000 contexts in N shards: disjoint, their union the fleet, none empty nor far from
    /// 1/N; a context added moves no other, and a shard added takes ~1/(N+1) of them from
    /// the others and moves nothing else (at most ~2/N is what the flag promises).
    #[test]
    fn shards_split_a_fleet_and_stay_put_when_it_grows() {
        let names: Vec<String> = (0..1000).map(|i| format!("prod-{i}")).collect();
        for of in [1u32, 2, 3, 7, 16] {
            let shards: Vec<Shard> = (0..of).filter_map(|i| Shard::new(i, of)).collect();
            let mut seen = std::collections::BTreeSet::new();
            for s in &shards {
                let mine: Vec<&String> = names.iter().filter(|n| s.keeps(n)).collect();
                let expected = 1000 / of as usize;
                assert!(
                    mine.len() > expected / 2 && mine.len() < expected * 2,
                    "shard {s}: {} of 1000",
                    mine.len()
                );
                for n in mine {
                    assert!(seen.insert(n.clone()), "{n} in two shards");
                }
            }
            assert_eq!(seen.len(), names.len(), "every context in a shard");
            let before: Vec<u32> = names.iter().map(|n| shard_of(n, of)).collect();
            let mut grown = names.clone();
            grown.push("prod-new".to_owned());
            let moved = grown
                .iter()
                .zip(&before)
                .filter(|(n, b)| shard_of(n, of) != **b)
                .count();
            assert!(
                moved <= 2 * names.len() / of as usize,
                "{moved} moved of {of}"
            );
            assert_eq!(moved, 0, "rendezvous hashing moves no other context");
            // One process more: only contexts that go to the new shard move, ~1/(N+1).
            let more: Vec<u32> = names.iter().map(|n| shard_of(n, of + 1)).collect();
            let moved: Vec<u32> = (before.iter().zip(&more))
                .filter(|(b, m)| b != m)
                .map(|(_, m)| *m)
                .collect();
            assert!(moved.iter().all(|m| *m == of), "{moved:?}");
            assert!(
                moved.len() <= 2 * names.len() / (of as usize + 1),
                "{} of 1000 moved from {of} shards to {}",
                moved.len(),
                of + 1
            );
        }
        assert_eq!(Shard::new(3, 3), None);
        assert_eq!(Shard::new(0, 0), None);
    }
}
