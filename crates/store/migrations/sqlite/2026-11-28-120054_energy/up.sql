-- Energy: certificate kinds (domestic, non-domestic, display), the certificate fields the energy
-- operations read as typed columns (filled here from fields_json for rows loaded before), the
-- building elements of a domestic certificate, and the certificates' recommendations.
ALTER TABLE epc_certificates ADD COLUMN kind TEXT NOT NULL DEFAULT 'domestic';
ALTER TABLE epc_certificates ADD COLUMN uprn_source TEXT;
ALTER TABLE epc_certificates ADD COLUMN solar_water_heating TEXT;
ALTER TABLE epc_certificates ADD COLUMN construction_age_band TEXT;
ALTER TABLE epc_certificates ADD COLUMN floor_level TEXT;
ALTER TABLE epc_certificates ADD COLUMN photo_supply DOUBLE;
ALTER TABLE epc_certificates ADD COLUMN asset_rating INTEGER;
UPDATE epc_certificates SET
    uprn_source = CASE WHEN UPPER(TRIM(json_extract(fields_json, '$."uprn-source"'))) IN ('', 'NO DATA!', 'NODATA!', 'NO DATA', 'INVALID!', 'N/A', 'NULL', 'NAN') THEN NULL ELSE TRIM(json_extract(fields_json, '$."uprn-source"')) END,
    solar_water_heating = CASE WHEN UPPER(TRIM(json_extract(fields_json, '$."solar-water-heating-flag"'))) IN ('', 'NO DATA!', 'NODATA!', 'NO DATA', 'INVALID!', 'N/A', 'NULL', 'NAN') THEN NULL ELSE TRIM(json_extract(fields_json, '$."solar-water-heating-flag"')) END,
    construction_age_band = CASE WHEN UPPER(TRIM(json_extract(fields_json, '$."construction-age-band"'))) IN ('', 'NO DATA!', 'NODATA!', 'NO DATA', 'INVALID!', 'N/A', 'NULL', 'NAN') THEN NULL ELSE TRIM(json_extract(fields_json, '$."construction-age-band"')) END,
    floor_level = CASE WHEN UPPER(TRIM(json_extract(fields_json, '$."floor-level"'))) IN ('', 'NO DATA!', 'NODATA!', 'NO DATA', 'INVALID!', 'N/A', 'NULL', 'NAN') THEN NULL ELSE TRIM(json_extract(fields_json, '$."floor-level"')) END,
    photo_supply = CASE WHEN TRIM(json_extract(fields_json, '$."photo-supply"')) GLOB '[0-9]*' AND NOT TRIM(json_extract(fields_json, '$."photo-supply"')) GLOB '*[^0-9.]*' THEN CAST(TRIM(json_extract(fields_json, '$."photo-supply"')) AS REAL) END;
