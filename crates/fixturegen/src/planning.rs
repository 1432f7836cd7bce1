//! Planning applications, the official planning coverage list, the VOA rating lists (2010,
//! 2017, 2023, 2026) and a UARN to UPRN lookup, written as the addresses stream past.
//!
//! Everything here draws only from its own PRNG streams (`Rng::derive(seed ^
//! PLANNING_SEED_XOR, ..)`), so the other fixture files are byte-identical with or without it.
//!
//! - The first authority is covered by official planning data; the second is not, and has no
//!   applications.
//! - In the covered authority: buildings (parent shells) may have an application carrying the
//!   building's UPRN (their flats answer at match level `building`); houses and commercial units
//!   may have one carrying their UPRN (`unit`), one with only an address the matcher links, or
//!   one with only a point 5-20 m from them (`radius_25m`).
//! - Every commercial unit in either authority is rated: entries in the 2010 (most), 2017, 2023
//!   and 2026 lists, three in four linked by the lookup file, the rest left to the matcher.

use crate::out::{Eol, FileStat, LineFile};
use crate::rng::Rng;
use crate::tenure::council_address;
use crate::world::{self, AddressRecord};
use chrono::{Days, NaiveDate};
use serde::Serialize;
use std::io;
use std::path::Path;

pub const APPLICATIONS_FILE: &str = "planning/planning_applications.csv";
pub const COVERAGE_FILE: &str = "planning/organisation.csv";
pub const UARN_FILE: &str = "voa/uarn_uprn.csv";
pub const LIST_FILES: [(i32, &str); 4] = [
    (2010, "voa/list_entries_2010.txt"),
    (2017, "voa/list_entries_2017.txt"),
    (2023, "voa/list_entries_2023.txt"),
    (2026, "voa/list_entries_2026.txt"),
];
/// The summary valuations of the 2023 and 2026 lists (the layout of the VOA's
/// `uk-englandwales-ndr-YYYY-summaryvaluations-compiled-epoch-0001-baseline-csv` files).
pub const SMV_FILES: [(i32, &str); 2] = [
    (2023, "voa/summary_valuations_2023.txt"),
    (2026, "voa/summary_valuations_2026.txt"),
];
pub const APPLICATIONS_HEADER: &str = "dataset,entity,reference,organisation,address-text,postcode,uprn,point,received-date,validated-date,decision-date,decision,appeal-decision,appeal-date,cil-liable,cil-amount,development-type,description";
pub const COVERAGE_HEADER: &str =
    "entity,name,organisation,statistical-geography,start-date,end-date";

/// Mixed into the seed for these streams, keeping them apart from every existing one.
const PLANNING_SEED_XOR: u64 = 0x9A11_C0DE_0A7E_0004;

/// How many example UPRNs each case lists in the manifest.
const EXAMPLES: usize = 5;

#[derive(Debug, Clone, PartialEq, Default, Serialize)]
pub struct PlanningCases {
    pub note: String,
    pub covered_lad: String,
    pub not_covered_lad: String,
    pub applications: u64,
    /// Properties with an application carrying their own UPRN.
    pub unit_uprns: Vec<u64>,
    /// Flats whose building has an application and they have none.
    pub building_flat_uprns: Vec<u64>,
    /// Properties whose application names only their address (linked by the matcher).
    pub matcher_uprns: Vec<u64>,
    /// Properties with no linked application and one lying 5-20 m away.
    pub radius_uprns: Vec<u64>,
    /// Rated commercial units (UARNs) and how many the lookup links.
    pub rated_units: u64,
    pub lookup_linked: u64,
    /// (UARN, UPRN) pairs linked by the lookup, and UARNs left to the matcher with their unit.
    pub lookup_examples: Vec<(u64, u64)>,
    pub matcher_examples: Vec<(u64, u64)>,
}

pub struct Planning {
    apps: LineFile,
    cov_stat: FileStat,
    lists: Vec<LineFile>,
    smv: Vec<LineFile>,
    /// Valuations (`01` records) written to each summary valuations file.
    smv_valuations: [u64; 2],
    links: LineFile,
    rng: Rng,
    vrng: Rng,
    /// The summary valuations' own stream (floor areas), apart from the lists' `vrng`.
    srng: Rng,
    end: NaiveDate,
    covered: &'static str,
    next_entity: u64,
    next_uarn: u64,
    /// The building of the flats seen last, and whether it has an application.
    building: Option<(u64, bool)>,
    pub cases: PlanningCases,
}

fn date(d: NaiveDate) -> String {
    d.format("%Y-%m-%d").to_string()
}

