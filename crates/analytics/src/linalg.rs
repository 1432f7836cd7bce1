//! Weighted least squares through the normal equations, solved by a Cholesky factorisation that
//! sets aside aliased (linearly dependent) columns.

/// The accumulated normal equations `X'WX b = X'Wy` of a weighted least-squares problem with `p`
/// columns. Rows are added sparsely as `(column, value)` pairs.
#[derive(Debug, Clone)]
pub(crate) struct NormalEquations {
    p: usize,
    xtx: Vec<f64>,
    xty: Vec<f64>,
    n: usize,
}

/// The solution of [`NormalEquations`]: coefficients (0 for aliased columns) and, when asked
/// for, the diagonal of `(X'WX)^-1` restricted to the columns that were not aliased (0 for
/// aliased columns).
#[derive(Debug, Clone)]
pub(crate) struct Solution {
    pub beta: Vec<f64>,
    pub aliased: Vec<bool>,
    pub inverse_diagonal: Vec<f64>,
}

impl Solution {
    /// Element (i, i) of the inverse (0 unless the solve was asked for the diagonal).
    pub fn inv_diag(&self, i: usize) -> f64 {
        self.inverse_diagonal[i]
    }

    pub fn rank(&self) -> usize {
        self.aliased.iter().filter(|a| !**a).count()
    }
}

/// A column is aliased when its Cholesky pivot falls below this share of its own diagonal.
const ALIAS_TOLERANCE: f64 = 1e-9;

impl NormalEquations {
    pub fn new(p: usize) -> NormalEquations {
        NormalEquations {
            p,
            xtx: vec![0.0; p * p],
            xty: vec![0.0; p],
            n: 0,
        }
    }

    /// Adds one observation `y` with weight `w` whose design row is the sparse `row`.
    pub fn add(&mut self, row: &[(usize, f64)], y: f64, w: f64) {
        for &(i, xi) in row {
            self.xty[i] += w * xi * y;
            for &(j, xj) in row {
                self.xtx[i * self.p + j] += w * xi * xj;
            }
        }
        self.n += 1;
    }

    /// Adds one observation whose design row is the dense `row` (its zeros skipped).
    pub fn add_dense(&mut self, row: &[f64], y: f64, w: f64) {
        let sparse: Vec<(usize, f64)> = row
            .iter()
            .enumerate()
            .filter(|(_, x)| **x != 0.0)
            .map(|(i, x)| (i, *x))
            .collect();
        self.add(&sparse, y, w);
    }

    /// Solves for the coefficients, and for the diagonal of the inverse when
    /// `with_inverse_diagonal` (needed for standard errors only).
    pub fn solve(&self, with_inverse_diagonal: bool) -> Solution {
        let p = self.p;
        // Cholesky A = L L', column by column; aliased columns get a unit pivot and are cut off.
        let mut l = vec![0.0; p * p];
        let mut aliased = vec![false; p];
        for j in 0..p {
            let ajj = self.xtx[j * p + j];
            let mut d = ajj;
            for k in 0..j {
                d -= l[j * p + k] * l[j * p + k];
            }
            if ajj <= 0.0 || d <= ALIAS_TOLERANCE * ajj {
                aliased[j] = true;
                l[j * p + j] = 1.0;
                continue;
            }
            let djj = d.sqrt();
            l[j * p + j] = djj;
            for i in (j + 1)..p {
                let mut s = self.xtx[i * p + j];
                for k in 0..j {
                    s -= l[i * p + k] * l[j * p + k];
                }
                l[i * p + j] = s / djj;
            }
        }
        // Aliased columns take no part: zero their off-diagonal entries.
        for j in 0..p {
            if aliased[j] {
                for i in 0..p {
                    if i != j {
                        l[i * p + j] = 0.0;
                        l[j * p + i] = 0.0;
                    }
                }
            }
        }
        let solve = |rhs: &[f64]| -> Vec<f64> {
            let mut z = rhs.to_vec();
            for i in 0..p {
                let mut s = z[i];
                for k in 0..i {
                    s -= l[i * p + k] * z[k];
                }
                z[i] = s / l[i * p + i];
            }
            for i in (0..p).rev() {
                let mut s = z[i];
                for k in (i + 1)..p {
                    s -= l[k * p + i] * z[k];
                }
                z[i] = s / l[i * p + i];
            }
            z
        };
        let mut rhs = self.xty.clone();
        for (r, a) in rhs.iter_mut().zip(&aliased) {
            if *a {
                *r = 0.0;
            }
        }
        let beta = solve(&rhs);
        let mut inverse_diagonal = vec![0.0; p];
        if with_inverse_diagonal {
            // M = L^-1 (lower triangular), column by column; diag(A^-1)_j = sum_k M[k][j]^2.
            let mut m = vec![0.0; p * p];
            for j in 0..p {
                if aliased[j] {
                    continue;
                }
                m[j * p + j] = 1.0 / l[j * p + j];
                for i in (j + 1)..p {
                    if aliased[i] {
                        continue;
                    }
                    let mut s = 0.0;
                    for k in j..i {
                        s -= l[i * p + k] * m[k * p + j];
                    }
                    m[i * p + j] = s / l[i * p + i];
                }
                inverse_diagonal[j] = (j..p).map(|k| m[k * p + j] * m[k * p + j]).sum();
            }
        }
        Solution {
            beta,
            aliased,
            inverse_diagonal,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn solves_a_small_regression_and_flags_a_duplicate_column() {
        // y = 1 + 2x exactly; column 2 duplicates column 1.
        let mut ne = NormalEquations::new(3);
        for x in [0.0, 1.0, 2.0, 3.0] {
            ne.add(&[(0, 1.0), (1, x), (2, x)], 1.0 + 2.0 * x, 1.0);
        }
        let s = ne.solve(true);
        assert!((s.beta[0] - 1.0).abs() < 1e-9);
        assert!((s.beta[1] - 2.0).abs() < 1e-9);
        assert!(s.aliased[2]);
        assert_eq!(s.rank(), 2);
        // (X'X)^-1 for x = 0..3: [[0.7, -0.3], [-0.3, 0.2]].
        assert!((s.inv_diag(0) - 0.7).abs() < 1e-9);
        assert!((s.inv_diag(1) - 0.2).abs() < 1e-9);
        assert_eq!(s.inv_diag(2), 0.0);
    }
}

#[cfg(test)]
mod more_tests {
    use super::*;

    #[test]
    fn aliased_middle_columns_leave_the_rest_exact() {
        // y = 2 + 3 a - 1 b + 0.5 c, with zero columns at 1 and 4.
        let mut ne = NormalEquations::new(6);
        let mut s: u64 = 7;
        let mut u = || {
            s = s
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            (s >> 11) as f64 / (1u64 << 53) as f64
        };
        for _ in 0..50 {
            let (a, b, c) = (u(), u(), u());
            ne.add(
                &[(0, 1.0), (2, a), (3, b), (5, c)],
                2.0 + 3.0 * a - b + 0.5 * c,
                1.0,
            );
        }
        let sol = ne.solve(true);
        assert_eq!(sol.aliased, vec![false, true, false, false, true, false]);
        for (j, want) in [(0, 2.0), (2, 3.0), (3, -1.0), (5, 0.5)] {
            assert!((sol.beta[j] - want).abs() < 1e-8, "{j}: {}", sol.beta[j]);
        }
    }
}
