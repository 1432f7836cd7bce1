// The diesel schema shared by both backends. It mirrors migrations/{sqlite,postgres}; the
// `schema_matches_migrations` test checks that every table and column here exists in both.

diesel::table! {
    accounts (id) {
        id -> BigInt,
        name -> Text,
        email -> Nullable<Text>,
        password_hash -> Nullable<Text>,
        balance -> BigInt,
        created_at -> Timestamp,
    }
}

diesel::table! {
    api_keys (id) {
        id -> BigInt,
        account_id -> BigInt,
        key_hash -> Text,
        prefix -> Text,
        last4 -> Text,
        name -> Nullable<Text>,
        created_at -> Timestamp,
        revoked_at -> Nullable<Timestamp>,
    }
}

diesel::table! {
    ledger (id) {
        id -> BigInt,
        account_id -> BigInt,
        kind -> Text,
        operation -> Nullable<Text>,
        credits -> BigInt,
        balance_after -> BigInt,
        request_id -> Nullable<Text>,
        surface -> Text,
        key_id -> Nullable<BigInt>,
        created_at -> Timestamp,
    }
}

diesel::table! {
    meta (key) {
        key -> Text,
        value -> Text,
    }
}

diesel::table! {
    addresses (uprn) {
        uprn -> BigInt,
        parent_uprn -> Nullable<BigInt>,
        class -> Nullable<Text>,
        saon -> Nullable<Text>,
        paon -> Nullable<Text>,
        street -> Nullable<Text>,
        locality -> Nullable<Text>,
        town -> Nullable<Text>,
        postcode -> Nullable<Text>,
        x -> Nullable<Double>,
        y -> Nullable<Double>,
        lat -> Nullable<Double>,
        lon -> Nullable<Double>,
        lad_code -> Nullable<Text>,
        lsoa_code -> Nullable<Text>,
        address_source -> Nullable<Text>,
        position_source -> Nullable<Text>,
        updated_at -> Timestamp,
    }
}

diesel::table! {
    postcodes (postcode) {
        postcode -> Text,
        easting -> Nullable<Double>,
        northing -> Nullable<Double>,
        lat -> Nullable<Double>,
        lon -> Nullable<Double>,
        lad_code -> Nullable<Text>,
        lsoa_code -> Nullable<Text>,
        country_code -> Nullable<Text>,
        quality -> Nullable<Integer>,
        terminated -> Bool,
        source -> Text,
        updated_at -> Timestamp,
        ward_code -> Nullable<Text>,
        msoa_code -> Nullable<Text>,
        county_code -> Nullable<Text>,
        region_code -> Nullable<Text>,
    }
}

diesel::table! {
    area_names (code) {
        code -> Text,
        kind -> Text,
        name -> Text,
        source -> Text,
        updated_at -> Timestamp,
    }
}

diesel::table! {
    places (id) {
        id -> Text,
        name -> Text,
        name_alt -> Nullable<Text>,
        local_type -> Text,
        x -> Double,
        y -> Double,
        postcode_district -> Nullable<Text>,
        district_borough -> Nullable<Text>,
        county_unitary -> Nullable<Text>,
        region -> Nullable<Text>,
        country -> Nullable<Text>,
        source -> Text,
        updated_at -> Timestamp,
    }
}

diesel::table! {
    address_h3 (uprn) {
        uprn -> BigInt,
        cell -> Text,
        source -> Text,
        updated_at -> Timestamp,
    }
}

diesel::table! {
    boundaries (code) {
        code -> Text,
        kind -> Text,
        name -> Nullable<Text>,
        wkb -> Binary,
        min_x -> Double,
        min_y -> Double,
        max_x -> Double,
        max_y -> Double,
        source -> Text,
        updated_at -> Timestamp,
    }
}

diesel::table! {
    epc_certificates (lmk_key) {
        lmk_key -> Text,
        uprn -> Nullable<BigInt>,
        address -> Nullable<Text>,
        postcode -> Nullable<Text>,
        current_rating -> Nullable<Text>,
        potential_rating -> Nullable<Text>,
        current_efficiency -> Nullable<Integer>,
        potential_efficiency -> Nullable<Integer>,
        property_type -> Nullable<Text>,
        built_form -> Nullable<Text>,
        total_floor_area -> Nullable<Double>,
        habitable_rooms -> Nullable<Integer>,
        lodgement_date -> Nullable<Date>,
        inspection_date -> Nullable<Date>,
        tenure -> Nullable<Text>,
        main_fuel -> Nullable<Text>,
        local_authority -> Nullable<Text>,
        fields_json -> Text,
        source -> Text,
        updated_at -> Timestamp,
        kind -> Text,
        uprn_source -> Nullable<Text>,
        solar_water_heating -> Nullable<Text>,
        construction_age_band -> Nullable<Text>,
        floor_level -> Nullable<Text>,
        photo_supply -> Nullable<Double>,
        asset_rating -> Nullable<Integer>,
    }
}