impl Planning {
    pub fn create(
        out_dir: &Path,
        seed: u64,
        end: NaiveDate,
        lads: &[(&'static str, &'static str)],
    ) -> io::Result<Planning> {
        let mut apps = LineFile::create(out_dir, APPLICATIONS_FILE, Eol::Lf)?;
        apps.header(APPLICATIONS_HEADER)?;
        let mut cov = LineFile::create(out_dir, COVERAGE_FILE, Eol::Lf)?;
        cov.header(COVERAGE_HEADER)?;
        let (code, name) = lads[0];
        cov.row_minimal(&[
            "9901".to_string(),
            name.to_string(),
            format!("local-authority:{}", &name[..3].to_ascii_uppercase()),
            code.to_string(),
            "2015-04-01".to_string(),
            String::new(),
        ])?;
        let cov_stat = cov.finish()?;
        let mut lists = Vec::new();
        for (_, rel) in LIST_FILES {
            lists.push(LineFile::create(out_dir, rel, Eol::CrLf)?);
        }
        let mut smv = Vec::new();
        for (_, rel) in SMV_FILES {
            smv.push(LineFile::create(out_dir, rel, Eol::CrLf)?);
        }
        let mut links = LineFile::create(out_dir, UARN_FILE, Eol::Lf)?;
        links.header("UARN,UPRN")?;
        Ok(Planning {
            apps,
            cov_stat,
            lists,
            smv,
            smv_valuations: [0; 2],
            links,
            rng: Rng::derive(seed ^ PLANNING_SEED_XOR, "applications", 0),
            vrng: Rng::derive(seed ^ PLANNING_SEED_XOR, "rating_lists", 0),
            srng: Rng::derive(seed ^ PLANNING_SEED_XOR, "summary_valuations", 0),
            end,
            covered: code,
            next_entity: 7_100_000,
            next_uarn: 30_000_000,
            building: None,
            cases: PlanningCases {
                note: "unit_uprns answer planning history at match level unit, \
                       building_flat_uprns at building, matcher_uprns at unit through the address \
                       matcher, radius_uprns at radius_25m; the second authority is not covered \
                       (not_covered). Rated units are commercial units; lookup_examples are \
                       linked by the lookup file, matcher_examples by the address matcher."
                    .into(),
                covered_lad: code.into(),
                not_covered_lad: lads.get(1).map(|l| l.0.to_string()).unwrap_or_default(),
                ..PlanningCases::default()
            },
        })
    }

    /// One application row.
    fn application(
        &mut self,
        r: &AddressRecord,
        uprn: Option<u64>,
        address: bool,
        point: Option<(f64, f64)>,
        kind: &str,
    ) -> io::Result<()> {
        let rng = &mut self.rng;
        let received = NaiveDate::from_ymd_opt(2015, 1, 1)
            .and_then(|d| d.checked_add_days(Days::new(rng.below(4_000))))
            .unwrap_or(self.end);
        let received = received.min(self.end);
        let validated = received.checked_add_days(Days::new(3 + rng.below(18)));
        let decided = validated
            .and_then(|v| v.checked_add_days(Days::new(40 + rng.below(80))))
            .filter(|d| *d <= self.end);
        let decision = decided
            .map(|_| *rng.pick(&["approved", "approved", "approved", "refused", "withdrawn"]));
        let appeal = (decision == Some("refused") && rng.chance(0.4)).then(|| {
            let outcome = *rng.pick(&["dismissed", "allowed"]);
            let d = decided.and_then(|d| d.checked_add_days(Days::new(150 + rng.below(100))));
            (outcome, d.filter(|d| *d <= self.end))
        });
        let cil = match kind {
            "FUL" | "COU" => {
                if rng.chance(0.5) {
                    (
                        "yes".to_string(),
                        format!("{}", 1_000 + rng.below(40) * 250),
                    )
                } else {
                    ("no".to_string(), String::new())
                }
            }
            _ => (String::new(), String::new()),
        };
        let (dev, desc) = match kind {
            "HOU" => ("householder", "Single storey rear extension"),
            "FUL" => ("full", "Erection of a two storey side extension"),
            "COU" => ("change of use", "Change of use from retail to cafe"),
            _ => ("minor", "Replacement windows and doors"),
        };
        let entity = self.next_entity;
        self.next_entity += 1;
        let yy = received.format("%y");
        let reference = format!("{yy}/{:05}/{kind}", entity % 100_000);
        let pt = match point.and_then(|(x, y)| world::lonlat(x, y)) {
            Some((lon, lat)) => format!("POINT({lon:.7} {lat:.7})"),
            None => String::new(),
        };
        self.apps.row_minimal(&[
            "planning-application".to_string(),
            entity.to_string(),
            reference,
            self.covered.to_string(),
            if address {
                council_address(r)
            } else {
                String::new()
            },
            if address {
                r.postcode.clone()
            } else {
                String::new()
            },
            uprn.map(|u| u.to_string()).unwrap_or_default(),
            pt,
            date(received),
            validated.map(date).unwrap_or_default(),
            decided.map(date).unwrap_or_default(),
            decision.unwrap_or_default().to_string(),
            appeal.map(|a| a.0.to_string()).unwrap_or_default(),
            appeal.and_then(|a| a.1).map(date).unwrap_or_default(),
            cil.0,
            cil.1,
            dev.to_string(),
            desc.to_string(),
        ])?;
        self.cases.applications += 1;
        Ok(())
    }

