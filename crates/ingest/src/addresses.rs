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

/// Flats named by their position in the building rather than a number, longest first.
const POSITIONAL_FLATS: &[&str] = &[
    "LOWER GROUND FLOOR FLAT",
    "UPPER GROUND FLOOR FLAT",
    "GROUND FLOOR FLAT",
    "FIRST FLOOR FLAT",
    "SECOND FLOOR FLAT",
    "THIRD FLOOR FLAT",
    "FOURTH FLOOR FLAT",
    "TOP FLOOR FLAT",
    "BASEMENT FLAT",
    "GARDEN FLAT",
    "GROUND FLAT",
    "UPPER FLAT",
    "LOWER FLAT",
    "MIDDLE FLAT",
    "TOP FLAT",
    "LOWER GROUND FLOOR",
    "UPPER GROUND FLOOR",
    "GROUND FLOOR",
    "FIRST FLOOR",
    "SECOND FLOOR",
    "THIRD FLOOR",
    "TOP FLOOR",
    "BASEMENT",
];

/// The positional flat a line starts with (`TOP FLAT`, `GROUND FLOOR FLAT`), and the rest.
fn positional_flat(line: &str) -> Option<(&'static str, String)> {
    POSITIONAL_FLATS.iter().find_map(|p| {
        let rest = line.strip_prefix(p)?;
        (rest.is_empty() || rest.starts_with(' ')).then(|| (*p, rest.trim().to_string()))
    })
}

/// A house or flat number: `10`, `10A`, `63-65`, `6/7` (not `1ST`).
fn is_house_number(t: &str) -> bool {
    t.split(['-', '/']).all(|p| {
        let digits = p.bytes().take_while(u8::is_ascii_digit).count();
        digits > 0
            && digits <= 5
            && p.len() - digits <= 1
            && p.bytes().skip(digits).all(|b| b.is_ascii_alphabetic())
    })
}

/// `10 HIGH STREET` as (`10`, `HIGH STREET`); a bare `41` as (`41`, ``).
fn number_first(line: &str) -> Option<(String, String)> {
    let (first, rest) = line.split_once(' ').unwrap_or((line, ""));
    is_house_number(first).then(|| (first.to_string(), rest.trim().to_string()))
}

