//! Proprietor names compared for look-up. The registers' identifiers (title numbers, company
//! numbers, name keys) are `terrace_core::registers`', re-exported here.

pub use terrace_core::registers::{name_key, normalise_company_number, parse_title_number};

/// The edit distance between two strings (insertions, deletions, substitutions and swaps of two
/// neighbouring characters), or `None` once it exceeds `max`.
pub fn edit_distance(a: &str, b: &str, max: usize) -> Option<usize> {
    let a: Vec<char> = a.chars().collect();
    let b: Vec<char> = b.chars().collect();
    if a.len().abs_diff(b.len()) > max {
        return None;
    }
    let w = b.len() + 1;
    let mut d = vec![0usize; (a.len() + 1) * w];
    for (j, cell) in d.iter_mut().enumerate().take(w) {
        *cell = j;
    }
    for i in 1..=a.len() {
        d[i * w] = i;
        let mut row_min = i;
        for j in 1..=b.len() {
            let cost = usize::from(a[i - 1] != b[j - 1]);
            let mut v = (d[(i - 1) * w + j] + 1)
                .min(d[i * w + j - 1] + 1)
                .min(d[(i - 1) * w + j - 1] + cost);
            if i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] {
                v = v.min(d[(i - 2) * w + j - 2] + 1);
            }
            d[i * w + j] = v;
            row_min = row_min.min(v);
        }
        if row_min > max {
            return None;
        }
    }
    let v = d[a.len() * w + b.len()];
    (v <= max).then_some(v)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn edit_distances() {
        assert_eq!(edit_distance("ACME", "ACME", 2), Some(0));
        assert_eq!(edit_distance("ACME", "ACNE", 2), Some(1));
        assert_eq!(edit_distance("ACME", "CAME", 2), Some(1));
        assert_eq!(edit_distance("ACME", "AXXXE", 2), None);
        assert_eq!(edit_distance("ACME LTD", "ACME", 2), None);
    }
}
