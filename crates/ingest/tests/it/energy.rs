//! The energy registers through their loaders: certificates keyed by `CERTIFICATE_NUMBER` as well
//! as `LMK_KEY`, non-domestic and display certificates, recommendations joined to their
//! certificate, the typed columns, malformed rows, and the real Exeter files with every row
//! accounted for.

use crate::load_text;
use std::path::PathBuf;
use terrace_ingest::{Dataset, LoadReport, Progress, load_file};
use terrace_store::epc;
use terrace_store::loads::RowCounts;
use terrace_store::testing::TestDb;

#[track_caller]
fn accounted(r: &LoadReport) {
    let c = &r.counts;
    assert_eq!(
        c.read,
        c.loaded + c.updated + c.deleted + c.rejected + c.unchanged,
        "{}: {c:?}",
        r.file
    );
    assert_eq!(c.rejected as usize, r.rejections.len());
}

const NEW_REGISTER: &str = "CERTIFICATE_NUMBER,ADDRESS1,POSTCODE,CURRENT_ENERGY_RATING,POTENTIAL_ENERGY_RATING,CURRENT_ENERGY_EFFICIENCY,POTENTIAL_ENERGY_EFFICIENCY,LODGEMENT_DATE,MAIN_FUEL,WALLS_DESCRIPTION,WALLS_ENERGY_EFF,ROOF_DESCRIPTION,MAINHEAT_DESCRIPTION,PHOTO_SUPPLY,SOLAR_WATER_HEATING_FLAG,FLOOR_LEVEL,LOW_ENERGY_LIGHTING,UPRN,UPRN_SOURCE\n\
0300-2938-0122-2595-1234,1 Low Road,EX1 1AB,F,C,30,72,2024-02-01,mains gas (not community),\"Solid brick, as built, no insulation (assumed)\",Very Poor,\"Pitched, 100 mm loft insulation\",\"Boiler and radiators, mains gas\",0,N,,50,100000000001,Energy Assessor\n\
0300-2938-0122-2595-5678,2 Low Road,EX1 1AB,B,A,85,95,2023-05-01,electricity (not community),Cavity wall,Good,NO DATA!,\"Air source heat pump, radiators, electric\",25.5,Y,01,100,100000000002,Address Matched\n\
,3 Low Road,EX1 1AB,C,B,70,80,2023-05-01,,,,,,,,,,100000000003,\n";