/// Splits address lines such as `["Flat 2", "10 High Street", "Exeter"]`,
/// `["Flat 2, 10 High Street"]`, `["2/10 High Street"]`, `["41, Grecian Way"]` (the number on
/// its own, as most EPC lodgements write it), `["Top Flat, 12 Mount Street"]`,
/// `["13 Trinity Apartments, 3 Roman Walk"]` (flat 13 of number 3, Trinity Apartments) or
/// `["Rose Cottage", "Church Lane"]`.
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
    // A unit line first: "FLAT 2", "APARTMENT 4", "TOP FLAT", "GROUND FLOOR FLAT".
    let first_word = parts[0].split(' ').next().unwrap_or_default().to_string();
    if UNIT_WORDS.contains(&first_word.as_str()) {
        let unit = parts.remove(0);
        // "FLAT 2 10 HIGH STREET" on one line: split after the unit number.
        let toks: Vec<&str> = unit.split(' ').collect();
        if toks.len() > 2 && (is_number_token(toks[1]) || toks[1].len() == 1) {
            out.saon = Some(toks[..2].join(" "));
            parts.insert(0, toks[2..].join(" "));
        } else {
            out.saon = Some(unit);
        }
    } else if let Some((pos, rest)) = positional_flat(&parts[0]) {
        out.saon = Some(pos.to_string());
        if rest.is_empty() {
            parts.remove(0);
        } else {
            parts[0] = rest;
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
    parts.remove(0);
    if let Some((num, rest)) = number_first(&line) {
        let last = rest.rsplit(' ').next().unwrap_or_default();
        if out.saon.is_none()
            && let Some((num2, street)) = number_first(&rest)
        {
            // "3 210 MONKS ROAD": flat 3 of number 210.
            out.saon = Some(num);
            out.paon = Some(num2);
            if street.is_empty() {
                out.street = (!parts.is_empty()).then(|| parts.remove(0));
            } else {
                out.street = Some(street);
            }
        } else if out.saon.is_none() && rest.contains(' ') && is_house_number(last) {
            // "5 MOLLY HAYES APARTMENTS 41A, NEW NORTH ROAD": flat 5 of 41A, a named building.
            out.saon = Some(num);
            out.paon = Some(rest);
            out.street = (!parts.is_empty()).then(|| parts.remove(0));
        } else if rest.is_empty() {
            // "41, GRECIAN WAY": the number on its own, the street next.
            out.paon = Some(num);
            if !parts.is_empty() {
                out.street = Some(parts.remove(0));
            }
        } else if out.saon.is_none()
            && let Some((num2, street)) = parts.first().and_then(|p| number_first(p))
            && (!street.is_empty() || parts.len() >= 2)
        {
            // "13 TRINITY APARTMENTS, 3 ROMAN WALK" or "1 ADMIRAL VERNON COURT, 44, CHUDLEIGH
            // ROAD": flat 13 of number 3, a named building.
            parts.remove(0);
            out.saon = Some(num);
            out.paon = Some(format!("{rest} {num2}"));
            out.street = Some(if street.is_empty() {
                parts.remove(0)
            } else {
                street
            });
        } else {
            out.paon = Some(num);
            out.street = Some(rest);
        }
    } else {
        // A building name, then possibly "10 HIGH STREET", "10, HIGH STREET" or a street.
        out.paon = Some(line.clone());
        if let Some(next) = parts.first().cloned() {
            parts.remove(0);
            match number_first(&next) {
                Some((num, street)) if !street.is_empty() => {
                    out.paon = Some(format!("{line} {num}"));
                    out.street = Some(street);
                }
                Some((num, _)) if !parts.is_empty() => {
                    out.paon = Some(format!("{line} {num}"));
                    out.street = Some(parts.remove(0));
                }
                _ => out.street = Some(next),
            }
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
        // The number on its own line (most EPC lodgements).
        check(
            &["41, Grecian Way"],
            None,
            Some("41"),
            Some("GRECIAN WAY"),
            None,
        );
        check(
            &["Flat 4, 7, North Avenue, Exeter"],
            Some("FLAT 4"),
            Some("7"),
            Some("NORTH AVENUE"),
            Some("EXETER"),
        );
        check(
            &["36, Regent Square, Heavitree"],
            None,
            Some("36"),
            Some("REGENT SQUARE"),
            Some("HEAVITREE"),
        );
        check(
            &["102b, Hamlin Gardens"],
            None,
            Some("102B"),
            Some("HAMLIN GARDENS"),
            None,
        );
        // A unit in a numbered, named building.
        check(
            &["13 Trinity Apartments, 3 Roman Walk"],
            Some("13"),
            Some("TRINITY APARTMENTS 3"),
            Some("ROMAN WALK"),
            None,
        );
        check(
            &["1 Admiral Vernon Court, 44, Chudleigh Road"],
            Some("1"),
            Some("ADMIRAL VERNON COURT 44"),
            Some("CHUDLEIGH ROAD"),
            None,
        );
        check(
            &["5 Molly Hayes Apartments 41a, New North Road"],
            Some("5"),
            Some("MOLLY HAYES APARTMENTS 41A"),
            Some("NEW NORTH ROAD"),
            None,
        );
        check(
            &["3 210 Monks Road"],
            Some("3"),
            Some("210"),
            Some("MONKS ROAD"),
            None,
        );
        // Flats named by position.
        check(
            &["Top Flat, 12 Mount Street"],
            Some("TOP FLAT"),
            Some("12"),
            Some("MOUNT STREET"),
            None,
        );
        check(
            &["Ground Floor Flat 5 Oak Road", "Exeter"],
            Some("GROUND FLOOR FLAT"),
            Some("5"),
            Some("OAK ROAD"),
            Some("EXETER"),
        );
        check(
            &["Basement Flat", "Rose House", "Church Lane"],
            Some("BASEMENT FLAT"),
            Some("ROSE HOUSE"),
            Some("CHURCH LANE"),
            None,
        );
        check(
            &["Flat B, 20 Paris Street"],
            Some("FLAT B"),
            Some("20"),
            Some("PARIS STREET"),
            None,
        );
        check(
            &["Kings Court, 12, Queen Street"],
            None,
            Some("KINGS COURT 12"),
            Some("QUEEN STREET"),
            None,
        );
    }
}
