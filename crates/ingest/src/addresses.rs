//! Splitting free-text address lines (as EPC assessors write them) into SAON, PAON and street.

/// The structured parts of an address written as lines.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Parts {
    pub saon: Option<String>,
    pub paon: Option<String>,
    pub street: Option<String>,
    pub locality: Option<String>,
    pub town: Option<String>,
}

const UNIT_WORDS: &[&str] = &[
    "FLAT",
    "APARTMENT",
    "APT",
    "UNIT",
    "STUDIO",
    "MAISONETTE",
    "ROOM",
    "SUITE",
];

fn is_number_token(t: &str) -> bool {
    let t = t.trim_end_matches(',');
    let first = t.chars().next().is_some_and(|c| c.is_ascii_digit());
    first
        && t.chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '/')
}

fn clean(s: &str) -> Option<String> {
    let s = s.split_whitespace().collect::<Vec<_>>().join(" ");
    let s = s
        .trim_matches(|c: char| c == ',' || c.is_whitespace())
        .to_uppercase();
    (!s.is_empty()).then_some(s)
}

/// Splits address lines such as `["Flat 2", "10 High Street", "Exeter"]`,
/// `["Flat 2, 10 High Street"]`, `["2/10 High Street"]` or `["Rose Cottage", "Church Lane"]`.
/// The last line that is not the first is the town when there are three or more parts.
pub fn split_lines(lines: &[&str]) -> Parts {
    let mut parts: Vec<String> = lines
        .iter()
        .flat_map(|l| l.split(','))
        .filter_map(clean)
        .collect();
    let mut out = Parts::default();
    if parts.is_empty() {
        return out;
    }
    // A unit line first: "FLAT 2", "APARTMENT 4".
    let first_word = parts[0].split(' ').next().unwrap_or_default().to_string();
    if UNIT_WORDS.contains(&first_word.as_str()) {
        let unit = parts.remove(0);
        // "FLAT 2 10 HIGH STREET" on one line: split after the unit number.
        let toks: Vec<&str> = unit.split(' ').collect();
        if toks.len() > 2 && is_number_token(toks[1]) {
            out.saon = Some(toks[..2].join(" "));
            parts.insert(0, toks[2..].join(" "));
        } else {
            out.saon = Some(unit);
        }
    }
    // "2/10 HIGH STREET": flat 2 of number 10.
    if out.saon.is_none()
        && let Some(first) = parts.first().cloned()
        && let Some((tok, rest)) = first.split_once(' ')
        && let Some((flat, num)) = tok.split_once('/')
        && !flat.is_empty()
        && !num.is_empty()
    {
        out.saon = Some(format!("FLAT {flat}"));
        parts[0] = format!("{num} {rest}");
    }
    let Some(line) = parts.first().cloned() else {
        return out;
    };
    let toks: Vec<&str> = line.split(' ').collect();
    if is_number_token(toks[0]) {
        out.paon = Some(toks[0].to_string());
        if toks.len() > 1 {
            out.street = Some(toks[1..].join(" "));
        }
        parts.remove(0);
    } else {
        // A building name, then possibly "10 HIGH STREET" or a street on the next line.
        out.paon = Some(line.clone());
        parts.remove(0);
        if let Some(next) = parts.first().cloned() {
            let t: Vec<&str> = next.split(' ').collect();
            if is_number_token(t[0]) && t.len() > 1 {
                out.paon = Some(format!("{} {}", line, t[0]));
                out.street = Some(t[1..].join(" "));
            } else {
                out.street = Some(next);
            }
            parts.remove(0);
        }
    }
    match parts.len() {
        0 => {}
        1 => out.town = parts.pop(),
        _ => {
            out.town = parts.pop();
            out.locality = Some(parts.join(", "));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[track_caller]
    fn check(
        lines: &[&str],
        saon: Option<&str>,
        paon: Option<&str>,
        street: Option<&str>,
        town: Option<&str>,
    ) {
        let p = split_lines(lines);
        assert_eq!(
            (
                p.saon.as_deref(),
                p.paon.as_deref(),
                p.street.as_deref(),
                p.town.as_deref()
            ),
            (saon, paon, street, town),
            "{lines:?}"
        );
    }

    #[test]
    fn splits() {
        check(
            &["Flat 2", "10 High Street", "Exeter"],
            Some("FLAT 2"),
            Some("10"),
            Some("HIGH STREET"),
            Some("EXETER"),
        );
        check(
            &["Flat 2, 10 High Street"],
            Some("FLAT 2"),
            Some("10"),
            Some("HIGH STREET"),
            None,
        );
        check(
            &["Flat 2 10 High Street", "", "Exeter"],
            Some("FLAT 2"),
            Some("10"),
            Some("HIGH STREET"),
            Some("EXETER"),
        );
        check(
            &["2/10 High Street"],
            Some("FLAT 2"),
            Some("10"),
            Some("HIGH STREET"),
            None,
        );
        check(
            &["63-65 Fore Street", "Heavitree"],
            None,
            Some("63-65"),
            Some("FORE STREET"),
            Some("HEAVITREE"),
        );
        check(
            &["Rose Cottage", "Church Lane", "Exeter"],
            None,
            Some("ROSE COTTAGE"),
            Some("CHURCH LANE"),
            Some("EXETER"),
        );
        check(
            &["Apartment 4", "Kings Court", "12 Queen Street"],
            Some("APARTMENT 4"),
            Some("KINGS COURT 12"),
            Some("QUEEN STREET"),
            None,
        );
        check(
            &["5 Hayward Avenue"],
            None,
            Some("5"),
            Some("HAYWARD AVENUE"),
            None,
        );
        check(&[""], None, None, None, None);
    }
}