const RECOMMENDATIONS: &str = "CERTIFICATE_NUMBER,IMPROVEMENT_ITEM,IMPROVEMENT_SUMMARY_TEXT,IMPROVEMENT_DESCR_TEXT,IMPROVEMENT_ID,IMPROVEMENT_ID_TEXT,INDICATIVE_COST\n\
0300-2938-0122-2595-1234,2,Internal or external wall insulation,,7,,\"£4,000 - £14,000\"\n\
0300-2938-0122-2595-1234,1,Increase loft insulation to 270 mm,,5,,£100 - £350\n\
0300-2938-0122-2595-1234,x,Bad item,,,,\n";

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn certificate_number_keys_typed_columns_and_recommendations() {
    let t = TestDb::new().await;
    let db = &t.db;
    let r = load_text(db, Dataset::Epc, "certificates.csv", NEW_REGISTER).await;
    accounted(&r);
    assert_eq!((r.counts.loaded, r.counts.rejected), (2, 1));
    assert_eq!(r.rejections[0].line, 4);
    assert!(
        r.rejections[0].reason.contains("CERTIFICATE_NUMBER"),
        "{:?}",
        r.rejections
    );
    let certs = epc::certificates_for_uprn(db, 100_000_000_001)
        .await
        .unwrap();
    assert_eq!(certs.len(), 1);
    let c = &certs[0];
    // the register's own key, never a derived hash
    assert_eq!(c.lmk_key, "0300-2938-0122-2595-1234");
    assert_eq!(c.kind, "domestic");
    assert_eq!(c.uprn_source.as_deref(), Some("Energy Assessor"));
    assert_eq!(
        (c.photo_supply, c.solar_water_heating.as_deref()),
        (Some(0.0), Some("N"))
    );
    let e = epc::epc_elements_by_key(db, std::slice::from_ref(&c.lmk_key))
        .await
        .unwrap();
    assert_eq!(
        e[0].walls_description.as_deref(),
        Some("Solid brick, as built, no insulation (assumed)")
    );
    assert_eq!(e[0].walls_energy_eff.as_deref(), Some("Very Poor"));
    assert_eq!(e[0].low_energy_lighting, Some(50));
    let other = epc::certificates_for_uprn(db, 100_000_000_002)
        .await
        .unwrap();
    assert_eq!(
        (other[0].photo_supply, other[0].floor_level.as_deref()),
        (Some(25.5), Some("01"))
    );
    let e2 = epc::epc_elements_by_key(db, &[other[0].lmk_key.clone()])
        .await
        .unwrap();
    assert_eq!(
        e2[0].roof_description, None,
        "a placeholder is no description"
    );

    let recs = load_text(
        db,
        Dataset::EpcRecommendations,
        "recommendations.csv",
        RECOMMENDATIONS,
    )
    .await;
    accounted(&recs);
    assert_eq!((recs.counts.loaded, recs.counts.rejected), (2, 1));
    assert_eq!(recs.rejections[0].line, 4);
    let joined = epc::recommendations_of(db, std::slice::from_ref(&c.lmk_key))
        .await
        .unwrap();
    assert_eq!(
        joined
            .iter()
            .map(|r| (r.item, r.indicative_cost.as_deref()))
            .collect::<Vec<_>>(),
        vec![(1, Some("£100 - £350")), (2, Some("£4,000 - £14,000"))]
    );
    // Loading twice changes nothing.
    let again = load_text(db, Dataset::Epc, "certificates.csv", NEW_REGISTER).await;
    assert_eq!(
        again.counts,
        RowCounts {
            read: 3,
            unchanged: 2,
            rejected: 1,
            ..Default::default()
        }
    );
    let again = load_text(
        db,
        Dataset::EpcRecommendations,
        "recommendations.csv",
        RECOMMENDATIONS,
    )
    .await;
    assert_eq!((again.counts.unchanged, again.counts.rejected), (2, 1));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn non_domestic_and_display_registers() {
    let t = TestDb::new().await;
    let db = &t.db;
    let nd = "LMK_KEY,ADDRESS1,POSTCODE,ASSET_RATING,ASSET_RATING_BAND,PROPERTY_TYPE,LODGEMENT_DATE,MAIN_HEATING_FUEL,RENEWABLE_SOURCES,FLOOR_AREA,UPRN,UPRN_SOURCE\n\
nd-1,1 High Street,EX1 1AA,128,F,A1/A2 Retail and Financial/Professional services,2020-03-04,Natural Gas,Photovoltaic panels,350,100000000010,Address Matched\n";
    let r = load_text(db, Dataset::EpcNonDomestic, "certificates.csv", nd).await;
    accounted(&r);
    assert_eq!(r.counts.loaded, 1);
    let dec = "CERTIFICATE_NUMBER,ADDRESS1,POSTCODE,CURRENT_OPERATIONAL_RATING,OPERATIONAL_RATING_BAND,PROPERTY_TYPE,LODGEMENT_DATE,MAIN_HEATING_FUEL,TOTAL_FLOOR_AREA,UPRN\n\
1111-2222-3333-4444-5555,Civic Centre,EX1 1AA,95,D,Offices,2025-01-02,Natural Gas,1200,100000000010\n";
    let r = load_text(db, Dataset::EpcDisplay, "dec.csv", dec).await;
    accounted(&r);
    let certs = epc::certificates_for_uprn(db, 100_000_000_010)
        .await
        .unwrap();
    type KindRow = (String, Option<String>, Option<i32>, Option<f64>);
    let mut kinds: Vec<KindRow> = certs
        .iter()
        .map(|c| {
            (
                c.kind.clone(),
                c.current_rating.clone(),
                c.asset_rating,
                c.total_floor_area,
            )
        })
        .collect();
    kinds.sort_by(|a, b| a.0.cmp(&b.0));
    assert_eq!(
        kinds,
        vec![
            ("display".into(), Some("D".into()), Some(95), Some(1200.0)),
            (
                "non_domestic".into(),
                Some("F".into()),
                Some(128),
                Some(350.0)
            ),
        ]
    );
    // a domestic read never sees them
    assert!(
        epc::epc_for_uprn(db, 100_000_000_010)
            .await
            .unwrap()
            .is_empty()
    );
    // a non-domestic file given as domestic is refused whole, naming the dataset that loads it
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("nd.csv");
    std::fs::write(&p, nd).unwrap();
    let err = load_file(
        db,
        Dataset::Epc,
        &p,
        Default::default(),
        &mut Progress::quiet(),
    )
    .await
    .err()
    .map(|e| e.to_string())
    .unwrap_or_default();
    assert!(err.contains("epc_non_domestic"), "{err}");
    assert_eq!(terrace_ingest::formats::sniff(&p), Some("epc_non_domestic"));
    let nd_recs = "LMK_KEY,PAYBACK_TYPE,RECOMMENDATION_ITEM,RECOMMENDATION_CODE,RECOMMENDATION,CO2_IMPACT\n\
nd-1,SHORT,1,EPC-L5,Consider replacing T8 lamps with retrofit T5 conversion kit.,HIGH\n";
    let r = load_text(
        db,
        Dataset::EpcRecommendations,
        "recommendations.csv",
        nd_recs,
    )
    .await;
    accounted(&r);
    let joined = epc::recommendations_of(db, &["nd-1".to_string()])
        .await
        .unwrap();
    assert_eq!(
        (
            joined[0].payback_type.as_deref(),
            joined[0].improvement_id.as_deref()
        ),
        (Some("SHORT"), Some("EPC-L5"))
    );
}

fn shared(rel: &str) -> Option<PathBuf> {
    let p = PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/../../../shared/data")).join(rel);
    if p.exists() {
        Some(p)
    } else {
        eprintln!("{} is absent: skipped", p.display());
        None
    }
}

/// Both real Exeter EPC files through the loader: every row accounted for, the typed columns
/// read from the publisher's columns, and a second load changing nothing.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn exeter_certificates_every_row_accounted_for() {
    let t = TestDb::new().await;
    let db = &t.db;
    if let Some(p) = shared("exeter/epc_domestic_exeter_E07000041_api_format_4092rows.csv") {
        let r = load_file(
            db,
            Dataset::Epc,
            &p,
            Default::default(),
            &mut Progress::quiet(),
        )
        .await
        .unwrap();
        accounted(&r);
        assert_eq!(
            (r.counts.read, r.counts.loaded, r.counts.rejected),
            (4_092, 4_092, 0)
        );
        let first = epc::certificates_for_uprn(db, 100_041_141_774)
            .await
            .unwrap();
        let c = first
            .iter()
            .find(|c| {
                c.lmk_key == "f37f4e6d7ebd8faee1d8c4f695fcb3c029f06c8a2e988a28fa48440711707fa5"
            })
            .expect("the file's first certificate");
        assert_eq!(c.uprn_source.as_deref(), Some("Energy Assessor"));
        let e = epc::epc_elements_by_key(db, std::slice::from_ref(&c.lmk_key))
            .await
            .unwrap();
        assert!(
            e[0].walls_description.is_some() && e[0].mainheat_description.is_some(),
            "{e:?}"
        );
        let again = load_file(
            db,
            Dataset::Epc,
            &p,
            Default::default(),
            &mut Progress::quiet(),
        )
        .await
        .unwrap();
        assert_eq!(again.counts.unchanged, 4_092, "{:?}", again.counts);
    }
    if let Some(p) = shared("exeter/epc_domestic_exeter_E07000041_bulk_header_subset_60396rows.csv")
    {
        let r = load_file(
            db,
            Dataset::Epc,
            &p,
            Default::default(),
            &mut Progress::quiet(),
        )
        .await
        .unwrap();
        accounted(&r);
        // A cut-down extract without LMK_KEY or CERTIFICATE_NUMBER: derived keys, and the 121
        // rows that repeat another row exactly are that row again.
        assert_eq!((r.counts.read, r.counts.rejected), (60_396, 0));
        assert_eq!(r.counts.loaded, 60_396 - 121, "{:?}", r.counts);
        assert_eq!(r.counts.unchanged, 121, "{:?}", r.counts);
    }
}
