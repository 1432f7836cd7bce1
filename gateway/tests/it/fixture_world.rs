//! The fixture world loads through the real loaders, accounts for every row (including the
//! deliberately malformed ones), carries `fixture` provenance, and the address matcher resolves
//! a labelled set of noisy queries generated from it.

use crate::support::{fixtures, manifest};
use serde_json::Value;
use terrace_ingest::Progress;
use terrace_matcher::{AddressEntry, AddressIndex, noise};
use terrace_store::testing::TestDb;
use terrace_store::{address, council_tax, listings};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_fixture_world_loads_resolves_and_is_honest() {
    let t = TestDb::new().await;
    let reports = terrace_build::load_and_build(&t.db, &fixtures(), &mut Progress::quiet())
        .await
        .unwrap();
    let m = manifest();
    assert_eq!(m["provenance"], "fixture");

    // Every file of the manifest that is a dataset was loaded, and every row is accounted for.
    for r in &reports {
        let c = &r.counts;
        assert_eq!(
            c.read,
            c.loaded + c.updated + c.deleted + c.rejected + c.unchanged,
            "{}",
            r.file
        );
        let entry = m["files"]
            .as_array()
            .unwrap()
            .iter()
            .find(|f| r.file.ends_with(f["path"].as_str().unwrap()))
            .unwrap();
        let header = if ["codepoint", "price_paid", "boundaries", "os_open_names"]
            .contains(&r.dataset.as_str())
        {
            0
        } else {
            1
        };
        let expected_rows = entry["rows"].as_i64().unwrap() - header;
        assert!(
            c.read == expected_rows || c.read == entry["rows"].as_i64().unwrap(),
            "{}: read {} rows, manifest says {}",
            r.file,
            c.read,
            entry["rows"]
        );
    }
    assert_eq!(reports.len(), 82, "every loadable fixture file");
    // The deliberately malformed rows are rejected with file and line, and nothing else is.
    let mut got: Vec<(String, u64)> = reports
        .iter()
        .flat_map(|r| {
            r.rejections.iter().map(|j| {
                (
                    j.file.rsplit("fixtures/").next().unwrap().to_string(),
                    j.line,
                )
            })
        })
        .collect();
    got.sort();
    let mut want: Vec<(String, u64)> = m["expected_rejections"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| {
            (
                e["file"].as_str().unwrap().to_string(),
                e["line"].as_u64().unwrap(),
            )
        })
        .collect();
    want.sort();
    assert_eq!(got, want);

    risk_layers_answer_three_ways(&t.db, &m).await;

    // Provenance says fixture on every stored address; flats point at their building.
    let rows = address::addresses_page(&t.db, 0, 100_000).await.unwrap();
    assert!(rows.len() >= 6_000);
    for a in &rows {
        for s in [&a.address_source, &a.position_source]
            .into_iter()
            .flatten()
        {
            assert!(s.starts_with("fixture:"), "{s}");
        }
    }
    let flats: Vec<_> = rows.iter().filter(|a| a.parent_uprn.is_some()).collect();
    assert!(!flats.is_empty());
    assert!(
        flats
            .iter()
            .all(|f| rows.iter().any(|b| Some(b.uprn) == f.parent_uprn))
    );
    assert!(
        rows.iter()
            .filter(|a| a.street.is_some())
            .all(|a| a.lad_code.is_some()),
        "areas derived"
    );
    let linked = address::register_counts(&t.db).await.unwrap();
    assert!(
        linked.price_paid > 4_000 && linked.epc_certificates > 4_000,
        "{linked:?}"
    );

    // Resolve accuracy on >= 500 noisy queries generated from the fixture register.
    let entries: Vec<AddressEntry> = rows
        .iter()
        .filter(|a| a.street.is_some())
        .map(|a| AddressEntry {
            uprn: a.uprn,
            parent_uprn: a.parent_uprn,
            saon: a.saon.clone(),
            paon: a.paon.clone(),
            street: a.street.clone(),
            locality: a.locality.clone(),
            town: a.town.clone(),
            postcode: a.postcode.clone(),
        })
        .collect();
    let index = terrace_address::build_index(&t.db).await.unwrap();
    assert_eq!(index.len(), entries.len());
    let queries = noise::noisy_queries(&entries, 900, 2026);
    assert!(queries.len() >= 500);
    let acc = noise::measure(&index, &queries);
    eprintln!(
        "resolve accuracy on {} noisy fixture queries: precision@1 {:.4} ({} of {} confident), recall@1 {:.4}; by kind {:?}",
        acc.n,
        acc.precision,
        acc.correct_confident,
        acc.answered_confident,
        acc.recall,
        acc.by_kind
    );
    assert!(acc.precision >= 0.95, "precision {}", acc.precision);
    assert!(acc.recall >= 0.85, "recall {}", acc.recall);
    let _: &AddressIndex = &index;

    // The property cases the fixture world was built with.
    let uprn = |v: &Value| terrace_core::Uprn::new(v.as_i64().unwrap()).unwrap();
    let today = chrono::NaiveDate::from_ymd_opt(2026, 11, 21).unwrap();
    for u in m["lease_cases"]["unreadable"].as_array().unwrap() {
        let l = terrace_ownership::lease(&t.db, uprn(u), today)
            .await
            .unwrap();
        let lease = l.lease.expect("an unreadable term is still a lease");
        assert!(
            lease.term.problem.is_some() && lease.unexpired_years.is_none(),
            "{u}: never guessed"
        );
    }
    for (case, short, very) in [("short", true, false), ("very_short", true, true)] {
        for c in m["lease_cases"][case].as_array().unwrap().iter().take(20) {
            let l = terrace_ownership::lease(&t.db, uprn(&c["uprn"]), today)
                .await
                .unwrap()
                .lease
                .unwrap();
            assert_eq!(
                l.term.end.unwrap().to_string(),
                c["term_end"].as_str().unwrap()
            );
            assert_eq!(
                (l.is_short_lease, l.is_under_60_years),
                (Some(short), Some(very)),
                "{case} {}",
                c["uprn"]
            );
        }
    }
    for u in m["lease_cases"]["long"].as_array().unwrap().iter().take(20) {
        let l = terrace_ownership::lease(&t.db, uprn(u), today)
            .await
            .unwrap()
            .lease
            .unwrap();
        assert_eq!(l.is_short_lease, Some(false));
    }
    for u in m["council_tax_cases"]["unlisted_uprns"]
        .as_array()
        .unwrap()
        .iter()
        .take(10)
    {
        let ct = terrace_property::council_tax(&t.db, uprn(u)).await.unwrap();
        assert_eq!(ct.status, "not_listed", "{u}");
    }
    for e in m["council_tax_cases"]["unlinked_entries"]
        .as_array()
        .unwrap()
    {
        let pc = e["postcode"].as_str().unwrap();
        let unlinked = council_tax::unlinked_council_tax_at(&t.db, pc)
            .await
            .unwrap();
        assert!(
            unlinked
                .iter()
                .any(|r| r.reference == e["reference"].as_str().unwrap()),
            "{e} stays unlinked"
        );
        // Every dwelling at that postcode without a linked band says not_found, never a band.
        let at = address::addresses_at_postcode(&t.db, pc).await.unwrap();
        for a in at
            .iter()
            .filter(|a| a.class.as_deref().is_some_and(|c| c.starts_with("RD")))
        {
            let ct = terrace_property::council_tax(&t.db, uprn(&serde_json::json!(a.uprn)))
                .await
                .unwrap();
            assert!(
                ct.status == "ok" || ct.status == "not_found",
                "{}: {}",
                a.uprn,
                ct.status
            );
        }
    }
    let linked_tax = council_tax::council_tax_for_uprn(
        &t.db,
        rows.iter()
            .find(|a| a.class.as_deref() == Some("RD04"))
            .unwrap()
            .uprn,
    )
    .await
    .unwrap();
    assert_eq!(linked_tax.len(), 1, "a terraced house has its band linked");

    // Listings: the change log holds reductions; F or G rated homes are offered to let, which
    // MEES bars without an exemption.
    let events = listings::events_after(&t.db, 0, 100_000).await.unwrap();
    let reductions = events
        .iter()
        .filter(|e| e.event_type == "price_reduction")
        .count();
    assert!(
        reductions >= 100,
        "{reductions} price reductions in the log"
    );
    for u in m["listing_cases"]["f_or_g_lets"].as_array().unwrap() {
        let r = terrace_property::retrofit(&t.db, uprn(u)).await.unwrap();
        assert_eq!(r.mees.unwrap().status, "below_minimum", "{u}");
    }
    let log_len = events.len();

    // The industry feeds: five years of RTDF requests and two BLM files, matched to UPRNs by the
    // address matcher (neither feed carries one), with removals and their reasons.
    let all = listings::listings_in_area(&t.db, &listings::ListingArea::National)
        .await
        .unwrap();
    let rtdf: Vec<_> = all
        .iter()
        .filter(|l| l.feed.as_deref() == Some("rtdf"))
        .collect();
    assert!(rtdf.len() >= 1_400, "{} RTDF listings", rtdf.len());
    let matched = rtdf
        .iter()
        .filter(|l| l.uprn_method.as_deref() == Some("address_matcher") && l.uprn.is_some())
        .count();
    assert!(
        matched * 5 >= rtdf.len() * 4,
        "{matched} of {} matched",
        rtdf.len()
    );
    for reason in ["sold_by_us", "let_by_us", "withdrawn_from_market"] {
        assert!(
            rtdf.iter()
                .any(|l| l.removal_reason.as_deref() == Some(reason)),
            "{reason}"
        );
    }
    assert_eq!(
        all.iter()
            .filter(|l| l.feed.as_deref() == Some("blm"))
            .count(),
        26
    );

    // Housing-benefit cap: placed by district, by sector, by unit in the split district, and
    // not_available (never a guess) for the split district's other postcodes.
    let lha = &m["lha_cases"];
    let split = lha["split_district"].as_str().unwrap();
    let units: Vec<&str> = lha["split_units"]
        .as_array()
        .unwrap()
        .iter()
        .map(|u| u.as_str().unwrap())
        .collect();
    let mut seen = std::collections::BTreeSet::new();
    for a in rows
        .iter()
        .filter(|a| a.class.as_deref().is_some_and(|c| c.starts_with("RD")))
    {
        let Some(pc) = a.postcode.as_deref() else {
            continue;
        };
        let district = pc.split(' ').next().unwrap();
        let kind = if district == split && !units.contains(&pc) {
            "split"
        } else if district == split {
            "unit"
        } else if pc.starts_with(lha["sector_level"].as_str().unwrap()) {
            "sector"
        } else {
            "district"
        };
        if !seen.insert(kind) {
            continue;
        }
        let p = terrace_core::Postcode::parse(pc).unwrap();
        let cap = terrace_listings::lha::housing_benefit_cap(&t.db, Some(&p), Some(2), today)
            .await
            .unwrap();
        match (kind, cap) {
            ("split", Err(why)) => assert!(why.reason.contains("split"), "{pc}: {}", why.reason),
            ("split", Ok(c)) => panic!("{pc} in the split district placed in {}", c.brma),
            (k, Ok(c)) => {
                assert_eq!(c.matched_on, k, "{pc}");
                assert_eq!(c.rates.len(), 5, "{pc}: all five categories in force");
                assert_eq!(
                    c.rates[0].valid_from.map(|d| d.to_string()).as_deref(),
                    Some("2026-04-01")
                );
            }
            (k, Err(why)) => panic!("{pc} ({k}): {}", why.reason),
        }
    }
    assert_eq!(seen.len(), 4, "{seen:?}");
    // Planning history at each match level; the second authority is not covered.
    let pc = &m["planning_cases"];
    let today = chrono::NaiveDate::from_ymd_opt(2026, 11, 21).unwrap();
    for (case, level) in [
        ("unit_uprns", "unit"),
        ("building_flat_uprns", "building"),
        ("matcher_uprns", "unit"),
        ("radius_uprns", "radius_25m"),
    ] {
        let list = pc[case].as_array().unwrap();
        assert!(!list.is_empty(), "{case}");
        for u in list {
            let h = terrace_planning::planning_history(
                &t.db,
                &terrace_layers::LayerCache::default(),
                uprn(u),
                today,
            )
            .await
            .unwrap();
            assert_eq!(
                (h.status, h.match_level),
                (terrace_planning::PlanningStatus::Ok, Some(level)),
                "{case} {u}"
            );
            if case == "matcher_uprns" {
                assert!(
                    h.applications.iter().any(|a| a
                        .uprn_match
                        .as_ref()
                        .and_then(|m| m.method.as_deref())
                        == Some("address_matcher"))
                );
            }
            if level == "radius_25m" {
                assert!(h.applications.iter().all(|a| a.distance_m.unwrap() <= 25.0));
            }
        }
    }
    let uncovered = rows
        .iter()
        .find(|a| a.lad_code.as_deref() == pc["not_covered_lad"].as_str())
        .unwrap();
    let h = terrace_planning::planning_history(
        &t.db,
        &terrace_layers::LayerCache::default(),
        terrace_core::Uprn::new(uncovered.uprn).unwrap(),
        today,
    )
    .await
    .unwrap();
    assert_eq!(h.status, "not_covered");

    // Rated commercial units: linked by the lookup, or by the matcher, with the 2026 entry.
    let uarn = |v: &Value| terrace_core::Uarn::new(v.as_i64().unwrap()).unwrap();
    for pair in pc["lookup_examples"].as_array().unwrap() {
        let r = terrace_commercial::commercial_by_uarn(&t.db, uarn(&pair[0]), today)
            .await
            .unwrap();
        assert_eq!(r.uprn, pair[1].as_i64(), "{pair}");
        assert_eq!(r.uprn_link.unwrap().method, "uarn_uprn_lookup");
        assert!(matches!(
            r.hereditament,
            terrace_commercial::Block::Available(_)
        ));
    }
    let mut by_matcher = 0;
    for pair in pc["matcher_examples"].as_array().unwrap() {
        let r = terrace_commercial::commercial_by_uarn(&t.db, uarn(&pair[0]), today)
            .await
            .unwrap();
        if let Some(link) = r.uprn_link {
            assert_eq!(
                (link.uprn, link.method.as_str()),
                (pair[1].as_i64().unwrap(), "address_matcher"),
                "{pair}"
            );
            by_matcher += 1;
        }
    }
    assert!(
        by_matcher >= 1,
        "the matcher links rated units the lookup does not"
    );

    // The fixture's Price Paid lags registration as a real file does, so the market build
    // flags its last months provisional and every published index stops before them.
    let built = terrace_market::build::build(&t.db, chrono::Utc::now().naive_utc(), &mut |_| {})
        .await
        .unwrap();
    let provisional = built
        .provisional_from
        .clone()
        .expect("the fixture's last months are provisional");
    let through = built.data_through.clone().unwrap();
    assert!(
        provisional.as_str() > "2025-11-01" && provisional <= through,
        "{built:?}"
    );
    let geo = terrace_store::market::geography(&t.db, "national:UK")
        .await
        .unwrap()
        .unwrap();
    assert!(
        geo.last_settled
            .as_deref()
            .is_some_and(|s| s < &provisional[..7]),
        "{geo:?}"
    );

    // Loading the same world again leaves the same state.
    let before = address::register_counts(&t.db).await.unwrap();
    let again = terrace_build::load_and_build(&t.db, &fixtures(), &mut Progress::quiet())
        .await
        .unwrap();
    for r in again.iter().filter(|r| r.dataset != "price_paid") {
        assert_eq!(
            r.counts.loaded + r.counts.updated + r.counts.deleted,
            0,
            "{}: {:?}",
            r.file,
            r.counts
        );
    }
    // Price Paid replays its own changes (C) and deletes (D) in file order, ending where it was.
    assert_eq!(address::register_counts(&t.db).await.unwrap(), before);
    assert_eq!(
        listings::events_after(&t.db, 0, 100_000)
            .await
            .unwrap()
            .len(),
        log_len,
        "the change log is appended once"
    );
}