diesel::table! {
    epc_elements (lmk_key) {
        lmk_key -> Text,
        walls_description -> Nullable<Text>,
        walls_energy_eff -> Nullable<Text>,
        roof_description -> Nullable<Text>,
        roof_energy_eff -> Nullable<Text>,
        windows_description -> Nullable<Text>,
        windows_energy_eff -> Nullable<Text>,
        floor_description -> Nullable<Text>,
        floor_energy_eff -> Nullable<Text>,
        mainheat_description -> Nullable<Text>,
        mainheat_energy_eff -> Nullable<Text>,
        mainheatcont_description -> Nullable<Text>,
        mainheatc_energy_eff -> Nullable<Text>,
        hotwater_description -> Nullable<Text>,
        hot_water_energy_eff -> Nullable<Text>,
        lighting_description -> Nullable<Text>,
        lighting_energy_eff -> Nullable<Text>,
        secondheat_description -> Nullable<Text>,
        mechanical_ventilation -> Nullable<Text>,
        flat_top_storey -> Nullable<Text>,
        low_energy_lighting -> Nullable<Integer>,
        flat_storey_count -> Nullable<Integer>,
        source -> Text,
        updated_at -> Timestamp,
    }
}

diesel::table! {
    epc_recommendations (rec_key) {
        rec_key -> Text,
        lmk_key -> Text,
        item -> Integer,
        summary -> Nullable<Text>,
        description -> Nullable<Text>,
        improvement_id -> Nullable<Text>,
        improvement_id_text -> Nullable<Text>,
        indicative_cost -> Nullable<Text>,
        payback_type -> Nullable<Text>,
        co2_impact -> Nullable<Text>,
        source -> Text,
        updated_at -> Timestamp,
    }
}

diesel::table! {
    price_paid (transaction_id) {
        transaction_id -> Text,
        price -> BigInt,
        date -> Date,
        postcode -> Nullable<Text>,
        property_type -> Text,
        new_build -> Bool,
        tenure -> Text,
        paon -> Nullable<Text>,
        saon -> Nullable<Text>,
        street -> Nullable<Text>,
        locality -> Nullable<Text>,
        town -> Nullable<Text>,
        district -> Nullable<Text>,
        county -> Nullable<Text>,
        ppd_category -> Text,
        uprn -> Nullable<BigInt>,
        match_method -> Nullable<Text>,
        match_score -> Nullable<Double>,
        source -> Text,
        updated_at -> Timestamp,
    }
}

diesel::table! {
    ppd_uprn_links (transaction_id) {
        transaction_id -> Text,
        uprn -> BigInt,
        source -> Text,
        updated_at -> Timestamp,
    }
}

diesel::table! {
    leases (unique_id) {
        unique_id -> Text,
        uprn -> Nullable<BigInt>,
        tenure -> Nullable<Text>,
        register_description -> Nullable<Text>,
        county -> Nullable<Text>,
        region -> Nullable<Text>,
        associated_description_id -> Nullable<Text>,
        associated_description -> Nullable<Text>,
        price_paid -> Nullable<BigInt>,
        reg_order -> Nullable<Text>,
        date_of_lease -> Nullable<Date>,
        term_text -> Nullable<Text>,
        term_years -> Nullable<Integer>,
        term_less_days -> Nullable<Integer>,
        term_start -> Nullable<Date>,
        term_end -> Nullable<Date>,
        term_problem -> Nullable<Text>,
        alienation_clause -> Nullable<Bool>,
        source -> Text,
        updated_at -> Timestamp,
    }
}

diesel::table! {
    council_tax (reference) {
        reference -> Text,
        billing_authority -> Nullable<Text>,
        address -> Text,
        postcode -> Nullable<Text>,
        band -> Text,
        uprn -> Nullable<BigInt>,
        match_method -> Nullable<Text>,
        match_score -> Nullable<Double>,
        source -> Text,
        updated_at -> Timestamp,
    }
}

diesel::table! {
    listings (listing_id) {
        listing_id -> Text,
        channel -> Text,
        address -> Nullable<Text>,
        postcode -> Nullable<Text>,
        uprn -> Nullable<BigInt>,
        price -> Nullable<BigInt>,
        bedrooms -> Nullable<Integer>,
        property_type -> Nullable<Text>,
        agent -> Nullable<Text>,
        first_seen -> Timestamp,
        last_seen -> Nullable<Timestamp>,
        last_status -> Nullable<Text>,
        source -> Text,
        updated_at -> Timestamp,
        floor_area_m2 -> Nullable<Double>,
        tenure -> Nullable<Text>,
        unexpired_years -> Nullable<Integer>,
        latitude -> Nullable<Double>,
        longitude -> Nullable<Double>,
        branch -> Nullable<Text>,
        new_home -> Nullable<Bool>,
        feed -> Nullable<Text>,
        uprn_method -> Nullable<Text>,
        uprn_score -> Nullable<Double>,
        removed_at -> Nullable<Timestamp>,
        removal_reason -> Nullable<Text>,
    }
}