CREATE INDEX epc_kind_lad_idx ON epc_certificates (local_authority, kind);
CREATE TABLE epc_elements (
    lmk_key TEXT PRIMARY KEY NOT NULL,
    walls_description TEXT,
    walls_energy_eff TEXT,
    roof_description TEXT,
    roof_energy_eff TEXT,
    windows_description TEXT,
    windows_energy_eff TEXT,
    floor_description TEXT,
    floor_energy_eff TEXT,
    mainheat_description TEXT,
    mainheat_energy_eff TEXT,
    mainheatcont_description TEXT,
    mainheatc_energy_eff TEXT,
    hotwater_description TEXT,
    hot_water_energy_eff TEXT,
    lighting_description TEXT,
    lighting_energy_eff TEXT,
    secondheat_description TEXT,
    mechanical_ventilation TEXT,
    flat_top_storey TEXT,
    low_energy_lighting INTEGER,
    flat_storey_count INTEGER,
    source TEXT NOT NULL,
    updated_at TIMESTAMP NOT NULL
);
INSERT INTO epc_elements (lmk_key, walls_description, walls_energy_eff, roof_description, roof_energy_eff, windows_description, windows_energy_eff, floor_description, floor_energy_eff, mainheat_description, mainheat_energy_eff, mainheatcont_description, mainheatc_energy_eff, hotwater_description, hot_water_energy_eff, lighting_description, lighting_energy_eff, secondheat_description, mechanical_ventilation, flat_top_storey, low_energy_lighting, flat_storey_count, source, updated_at)
SELECT
    lmk_key,
    CASE WHEN UPPER(TRIM(json_extract(fields_json, '$."walls-description"'))) IN ('', 'NO DATA!', 'NODATA!', 'NO DATA', 'INVALID!', 'N/A', 'NULL', 'NAN') THEN NULL ELSE TRIM(json_extract(fields_json, '$."walls-description"')) END,
    CASE WHEN UPPER(TRIM(json_extract(fields_json, '$."walls-energy-eff"'))) IN ('', 'NO DATA!', 'NODATA!', 'NO DATA', 'INVALID!', 'N/A', 'NULL', 'NAN') THEN NULL ELSE TRIM(json_extract(fields_json, '$."walls-energy-eff"')) END,
    CASE WHEN UPPER(TRIM(json_extract(fields_json, '$."roof-description"'))) IN ('', 'NO DATA!', 'NODATA!', 'NO DATA', 'INVALID!', 'N/A', 'NULL', 'NAN') THEN NULL ELSE TRIM(json_extract(fields_json, '$."roof-description"')) END,
    CASE WHEN UPPER(TRIM(json_extract(fields_json, '$."roof-energy-eff"'))) IN ('', 'NO DATA!', 'NODATA!', 'NO DATA', 'INVALID!', 'N/A', 'NULL', 'NAN') THEN NULL ELSE TRIM(json_extract(fields_json, '$."roof-energy-eff"')) END,
    CASE WHEN UPPER(TRIM(json_extract(fields_json, '$."windows-description"'))) IN ('', 'NO DATA!', 'NODATA!', 'NO DATA', 'INVALID!', 'N/A', 'NULL', 'NAN') THEN NULL ELSE TRIM(json_extract(fields_json, '$."windows-description"')) END,
    CASE WHEN UPPER(TRIM(json_extract(fields_json, '$."windows-energy-eff"'))) IN ('', 'NO DATA!', 'NODATA!', 'NO DATA', 'INVALID!', 'N/A', 'NULL', 'NAN') THEN NULL ELSE TRIM(json_extract(fields_json, '$."windows-energy-eff"')) END,
    CASE WHEN UPPER(TRIM(json_extract(fields_json, '$."floor-description"'))) IN ('', 'NO DATA!', 'NODATA!', 'NO DATA', 'INVALID!', 'N/A', 'NULL', 'NAN') THEN NULL ELSE TRIM(json_extract(fields_json, '$."floor-description"')) END,
    CASE WHEN UPPER(TRIM(json_extract(fields_json, '$."floor-energy-eff"'))) IN ('', 'NO DATA!', 'NODATA!', 'NO DATA', 'INVALID!', 'N/A', 'NULL', 'NAN') THEN NULL ELSE TRIM(json_extract(fields_json, '$."floor-energy-eff"')) END,
    CASE WHEN UPPER(TRIM(json_extract(fields_json, '$."mainheat-description"'))) IN ('', 'NO DATA!', 'NODATA!', 'NO DATA', 'INVALID!', 'N/A', 'NULL', 'NAN') THEN NULL ELSE TRIM(json_extract(fields_json, '$."mainheat-description"')) END,
    CASE WHEN UPPER(TRIM(json_extract(fields_json, '$."mainheat-energy-eff"'))) IN ('', 'NO DATA!', 'NODATA!', 'NO DATA', 'INVALID!', 'N/A', 'NULL', 'NAN') THEN NULL ELSE TRIM(json_extract(fields_json, '$."mainheat-energy-eff"')) END,
    CASE WHEN UPPER(TRIM(json_extract(fields_json, '$."mainheatcont-description"'))) IN ('', 'NO DATA!', 'NODATA!', 'NO DATA', 'INVALID!', 'N/A', 'NULL', 'NAN') THEN NULL ELSE TRIM(json_extract(fields_json, '$."mainheatcont-description"')) END,
    CASE WHEN UPPER(TRIM(json_extract(fields_json, '$."mainheatc-energy-eff"'))) IN ('', 'NO DATA!', 'NODATA!', 'NO DATA', 'INVALID!', 'N/A', 'NULL', 'NAN') THEN NULL ELSE TRIM(json_extract(fields_json, '$."mainheatc-energy-eff"')) END,
    CASE WHEN UPPER(TRIM(json_extract(fields_json, '$."hotwater-description"'))) IN ('', 'NO DATA!', 'NODATA!', 'NO DATA', 'INVALID!', 'N/A', 'NULL', 'NAN') THEN NULL ELSE TRIM(json_extract(fields_json, '$."hotwater-description"')) END,
    CASE WHEN UPPER(TRIM(json_extract(fields_json, '$."hot-water-energy-eff"'))) IN ('', 'NO DATA!', 'NODATA!', 'NO DATA', 'INVALID!', 'N/A', 'NULL', 'NAN') THEN NULL ELSE TRIM(json_extract(fields_json, '$."hot-water-energy-eff"')) END,
    CASE WHEN UPPER(TRIM(json_extract(fields_json, '$."lighting-description"'))) IN ('', 'NO DATA!', 'NODATA!', 'NO DATA', 'INVALID!', 'N/A', 'NULL', 'NAN') THEN NULL ELSE TRIM(json_extract(fields_json, '$."lighting-description"')) END,
    CASE WHEN UPPER(TRIM(json_extract(fields_json, '$."lighting-energy-eff"'))) IN ('', 'NO DATA!', 'NODATA!', 'NO DATA', 'INVALID!', 'N/A', 'NULL', 'NAN') THEN NULL ELSE TRIM(json_extract(fields_json, '$."lighting-energy-eff"')) END,
    CASE WHEN UPPER(TRIM(json_extract(fields_json, '$."secondheat-description"'))) IN ('', 'NO DATA!', 'NODATA!', 'NO DATA', 'INVALID!', 'N/A', 'NULL', 'NAN') THEN NULL ELSE TRIM(json_extract(fields_json, '$."secondheat-description"')) END,
    CASE WHEN UPPER(TRIM(json_extract(fields_json, '$."mechanical-ventilation"'))) IN ('', 'NO DATA!', 'NODATA!', 'NO DATA', 'INVALID!', 'N/A', 'NULL', 'NAN') THEN NULL ELSE TRIM(json_extract(fields_json, '$."mechanical-ventilation"')) END,
    CASE WHEN UPPER(TRIM(json_extract(fields_json, '$."flat-top-storey"'))) IN ('', 'NO DATA!', 'NODATA!', 'NO DATA', 'INVALID!', 'N/A', 'NULL', 'NAN') THEN NULL ELSE TRIM(json_extract(fields_json, '$."flat-top-storey"')) END,
    CASE WHEN TRIM(json_extract(fields_json, '$."low-energy-lighting"')) GLOB '[0-9]*' AND NOT TRIM(json_extract(fields_json, '$."low-energy-lighting"')) GLOB '*[^0-9]*' AND LENGTH(TRIM(json_extract(fields_json, '$."low-energy-lighting"'))) < 10 THEN CAST(TRIM(json_extract(fields_json, '$."low-energy-lighting"')) AS INTEGER) END,
    CASE WHEN TRIM(json_extract(fields_json, '$."flat-storey-count"')) GLOB '[0-9]*' AND NOT TRIM(json_extract(fields_json, '$."flat-storey-count"')) GLOB '*[^0-9]*' AND LENGTH(TRIM(json_extract(fields_json, '$."flat-storey-count"'))) < 10 THEN CAST(TRIM(json_extract(fields_json, '$."flat-storey-count"')) AS INTEGER) END,
    source,
    updated_at
FROM epc_certificates;
CREATE TABLE epc_recommendations (
    rec_key TEXT PRIMARY KEY NOT NULL,
    lmk_key TEXT NOT NULL,
    item INTEGER NOT NULL,
    summary TEXT,
    description TEXT,
    improvement_id TEXT,
    improvement_id_text TEXT,
    indicative_cost TEXT,
    payback_type TEXT,
    co2_impact TEXT,
    source TEXT NOT NULL,
    updated_at TIMESTAMP NOT NULL
);
CREATE INDEX epc_recommendations_lmk_idx ON epc_recommendations (lmk_key, item);
CREATE INDEX building_footprints_x_idx ON building_footprints (min_x, max_x);