/// The fixture's spatial layers: the pinned UPRNs answer true, and a plain dwelling answers false
/// where its authority has the layer and not_checked where it does not.
async fn risk_layers_answer_three_ways(db: &terrace_store::Db, m: &Value) {
    use terrace_core::Uprn;
    use terrace_layers::{LayerCache, RiskReport, risk};
    let cases = &m["risk_cases"];
    let cache = LayerCache::default();
    let report = |u: &Value| {
        let u = Uprn::new(u.as_i64().unwrap()).unwrap();
        let cache = cache.clone();
        async move { risk(db, &cache, u).await.unwrap() }
    };
    let v = |r: &RiskReport, group: &str, name: &str| {
        let j = serde_json::to_value(r).unwrap();
        j[group][name]["value"].clone()
    };
    let lads = cases["lad_codes"].as_array().unwrap();
    for (i, u) in cases["flood_zone_3"].as_array().unwrap().iter().enumerate() {
        let r = report(u).await;
        assert_eq!(r.local_authority.as_deref(), lads[i].as_str());
        assert_eq!(r.flood.zone, "3", "{u}");
        assert_eq!(r.flood.rivers_and_sea_band.as_deref(), Some("high"));
        assert_eq!(v(&r, "flood", "flood_defence_within_250m"), true);
    }
    for u in cases["conservation_and_listed"].as_array().unwrap() {
        // Planning history reads the same flags for what needs consent.
        let today = chrono::NaiveDate::from_ymd_opt(2026, 11, 21).unwrap();
        let h = terrace_planning::planning_history(
            db,
            &cache,
            Uprn::new(u.as_i64().unwrap()).unwrap(),
            today,
        )
        .await
        .unwrap();
        let consent = serde_json::to_value(&h.what_needs_consent).unwrap();
        assert_eq!(
            consent["flags"]["conservation_area"]["value"], true,
            "{u}: {consent}"
        );
        assert_eq!(consent["flags"]["listed_building"]["value"], true, "{u}");
        assert!(!h.what_needs_consent.required.is_empty(), "{u}: {consent}");
        let r = report(u).await;
        assert_eq!(v(&r, "heritage", "conservation_area"), true, "{u}");
        assert_eq!(v(&r, "heritage", "listed_building"), true, "{u}");
    }
    for u in cases["green_belt"].as_array().unwrap() {
        assert_eq!(
            v(&report(u).await, "environmental_designations", "green_belt"),
            true
        );
    }
    let r = report(&cases["article_4"]).await;
    assert_eq!(v(&r, "planning", "article_4_direction"), true);
    assert_eq!(v(&r, "planning", "tree_preservation"), true);
    let r = report(&cases["brownfield_and_tree"]).await;
    assert_eq!(v(&r, "planning", "brownfield_land"), true);
    assert_eq!(v(&r, "planning", "tree_preservation"), true);
    let r = report(&cases["coal"]).await;
    assert_eq!(v(&r, "coal", "development_high_risk_area"), true);

    let plain = cases["plain"].as_array().unwrap();
    let first = report(&plain[0]).await;
    assert_eq!(first.local_authority.as_deref(), lads[0].as_str());
    assert_eq!(first.flood.zone, "1");
    assert_eq!(v(&first, "planning", "article_4_direction"), false);
    assert_eq!(v(&first, "flood", "historic_flooding"), false);
    assert_eq!(v(&first, "heritage", "conservation_area"), false);
    assert_eq!(
        v(&first, "coal", "development_high_risk_area"),
        "not_checked"
    );
    assert_eq!(v(&first, "flood", "surface_water_risk_area"), "not_checked");
    assert_eq!(first.infrastructure.substation.status, "ok");
    assert_eq!(first.infrastructure.renewable_project.status, "ok");
    let second = report(&plain[1]).await;
    assert_eq!(second.local_authority.as_deref(), lads[1].as_str());
    assert_eq!(v(&second, "planning", "article_4_direction"), "not_checked");
    assert_eq!(v(&second, "flood", "historic_flooding"), "not_checked");
    assert_eq!(v(&second, "coal", "development_high_risk_area"), false);
    assert_eq!(v(&second, "flood", "surface_water_risk_area"), false);
    assert!(
        second
            .summary
            .datasets_not_loaded
            .contains(&"article-4-direction-area".to_string())
    );
}