diesel::table! {
    listing_snapshots (listing_id, time) {
        listing_id -> Text,
        time -> Timestamp,
        price -> Nullable<BigInt>,
        status -> Nullable<Text>,
        removal_reason -> Nullable<Text>,
    }
}

diesel::table! {
    listing_events (id) {
        id -> BigInt,
        listing_id -> Text,
        event_type -> Text,
        time -> Timestamp,
        price -> Nullable<BigInt>,
        previous_price -> Nullable<BigInt>,
        status -> Nullable<Text>,
        previous_status -> Nullable<Text>,
    }
}

diesel::table! {
    planning_applications (application_id) {
        application_id -> Text,
        reference -> Text,
        authority -> Nullable<Text>,
        address -> Nullable<Text>,
        postcode -> Nullable<Text>,
        uprn -> Nullable<BigInt>,
        match_method -> Nullable<Text>,
        match_score -> Nullable<Double>,
        x -> Nullable<Double>,
        y -> Nullable<Double>,
        received_date -> Nullable<Date>,
        validated_date -> Nullable<Date>,
        decision_date -> Nullable<Date>,
        decision -> Nullable<Text>,
        appeal_decision -> Nullable<Text>,
        appeal_date -> Nullable<Date>,
        cil_liable -> Nullable<Bool>,
        cil_amount -> Nullable<Double>,
        development_type -> Nullable<Text>,
        description -> Nullable<Text>,
        source -> Text,
        updated_at -> Timestamp,
    }
}

diesel::table! {
    planning_portals (lpa_code) {
        lpa_code -> Text,
        organisation -> Nullable<Text>,
        name -> Nullable<Text>,
        portal_url -> Text,
        source -> Text,
        updated_at -> Timestamp,
    }
}

diesel::table! {
    planning_coverage (lad_code) {
        lad_code -> Text,
        name -> Nullable<Text>,
        organisation -> Nullable<Text>,
        organisation_entity -> Nullable<Text>,
        start_date -> Nullable<Date>,
        end_date -> Nullable<Date>,
        source -> Text,
        updated_at -> Timestamp,
    }
}

diesel::table! {
    summary_valuations (valuation_key) {
        valuation_key -> Text,
        list_year -> Integer,
        uarn -> BigInt,
        assessment_reference -> Nullable<Text>,
        scheme_reference -> Nullable<Text>,
        unit_of_measurement -> Nullable<Text>,
        total_area -> Nullable<Double>,
        floor_area_m2 -> Nullable<Double>,
        unadjusted_price -> Nullable<Double>,
        adopted_rv -> Nullable<BigInt>,
        floor_lines -> Integer,
        source -> Text,
        updated_at -> Timestamp,
    }
}

diesel::table! {
    rating_list_entries (entry_key) {
        entry_key -> Text,
        list_year -> Integer,
        uarn -> BigInt,
        billing_authority -> Nullable<Text>,
        ba_reference -> Nullable<Text>,
        description_code -> Nullable<Text>,
        description_text -> Nullable<Text>,
        scat_code -> Nullable<Text>,
        firm_name -> Nullable<Text>,
        address -> Text,
        postcode -> Nullable<Text>,
        rateable_value -> Nullable<BigInt>,
        effective_date -> Date,
        source -> Text,
        updated_at -> Timestamp,
    }
}

diesel::table! {
    uarn_uprn_links (uarn) {
        uarn -> BigInt,
        uprn -> BigInt,
        match_method -> Text,
        match_score -> Nullable<Double>,
        source -> Text,
        updated_at -> Timestamp,
    }
}

diesel::table! {
    load_runs (id) {
        id -> BigInt,
        dataset -> Text,
        file -> Text,
        started_at -> Timestamp,
        finished_at -> Nullable<Timestamp>,
        rows_read -> BigInt,
        loaded -> BigInt,
        updated -> BigInt,
        deleted -> BigInt,
        rejected -> BigInt,
        unchanged -> BigInt,
    }
}

diesel::table! {
    load_rejections (id) {
        id -> BigInt,
        run_id -> BigInt,
        line -> BigInt,
        reason -> Text,
    }
}

diesel::table! {
    oauth_clients (client_id) {
        client_id -> Text,
        client_name -> Nullable<Text>,
        redirect_uris -> Text,
        metadata_document -> Bool,
        created_at -> Timestamp,
        updated_at -> Timestamp,
    }
}

diesel::table! {
    oauth_grants (id) {
        id -> BigInt,
        account_id -> BigInt,
        client_id -> Text,
        resource -> Text,
        scope -> Text,
        created_at -> Timestamp,
        revoked_at -> Nullable<Timestamp>,
    }
}

