
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