    fn push(list: &mut Vec<u64>, u: u64) {
        if list.len() < EXAMPLES {
            list.push(u);
        }
    }

    /// Takes the next register record (in register order).
    pub fn address(&mut self, r: &AddressRecord) -> io::Result<()> {
        if r.class.starts_with('C') {
            self.rate(r)?;
        }
        if r.lad_code != self.covered {
            return Ok(());
        }
        if r.class == "PP" {
            let has = self.rng.chance(0.35);
            if has {
                self.application(r, Some(r.uprn), true, None, "FUL")?;
            }
            self.building = Some((r.uprn, has));
            return Ok(());
        }
        if let Some(parent) = r.parent_uprn {
            let building_has = self.building == Some((parent, true));
            if self.rng.chance(0.05) {
                self.application(r, Some(r.uprn), true, None, "MIN")?;
                Self::push(&mut self.cases.unit_uprns, r.uprn);
            } else if building_has {
                Self::push(&mut self.cases.building_flat_uprns, r.uprn);
            }
            return Ok(());
        }
        let kind = if r.class.starts_with('C') {
            "COU"
        } else {
            "HOU"
        };
        let roll = self.rng.f64();
        if roll < 0.12 {
            self.application(r, Some(r.uprn), true, None, kind)?;
            Self::push(&mut self.cases.unit_uprns, r.uprn);
        } else if roll < 0.20 && r.dwelling.is_some() {
            self.application(r, None, true, None, kind)?;
            Self::push(&mut self.cases.matcher_uprns, r.uprn);
        } else if roll < 0.26 && r.dwelling.is_some() {
            let (dx, dy) = self.rng.unit_vector();
            let d = self.rng.range_f64(5.0, 20.0);
            self.application(r, None, false, Some((r.x + dx * d, r.y + dy * d)), "MIN")?;
            Self::push(&mut self.cases.radius_uprns, r.uprn);
        }
        Ok(())
    }

    /// Rating list entries of a commercial unit, and its UARN link.
    fn rate(&mut self, r: &AddressRecord) -> io::Result<()> {
        let rng = &mut self.vrng;
        let uarn = self.next_uarn;
        self.next_uarn += 1 + rng.below(7);
        let (code, text) = if r.class.starts_with("CO") {
            ("CO", "OFFICES AND PREMISES")
        } else {
            ("CS", "SHOP AND PREMISES")
        };
        let ba = if r.lad_code == self.covered {
            "9901"
        } else {
            "9902"
        };
        let address = council_address(r).to_ascii_uppercase();
        let mut rv = (5_000 + rng.below(550) * 100) as f64;
        let from_2010 = rng.chance(0.85);
        let mut written = Vec::new();
        for (i, (year, _)) in LIST_FILES.iter().enumerate() {
            if i > 0 {
                let g = match year {
                    2017 => rng.range_f64(0.95, 1.20),
                    2023 => rng.range_f64(0.90, 1.15),
                    _ => rng.range_f64(1.00, 1.15),
                };
                rv *= g;
            }
            if i == 0 && !from_2010 {
                continue;
            }
            let rounded = ((rv / 50.0).round() * 50.0) as u64;
            let eff = format!("01-APR-{year}");
            let line = [
                (i + 1).to_string(),
                ba.to_string(),
                String::new(),
                format!("{:011}", uarn % 100_000_000_000),
                code.to_string(),
                text.to_string(),
                uarn.to_string(),
                address.clone(),
                r.organisation
                    .clone()
                    .unwrap_or_default()
                    .to_ascii_uppercase(),
                String::new(),
                r.street.to_ascii_uppercase(),
                r.town.to_ascii_uppercase(),
                String::new(),
                String::new(),
                r.postcode.clone(),
                eff.clone(),
                String::new(),
                rounded.to_string(),
                String::new(),
                format!("{}", 9_000_000 + uarn % 1_000_000),
                eff.clone(),
                if code == "CO" { "203G" } else { "249G" }.to_string(),
                String::new(),
                String::new(),
                String::new(),
                String::new(),
                eff,
                String::new(),
            ]
            .join("*");
            self.lists[i].raw_row(&line)?;
            written.push((*year, rounded));
        }
        self.cases.rated_units += 1;
        if rng.chance(0.75) {
            self.links
                .row_minimal(&[uarn.to_string(), r.uprn.to_string()])?;
            self.cases.lookup_linked += 1;
            if self.cases.lookup_examples.len() < EXAMPLES {
                self.cases.lookup_examples.push((uarn, r.uprn));
            }
        } else if self.cases.matcher_examples.len() < EXAMPLES {
            self.cases.matcher_examples.push((uarn, r.uprn));
        }
        self.summary(uarn, code, ba, r, &written)
    }