diesel::table! {
    oauth_codes (code_hash) {
        code_hash -> Text,
        client_id -> Text,
        account_id -> BigInt,
        redirect_uri -> Text,
        code_challenge -> Text,
        resource -> Text,
        scope -> Text,
        expires_at -> Timestamp,
        used_at -> Nullable<Timestamp>,
        grant_id -> Nullable<BigInt>,
        created_at -> Timestamp,
    }
}

diesel::table! {
    oauth_refresh_tokens (token_hash) {
        token_hash -> Text,
        grant_id -> BigInt,
        expires_at -> Timestamp,
        used_at -> Nullable<Timestamp>,
        created_at -> Timestamp,
    }
}

diesel::table! {
    web_sessions (id_hash) {
        id_hash -> Text,
        account_id -> BigInt,
        csrf_token -> Text,
        created_at -> Timestamp,
        expires_at -> Timestamp,
    }
}

diesel::table! {
    ledger_daily (account_id, day, operation, surface) {
        account_id -> BigInt,
        day -> Date,
        operation -> Text,
        surface -> Text,
        calls -> BigInt,
        credits -> BigInt,
    }
}

diesel::joinable!(ledger_daily -> accounts (account_id));
diesel::joinable!(api_keys -> accounts (account_id));
diesel::joinable!(ledger -> accounts (account_id));
diesel::joinable!(oauth_grants -> accounts (account_id));
diesel::joinable!(oauth_refresh_tokens -> oauth_grants (grant_id));
diesel::joinable!(web_sessions -> accounts (account_id));
diesel::joinable!(load_rejections -> load_runs (run_id));

diesel::table! {
    lha_rates (rate_key) {
        rate_key -> Text,
        brma -> Text,
        brma_code -> Nullable<Text>,
        category -> Text,
        weekly_rate_pence -> BigInt,
        valid_from -> Nullable<Date>,
        source -> Text,
        updated_at -> Timestamp,
    }
}

diesel::table! {
    brma_areas (area_key) {
        area_key -> Text,
        area -> Text,
        area_kind -> Text,
        brma -> Text,
        brma_code -> Nullable<Text>,
        source -> Text,
        updated_at -> Timestamp,
    }
}

diesel::table! {
    market_geographies (geography) {
        geography -> Text,
        geo_kind -> Text,
        parent -> Nullable<Text>,
        residential_stock -> Nullable<BigInt>,
        n_districts -> Nullable<BigInt>,
        grain -> Nullable<Text>,
        base_period -> Nullable<Text>,
        index_method -> Nullable<Text>,
        index_decision -> Nullable<Text>,
        n_pairs -> Nullable<BigInt>,
        n_sales -> Nullable<BigInt>,
        last_settled -> Nullable<Text>,
        forecast_method -> Nullable<Text>,
        forecast_coverage -> Nullable<Text>,
        source -> Text,
        updated_at -> Timestamp,
    }
}

diesel::table! {
    market_index_points (geography, period, is_forecast) {
        geography -> Text,
        period -> Text,
        level -> Nullable<Double>,
        log_se -> Nullable<Double>,
        lo -> Nullable<Double>,
        hi -> Nullable<Double>,
        n -> Nullable<BigInt>,
        is_forecast -> Bool,
        raw_level -> Nullable<Double>,
        filled -> Bool,
    }
}

diesel::table! {
    market_volume (geography, month) {
        geography -> Text,
        month -> Text,
        txn_count -> BigInt,
        txn_count_ppd_a -> BigInt,
        txn_count_ppd_b -> BigInt,
        txn_count_new_build -> BigInt,
        txn_count_uprn_matched -> BigInt,
        median_price -> Nullable<Double>,
        p25_price -> Nullable<Double>,
        p75_price -> Nullable<Double>,
        mean_price -> Nullable<Double>,
    }
}

diesel::table! {
    hpi_reference (hpi_key) {
        hpi_key -> Text,
        area_code -> Text,
        region_name -> Nullable<Text>,
        month -> Text,
        hpi_index -> Nullable<Double>,
        average_price -> Nullable<BigInt>,
        sales_volume -> Nullable<BigInt>,
        source -> Text,
        updated_at -> Timestamp,
    }
}

diesel::allow_tables_to_appear_in_same_query!(
    accounts,
    api_keys,
    ledger,
    ledger_daily,
    meta,
    addresses,
    postcodes,
    boundaries,
    area_names,
    places,
    address_h3,
    epc_certificates,
    epc_elements,
    epc_recommendations,
    price_paid,
    load_runs,
    load_rejections,
    lha_rates,
    brma_areas,
    market_geographies,
    market_index_points,
    market_volume,
    hpi_reference,
    rating_list_entries,
    summary_valuations,
    uarn_uprn_links,
    oauth_clients,
    oauth_grants,
    oauth_codes,
    oauth_refresh_tokens,
    web_sessions,
);

