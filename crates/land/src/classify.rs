//! The land use of a parcel from what stands on it: the AddressBase classes of the addresses
//! inside it, else the OS Open Map Local feature codes of its buildings. Terrace's own two tiers
//! (docs/METHODS.md "Land use of a parcel"): tier A is `residential`, `commercial`, `mixed`,
//! `community`, `transport`, `recreation` or `agriculture`; tier B is the order of the National
//! Land Use Database classification (v4.4) with its code (`U070 Residential`, ...). Nothing is
//! guessed: a parcel with no address and no building of a known function has no class.

/// Counts of a parcel's addresses by the first letter of their AddressBase class.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct AddressMix {
    pub residential: i32,
    pub commercial: i32,
}

impl AddressMix {
    /// Counts one address class: `R...` residential, `C...` commercial, `X` (dual use) both;
    /// parent shells (`P...`) and the other classes are neither.
    pub fn add(&mut self, class: Option<&str>) {
        match class.map(|c| c.as_bytes().first().copied()) {
            Some(Some(b'R')) => self.residential += 1,
            Some(Some(b'C')) => self.commercial += 1,
            Some(Some(b'X')) => {
                self.residential += 1;
                self.commercial += 1;
            }
            Some(_) | None => {}
        }
    }
}

/// A parcel's land use: (tier A, tier B, NLUD code), each None when nothing supports a class.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct LandUse {
    pub tier_a: Option<&'static str>,
    pub tier_b: Option<&'static str>,
    pub nlud_code: Option<&'static str>,
}

impl LandUse {
    fn of(tier_a: &'static str, (tier_b, nlud): (&'static str, &'static str)) -> LandUse {
        LandUse {
            tier_a: Some(tier_a),
            tier_b: Some(tier_b),
            nlud_code: Some(nlud),
        }
    }
}

const RESIDENTIAL: (&str, &str) = ("Residential", "U070");
const RETAIL: (&str, &str) = ("Retail", "U090");
const INDUSTRY: (&str, &str) = ("Industry and business", "U100");
const RECREATION: (&str, &str) = ("Recreation and leisure", "U040");
const COMMUNITY: (&str, &str) = ("Community services", "U080");
const TRANSPORT: (&str, &str) = ("Transport", "U050");
const UTILITIES: (&str, &str) = ("Utilities and infrastructure", "U060");
const AGRICULTURE: (&str, &str) = ("Agriculture and fisheries", "U010");

/// The NLUD order of a commercial AddressBase class (second letter).
fn commercial_order(class: &str) -> (&'static str, (&'static str, &'static str)) {
    match class.as_bytes().get(1) {
        Some(b'R') => ("commercial", RETAIL),
        Some(b'L' | b'H') => ("commercial", RECREATION),
        Some(b'C' | b'E' | b'M' | b'X') => ("community", COMMUNITY),
        Some(b'T') => ("transport", TRANSPORT),
        Some(b'U') => ("commercial", UTILITIES),
        Some(b'A') => ("agriculture", AGRICULTURE),
        Some(_) | None => ("commercial", INDUSTRY),
    }
}

/// The use an OS building feature code states (15014, a building of unstated use, states none).
fn building_order(code: i32) -> Option<(&'static str, (&'static str, &'static str))> {
    match code {
        15_016 => Some(("agriculture", AGRICULTURE)),
        15_018 | 15_021 | 15_022 => Some(("transport", TRANSPORT)),
        15_019 | 15_020 | 15_023 | 15_024 | 15_025 => Some(("community", COMMUNITY)),
        15_026 => Some(("commercial", RETAIL)),
        15_027 | 15_028 => Some(("recreation", RECREATION)),
        _ => None,
    }
}

/// Classifies a parcel from its addresses' classes and its buildings' feature codes.
/// Addresses decide when there are any residential or commercial ones (both: `mixed`, which has
/// no NLUD order); the most common commercial class picks the order. Else the buildings' most
/// common stated function decides; else there is no class.
pub fn classify(classes: &[&str], building_codes: &[i32]) -> LandUse {
    let mut mix = AddressMix::default();
    for c in classes {
        mix.add(Some(c));
    }
    match (mix.residential > 0, mix.commercial > 0) {
        (true, true) => LandUse {
            tier_a: Some("mixed"),
            tier_b: None,
            nlud_code: None,
        },
        (true, false) => LandUse::of("residential", RESIDENTIAL),
        (false, true) => {
            // The most common two-letter class (`CR` of `CR01` and `CR02`) picks the order.
            let class = most_common(
                classes
                    .iter()
                    .filter(|c| c.starts_with('C'))
                    .map(|c| c.get(..2).unwrap_or(c)),
            );
            let (a, b) = commercial_order(class.unwrap_or("C"));
            LandUse::of(a, b)
        }
        (false, false) => {
            let stated = most_common(building_codes.iter().filter_map(|&c| building_order(c)));
            stated.map_or_else(LandUse::default, |(a, b)| LandUse::of(a, b))
        }
    }
}

/// The most common item (the first seen among equals).
fn most_common<T: PartialEq + Copy>(items: impl Iterator<Item = T>) -> Option<T> {
    let mut counts: Vec<(T, usize)> = Vec::new();
    for i in items {
        match counts.iter_mut().find(|(x, _)| *x == i) {
            Some((_, n)) => *n += 1,
            None => counts.push((i, 1)),
        }
    }
    let best = counts.iter().map(|(_, n)| *n).max()?;
    counts.into_iter().find(|(_, n)| *n == best).map(|(x, _)| x)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn addresses_decide_then_buildings_then_nothing() {
        let r = classify(&["RD04", "RD04", "PP"], &[15_026]);
        assert_eq!(
            (r.tier_a, r.tier_b, r.nlud_code),
            (Some("residential"), Some("Residential"), Some("U070"))
        );
        let m = classify(&["RD04", "CR01"], &[]);
        assert_eq!((m.tier_a, m.nlud_code), (Some("mixed"), None));
        let c = classify(&["CO01", "CR01", "CR02"], &[]);
        assert_eq!((c.tier_a, c.nlud_code), (Some("commercial"), Some("U090")));
        let s = classify(&["CE01"], &[]);
        assert_eq!((s.tier_a, s.nlud_code), (Some("community"), Some("U080")));
        let b = classify(&["PP"], &[15_014, 15_019]);
        assert_eq!((b.tier_a, b.nlud_code), (Some("community"), Some("U080")));
        assert_eq!(classify(&[], &[15_014]), LandUse::default());
        assert_eq!(classify(&[], &[]), LandUse::default());
    }

    #[test]
    fn dual_use_counts_both_ways() {
        let mut mix = AddressMix::default();
        for c in [Some("X"), Some("RD02"), Some("PP"), None, Some("CR01")] {
            mix.add(c);
        }
        assert_eq!(
            mix,
            AddressMix {
                residential: 2,
                commercial: 2
            }
        );
    }
}
