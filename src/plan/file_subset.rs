//! vdbench's `totalsize=` subset of a tree's files (`FileAnchor.createUsedList`):
//! files drawn at random — `java.util.Random` with the fixed seed 0, file
//! ⌊nextDouble × n⌋, a file drawn twice passed over — until the drawn files hold
//! the requested bytes, then kept in the tree's order. The draw is vdbench's own
//! generator, so the same tree gives the same files here as there.

/// `java.util.Random`: the 48-bit linear congruential generator Java specifies.
struct JavaRandom(u64);

impl JavaRandom {
    const MULT: u64 = 0x5_DEEC_E66D;
    const MASK: u64 = (1 << 48) - 1;

    fn new(seed: u64) -> Self {
        JavaRandom((seed ^ Self::MULT) & Self::MASK)
    }

    fn next(&mut self, bits: u32) -> u64 {
        self.0 = (self.0.wrapping_mul(Self::MULT).wrapping_add(0xB)) & Self::MASK;
        self.0 >> (48 - bits)
    }

    fn next_double(&mut self) -> f64 {
        ((self.next(26) << 27) + self.next(27)) as f64 * (1.0 / (1u64 << 53) as f64)
    }
}

/// The files (indexes, in order) vdbench uses of `lens.len()` files of these
/// lengths under `totalsize=total_bytes`; `Err` when the tree holds less.
pub fn subset(lens: &[u64], total_bytes: u64) -> Result<Vec<u64>, String> {
    let all: u64 = lens.iter().fold(0u64, |t, &l| t.saturating_add(l));
    if total_bytes > all {
        return Err(format!(
            "{total_bytes} bytes asked of a tree of {all} bytes (vdbench refuses a \
             totalsize larger than its fsd)"
        ));
    }
    let n = lens.len();
    let mut picked = vec![false; n];
    let (mut bytes, mut rng) = (0u64, JavaRandom::new(0));
    while bytes < total_bytes {
        let i = ((rng.next_double() * n as f64) as usize).min(n - 1);
        if !picked[i] {
            picked[i] = true;
            bytes += lens[i];
        }
    }
    Ok((0..n as u64).filter(|&i| picked[i as usize]).collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    // Java's own: new Random(0).nextDouble() is 0.730967787376657, then
    // 0.24053641567148587 (the JDK's published generator).
    #[test]
    fn draws_what_java_util_random_draws() {
        let mut r = JavaRandom::new(0);
        assert_eq!(r.next_double(), 0.730967787376657);
        assert_eq!(r.next_double(), 0.24053641567148587);
    }

    #[test]
    fn picks_distinct_files_until_the_bytes_are_held() {
        let s = subset(&[10; 100], 250).unwrap();
        assert_eq!(s.len(), 25);
        assert!(s.windows(2).all(|w| w[0] < w[1]), "in tree order: {s:?}");
        // 0.7309… × 100 and 0.2405… × 100: vdbench's first two files.
        assert!(s.contains(&73) && s.contains(&24));
        assert_eq!(subset(&[10; 4], 40).unwrap(), [0, 1, 2, 3]);
        assert!(subset(&[10; 4], 41).is_err());
    }
}