diesel::table! {
    spatial_features (id) {
        id -> Text,
        dataset -> Text,
        reference -> Nullable<Text>,
        name -> Nullable<Text>,
        category -> Nullable<Text>,
        status -> Nullable<Text>,
        value -> Nullable<Double>,
        organisation -> Nullable<Text>,
        entry_date -> Nullable<Date>,
        wkb -> Nullable<Binary>,
        x -> Nullable<Double>,
        y -> Nullable<Double>,
        min_x -> Double,
        min_y -> Double,
        max_x -> Double,
        max_y -> Double,
        attributes_json -> Text,
        source -> Text,
        updated_at -> Timestamp,
    }
}

diesel::table! {
    layer_coverage (id) {
        id -> Text,
        dataset -> Text,
        lad_code -> Text,
        vintage -> Nullable<Date>,
        source -> Text,
        updated_at -> Timestamp,
    }
}

diesel::table! {
    idempotency_keys (account_id, idem_key) {
        account_id -> BigInt,
        idem_key -> Text,
        request_hash -> Text,
        operation -> Text,
        body -> Text,
        credits_charged -> BigInt,
        credits_remaining -> BigInt,
        created_at -> Timestamp,
    }
}

diesel::table! {
    coverage_register (lad_code) {
        lad_code -> Text,
        name -> Nullable<Text>,
        addresses -> BigInt,
        register_json -> Text,
        source -> Text,
        updated_at -> Timestamp,
    }
}

diesel::table! {
    catalogue_areas (area_id) {
        area_id -> Text,
        kind -> Text,
        name -> Nullable<Text>,
        parent -> Nullable<Text>,
        addresses -> BigInt,
        sales -> BigInt,
        index_periods -> BigInt,
        forecast_periods -> BigInt,
        last_settled -> Nullable<Text>,
        source -> Text,
        updated_at -> Timestamp,
    }
}

diesel::table! {
    valuations (uprn) {
        uprn -> BigInt,
        model_version -> Text,
        as_of -> Text,
        district -> Nullable<Text>,
        property_type -> Nullable<Text>,
        tenure -> Nullable<Text>,
        floor_area -> Nullable<Double>,
        floor_area_source -> Nullable<Text>,
        value -> Nullable<Double>,
        lo -> Nullable<Double>,
        hi -> Nullable<Double>,
        coverage -> Nullable<Double>,
        evidence_class -> Nullable<Text>,
        weight_anchor -> Nullable<Double>,
        weight_comparables -> Nullable<Double>,
        weight_hedonic -> Nullable<Double>,
        estimate_anchor -> Nullable<Double>,
        estimate_comparables -> Nullable<Double>,
        estimate_hedonic -> Nullable<Double>,
        n_comparables -> Nullable<BigInt>,
        n_comparables_fenced -> Nullable<BigInt>,
        n_hedonic -> Nullable<BigInt>,
        hedonic_pooled -> Nullable<Bool>,
        last_sale_price -> Nullable<BigInt>,
        last_sale_date -> Nullable<Date>,
        refusal -> Nullable<Text>,
        source -> Text,
        updated_at -> Timestamp,
    }
}

diesel::table! {
    valuation_vintages (vintage_key) {
        vintage_key -> Text,
        model_version -> Text,
        as_of -> Text,
        n_valued -> BigInt,
        n_refused -> BigInt,
        n_calibration -> BigInt,
        calibration_coverage -> Nullable<Double>,
        calibration_json -> Text,
        built_at -> Timestamp,
        source -> Text,
        updated_at -> Timestamp,
    }
}

diesel::table! {
    valuation_accuracy (accuracy_key) {
        accuracy_key -> Text,
        basis -> Text,
        model_version -> Text,
        month -> Text,
        asset_class -> Text,
        property_type -> Text,
        estimator -> Text,
        n -> BigInt,
        mdape -> Double,
        ppe10 -> Double,
        ppe20 -> Double,
        source -> Text,
        updated_at -> Timestamp,
    }
}

diesel::table! {
    valuation_comparables (uprn, line) {
        uprn -> BigInt,
        line -> Integer,
        comp_uprn -> Nullable<BigInt>,
        sale_month -> Text,
        price -> BigInt,
        property_type -> Text,
        floor_area -> Nullable<Double>,
        tier -> Text,
        index_geography -> Text,
        time_factor -> Double,
        size_factor -> Double,
        adjusted -> Double,
        kept -> Bool,
        fence_lo -> Nullable<Double>,
        fence_hi -> Nullable<Double>,
        source -> Text,
        updated_at -> Timestamp,
        distance_m -> Nullable<Double>,
    }
}

diesel::allow_tables_to_appear_in_same_query!(
    valuations,
    valuation_vintages,
    valuation_accuracy,
    valuation_comparables,
);

diesel::table! {
    titles (title_number) {
        title_number -> Text,
        register -> Text,
        tenure -> Nullable<Text>,
        property_address -> Nullable<Text>,
        district -> Nullable<Text>,
        county -> Nullable<Text>,
        region -> Nullable<Text>,
        postcode -> Nullable<Text>,
        multiple_address -> Nullable<Bool>,
        price_paid -> Nullable<BigInt>,
        date_added -> Nullable<Date>,
        additional_proprietor -> Nullable<Bool>,
        proprietors_json -> Text,
        file_month -> Nullable<Text>,
        uprn -> Nullable<BigInt>,
        match_method -> Nullable<Text>,
        match_score -> Nullable<Double>,
        source -> Text,
        updated_at -> Timestamp,
    }
}