    /// The summary valuations of a rated unit in the 2023 and 2026 lists, from their own stream:
    /// a `01` record, one to three `02` floor lines and a `07` totals record. One unit in twenty
    /// has none (valued on another basis) and one in twenty is valued per unit (`OTH`), its total
    /// a count that is never square metres.
    fn summary(
        &mut self,
        uarn: u64,
        code: &str,
        ba: &str,
        r: &AddressRecord,
        written: &[(i32, u64)],
    ) -> io::Result<()> {
        let rng = &mut self.srng;
        let area = if code == "CO" {
            rng.range_f64(80.0, 900.0)
        } else {
            rng.range_f64(35.0, 400.0)
        };
        let area = (area * 100.0).round() / 100.0;
        let kind = rng.below(20);
        let split = 1 + rng.below(3);
        if kind == 0 {
            return Ok(());
        }
        let per_unit = kind == 1;
        for (j, (year, _)) in SMV_FILES.iter().enumerate() {
            let Some(&(_, rv)) = written.iter().find(|(y, _)| y == year) else {
                continue;
            };
            let (unit, total) = if per_unit {
                ("OTH".to_string(), format!("{}", 2 + uarn % 9))
            } else {
                (
                    if code == "CO" { "NIA" } else { "GIA" }.to_string(),
                    format!("{area:.2}"),
                )
            };
            let units: f64 = total.parse().unwrap_or(1.0);
            let price = rv as f64 / units;
            let line = [
                "01".to_string(),
                format!("{}", 9_000_000 + uarn % 1_000_000),
                uarn.to_string(),
                ba.to_string(),
                r.organisation
                    .clone()
                    .unwrap_or_default()
                    .to_ascii_uppercase(),
                String::new(),
                String::new(),
                String::new(),
                String::new(),
                r.street.to_ascii_uppercase(),
                String::new(),
                r.town.to_ascii_uppercase(),
                String::new(),
                r.postcode.clone(),
                if code == "CO" { "203" } else { "249" }.to_string(),
                if code == "CO" {
                    "OFFICES AND PREMISES"
                } else {
                    "SHOP AND PREMISES"
                }
                .to_string(),
                total.clone(),
                rv.to_string(),
                rv.to_string(),
                rv.to_string(),
                year.to_string(),
                "FIXTURE COUNCIL".to_string(),
                format!("{:011}", uarn % 100_000_000_000),
                format!("{}", 9_000_000 + uarn % 1_000_000),
                format!("01-APR-{year}"),
                String::new(),
                if code == "CO" { "203" } else { "249" }.to_string(),
                unit,
                format!("{price:.2}"),
            ]
            .join("*");
            self.smv[j].raw_row(&line)?;
            self.smv_valuations[j] += 1;
            let floors = ["Ground", "First", "Second"];
            for k in 0..split {
                let share = units / split as f64;
                let ku = usize::try_from(k).unwrap_or(0);
                self.smv[j].raw_row(&format!(
                    "02*{}*{}*{}*{share:.2}*{price:.2}*{:.0}",
                    k + 1,
                    floors[ku % 3],
                    if code == "CO" { "Office" } else { "Retail" },
                    share * price
                ))?;
            }
            self.smv[j].raw_row(&format!("07*{rv}*0"))?;
        }
        Ok(())
    }

    /// Closes the files: the stats of the applications, the coverage list, the lists and the
    /// links, and the cases.
    #[allow(clippy::type_complexity)]
    pub fn finish(
        self,
    ) -> io::Result<(
        FileStat,
        FileStat,
        Vec<(i32, FileStat)>,
        Vec<(i32, FileStat, u64)>,
        FileStat,
        PlanningCases,
    )> {
        let apps = self.apps.finish()?;
        let mut lists = Vec::new();
        for ((year, _), f) in LIST_FILES.iter().zip(self.lists) {
            lists.push((*year, f.finish()?));
        }
        let mut smv = Vec::new();
        for (((year, _), f), n) in SMV_FILES.iter().zip(self.smv).zip(self.smv_valuations) {
            smv.push((*year, f.finish()?, n));
        }
        let links = self.links.finish()?;
        Ok((apps, self.cov_stat, lists, smv, links, self.cases))
    }
}