diesel::table! {
    title_proprietors (id) {
        id -> Text,
        title_number -> Text,
        position -> Integer,
        name -> Text,
        name_key -> Text,
        company_number -> Nullable<Text>,
        source -> Text,
        updated_at -> Timestamp,
    }
}

diesel::table! {
    title_price_history (obs_key) {
        obs_key -> Text,
        title_number -> Text,
        register -> Text,
        date_added -> Date,
        price_paid -> BigInt,
        first_seen_month -> Nullable<Text>,
        tenure -> Nullable<Text>,
        proprietorship_category -> Nullable<Text>,
        source -> Text,
        updated_at -> Timestamp,
    }
}

diesel::table! {
    companies (company_number) {
        company_number -> Text,
        name -> Text,
        category -> Nullable<Text>,
        status -> Nullable<Text>,
        country_of_origin -> Nullable<Text>,
        incorporation_date -> Nullable<Date>,
        dissolution_date -> Nullable<Date>,
        address_care_of -> Nullable<Text>,
        address_po_box -> Nullable<Text>,
        address_line_1 -> Nullable<Text>,
        address_line_2 -> Nullable<Text>,
        post_town -> Nullable<Text>,
        address_county -> Nullable<Text>,
        address_country -> Nullable<Text>,
        postcode -> Nullable<Text>,
        sic_1 -> Nullable<Text>,
        sic_2 -> Nullable<Text>,
        sic_3 -> Nullable<Text>,
        sic_4 -> Nullable<Text>,
        charges_total -> Nullable<Integer>,
        charges_outstanding -> Nullable<Integer>,
        charges_part_satisfied -> Nullable<Integer>,
        charges_satisfied -> Nullable<Integer>,
        uri -> Nullable<Text>,
        source -> Text,
        updated_at -> Timestamp,
    }
}

diesel::table! {
    private_rents (pipr_key) {
        pipr_key -> Text,
        area_code -> Text,
        area_name -> Nullable<Text>,
        region_name -> Nullable<Text>,
        month -> Text,
        rent_index -> Nullable<Double>,
        monthly_change -> Nullable<Double>,
        annual_change -> Nullable<Double>,
        rental_price -> Nullable<BigInt>,
        source -> Text,
        updated_at -> Timestamp,
    }
}

diesel::table! {
    listing_index_points (kind, area_key, month) {
        kind -> Text,
        area_key -> Text,
        month -> Text,
        level -> Nullable<Double>,
        se -> Nullable<Double>,
        lo -> Nullable<Double>,
        hi -> Nullable<Double>,
        n -> BigInt,
        shrunk -> Bool,
        filled -> Bool,
        status -> Text,
        pipr_level -> Nullable<Double>,
        parent -> Nullable<Text>,
        source -> Text,
        updated_at -> Timestamp,
    }
}

diesel::allow_tables_to_appear_in_same_query!(private_rents, listing_index_points,);

diesel::table! {
    land_parcels (inspire_id) {
        inspire_id -> BigInt,
        gml_id -> Nullable<Text>,
        wkb -> Binary,
        min_x -> Double,
        min_y -> Double,
        max_x -> Double,
        max_y -> Double,
        area_m2 -> Double,
        lat -> Nullable<Double>,
        lon -> Nullable<Double>,
        valid_from -> Nullable<Timestamp>,
        lad_code -> Nullable<Text>,
        source -> Text,
        updated_at -> Timestamp,
    }
}

diesel::table! {
    building_footprints (building_id) {
        building_id -> Text,
        feature_code -> Nullable<Integer>,
        wkb -> Binary,
        min_x -> Double,
        min_y -> Double,
        max_x -> Double,
        max_y -> Double,
        area_m2 -> Double,
        lad_code -> Nullable<Text>,
        source -> Text,
        updated_at -> Timestamp,
        height_m -> Nullable<Double>,
        lidar_height_m -> Nullable<Double>,
        lidar_volume_m3 -> Nullable<Double>,
        lidar_cells -> Nullable<Integer>,
        lidar_survey_year -> Nullable<Integer>,
        lidar_source -> Nullable<Text>,
        lidar_note -> Nullable<Text>,
        lidar_built -> Nullable<Text>,
    }
}

diesel::table! {
    lidar_tiles (tile_key) {
        tile_key -> Text,
        tile -> Text,
        dsm_path -> Text,
        dtm_path -> Text,
        min_x -> Double,
        min_y -> Double,
        max_x -> Double,
        max_y -> Double,
        cell_x -> Double,
        cell_y -> Double,
        width -> Integer,
        height -> Integer,
        dsm_nodata -> Double,
        dtm_nodata -> Double,
        survey_year -> Integer,
        dsm_bytes -> BigInt,
        dtm_bytes -> BigInt,
        dsm_modified -> BigInt,
        dtm_modified -> BigInt,
        source -> Text,
        updated_at -> Timestamp,
    }
}

diesel::table! {
    parcel_buildings (id) {
        id -> Text,
        inspire_id -> BigInt,
        building_id -> Text,
        overlap_m2 -> Double,
        score -> Double,
        method -> Text,
        source -> Text,
        updated_at -> Timestamp,
    }
}

diesel::table! {
    building_attributes (uprn) {
        uprn -> BigInt,
        floors -> Nullable<Integer>,
        basement -> Nullable<Bool>,
        green_roof -> Nullable<Bool>,
        construction_material -> Nullable<Text>,
        roof_shape -> Nullable<Text>,
        roof_material -> Nullable<Text>,
        solar_panels -> Nullable<Bool>,
        source -> Text,
        updated_at -> Timestamp,
    }
}

diesel::table! {
    address_footprints (uprn) {
        uprn -> BigInt,
        building_id -> Text,
        method -> Text,
        score -> Double,
        source -> Text,
        updated_at -> Timestamp,
    }
}

diesel::table! {
    parcel_addresses (uprn) {
        uprn -> BigInt,
        inspire_id -> BigInt,
        method -> Text,
        score -> Double,
        source -> Text,
        updated_at -> Timestamp,
    }
}

diesel::table! {
    parcel_titles (id) {
        id -> Text,
        title_number -> Text,
        inspire_id -> BigInt,
        uprn -> BigInt,
        method -> Text,
        score -> Double,
        source -> Text,
        updated_at -> Timestamp,
    }
}

diesel::table! {
    parcel_stats (inspire_id) {
        inspire_id -> BigInt,
        lad_code -> Nullable<Text>,
        lsoa_code -> Nullable<Text>,
        area_m2 -> Double,
        n_buildings -> Integer,
        footprint_m2 -> Nullable<Double>,
        built_coverage -> Nullable<Double>,
        n_units_via_buildings -> Integer,
        address_count_residential -> Integer,
        address_count_commercial -> Integer,
        landuse_tier_a -> Nullable<Text>,
        landuse_tier_b -> Nullable<Text>,
        nlud_code -> Nullable<Text>,
        source -> Text,
        updated_at -> Timestamp,
    }
}

diesel::table! {
    land_link_coverage (lad_code) {
        lad_code -> Text,
        parcels -> BigInt,
        parcels_measured -> BigInt,
        parcels_with_address -> BigInt,
        addresses -> BigInt,
        addresses_in_parcel -> BigInt,
        buildings -> BigInt,
        buildings_on_parcel -> BigInt,
        titles_linked -> BigInt,
        titles_on_parcel -> BigInt,
        source -> Text,
        updated_at -> Timestamp,
    }
}

diesel::allow_tables_to_appear_in_same_query!(
    land_parcels,
    building_footprints,
    parcel_buildings,
    parcel_addresses,
    address_footprints,
    building_attributes,
    parcel_titles,
    parcel_stats,
    land_link_coverage,
);

diesel::allow_columns_to_appear_in_same_group_by_clause!(address_h3::cell, addresses::class);

diesel::table! {
    auction_lots (lot_key) {
        lot_key -> Text,
        auction_house -> Text,
        auction_date -> Date,
        lot_number -> Text,
        address -> Text,
        postcode -> Nullable<Text>,
        district -> Nullable<Text>,
        lot_type -> Text,
        tenure -> Nullable<Text>,
        lease_years_remaining -> Nullable<Integer>,
        vacant -> Nullable<Bool>,
        rent_passing_pa -> Nullable<BigInt>,
        guide_low -> Nullable<BigInt>,
        guide_high -> Nullable<BigInt>,
        outcome -> Text,
        hammer_price -> Nullable<BigInt>,
        net_initial_yield_pct -> Nullable<Double>,
        source_url -> Nullable<Text>,
        description -> Nullable<Text>,
        uprn -> Nullable<BigInt>,
        match_method -> Nullable<Text>,
        match_score -> Nullable<Double>,
        address_key -> Text,
        property_key -> Nullable<Text>,
        source -> Text,
        updated_at -> Timestamp,
    }
}

diesel::table! {
    saved_searches (search_id) {
        search_id -> Text,
        account_id -> BigInt,
        name -> Text,
        operation -> Text,
        parameters -> Text,
        created_at -> Timestamp,
        updated_at -> Timestamp,
        last_run_at -> Nullable<Timestamp>,
        last_run_keys -> Nullable<Text>,
    }
}

diesel::table! {
    cost_series_points (point_key) {
        point_key -> Text,
        basis -> Text,
        sector -> Text,
        freq -> Text,
        period -> Text,
        period_start -> Date,
        value -> Double,
        unit -> Text,
        base_period -> Nullable<Text>,
        series_title -> Text,
        source -> Text,
        updated_at -> Timestamp,
    }
}

diesel::table! {
    cost_location_factors (region) {
        region -> Text,
        factor -> Double,
        period -> Nullable<Text>,
        source -> Text,
        updated_at -> Timestamp,
    }
}

diesel::table! {
    cost_benchmarks (bench_key) {
        bench_key -> Text,
        sector -> Text,
        period -> Text,
        period_start -> Date,
        rate_low -> Double,
        rate_mid -> Double,
        rate_high -> Double,
        source -> Text,
        updated_at -> Timestamp,
    }
}

diesel::table! {
    sourcing_features (uprn) {
        uprn -> BigInt,
        building_uprn -> BigInt,
        lad_code -> Nullable<Text>,
        district -> Nullable<Text>,
        x -> Nullable<Double>,
        y -> Nullable<Double>,
        parcel_id -> Nullable<BigInt>,
        use_kind -> Text,
        tenure -> Nullable<Text>,
        value -> Nullable<Double>,
        last_sale_price -> Nullable<BigInt>,
        epc_band -> Nullable<Text>,
        epc_potential_band -> Nullable<Text>,
        lease_years -> Nullable<Double>,
        owner_company_number -> Nullable<Text>,
        owner_register -> Nullable<Text>,
        owner_since -> Nullable<Date>,
        owner_price_paid -> Nullable<BigInt>,
        asking_price -> Nullable<BigInt>,
        first_asking_price -> Nullable<BigInt>,
        listed_on -> Nullable<Date>,
        reductions -> Nullable<Integer>,
        rent_pcm -> Nullable<Double>,
        auction_unsold -> Nullable<Integer>,
        last_guide -> Nullable<BigInt>,
        building_residential -> Integer,
        building_commercial -> Integer,
        detail_json -> Text,
        as_of -> Date,
        source -> Text,
        updated_at -> Timestamp,
    }
}

diesel::table! {
    commercial_rent_index (point_key) {
        point_key -> Text,
        series_key -> Text,
        area_code -> Text,
        sector -> Text,
        list_year -> Integer,
        index_level -> Nullable<Double>,
        link_ratio -> Nullable<Double>,
        n_constant -> Nullable<BigInt>,
        n_entries -> BigInt,
        median_rateable_value -> Nullable<BigInt>,
        reason -> Nullable<Text>,
        measured -> Bool,
        n_measured -> Nullable<BigInt>,
        median_rv_per_m2 -> Nullable<Double>,
        updated_at -> Timestamp,
    }
}

diesel::table! {
    commercial_stock (uarn) {
        uarn -> BigInt,
        lad_code -> Text,
        sector -> Text,
        list_year -> Integer,
        rateable_value -> Nullable<BigInt>,
        updated_at -> Timestamp,
    }
}

diesel::table! {
    commercial_capital_index (point_key) {
        point_key -> Text,
        series_key -> Text,
        area_code -> Text,
        sector -> Text,
        quarter -> Text,
        level -> Nullable<Double>,
        log_se -> Nullable<Double>,
        n_pairs -> BigInt,
        series_pairs -> BigInt,
        base_quarter -> Nullable<Text>,
        withheld -> Nullable<Text>,
        pair_sources -> Text,
        source -> Text,
        updated_at -> Timestamp,
        own_weight -> Nullable<Double>,
    }
}

diesel::table! {
    osm_buildings (osm_key) {
        osm_key -> Text,
        kind -> Text,
        building -> Nullable<Text>,
        x -> Double,
        y -> Double,
        min_x -> Double,
        min_y -> Double,
        max_x -> Double,
        max_y -> Double,
        wkb -> Nullable<Binary>,
        area_m2 -> Nullable<Double>,
        height_m -> Nullable<Double>,
        levels -> Nullable<Integer>,
        roof_shape -> Nullable<Text>,
        roof_material -> Nullable<Text>,
        rooftop_pv -> Nullable<Text>,
        source -> Text,
        updated_at -> Timestamp,
    }
}

diesel::table! {
    osm_footprint_links (osm_key) {
        osm_key -> Text,
        building_id -> Text,
        method -> Text,
        overlap_share -> Double,
        source -> Text,
        updated_at -> Timestamp,
    }
}

diesel::table! {
    hmo_licences (licence_key) {
        licence_key -> Text,
        licence_number -> Text,
        authority -> Text,
        address -> Text,
        postcode -> Nullable<Text>,
        storeys -> Nullable<Integer>,
        max_occupants -> Nullable<Integer>,
        households -> Nullable<Integer>,
        licence_start -> Nullable<Date>,
        licence_end -> Nullable<Date>,
        uprn -> Nullable<BigInt>,
        match_method -> Nullable<Text>,
        match_score -> Nullable<Double>,
        source -> Text,
        updated_at -> Timestamp,
    }
}

diesel::allow_tables_to_appear_in_same_query!(osm_buildings, osm_footprint_links);
