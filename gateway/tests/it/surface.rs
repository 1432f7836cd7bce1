//! The published surface as insta snapshots: the OpenAPI document and the MCP `tools/list`, so a
//! change to either fails with a readable line diff. Review it with `cargo insta review` (or
//! accept it with `INSTA_UPDATE=always`), then regenerate the committed copies with
//! `cargo xtask openapi` (`docs/openapi.json` and `docs/mcp-tools.json`, which the contract and
//! MCP tests and `cargo xtask openapi --check` compare byte for byte).

#[test]
fn openapi_document() {
    insta::assert_snapshot!("openapi", terrace_gateway::openapi::document_text());
}

#[test]
fn mcp_tools_list() {
    insta::assert_snapshot!("mcp_tools", terrace_gateway::mcp::tools_document_text());
}

/// The accuracy filter's example is the model version the build writes (it said
/// `terrace-avm-1` two versions after that one).
#[test]
fn the_accuracy_filter_names_the_current_model_version() {
    let doc = terrace_gateway::openapi::document_text();
    let example = format!("(e.g. `{}`)", terrace_valuation::MODEL_VERSION);
    assert!(
        doc.contains(&example),
        "no {example} in the OpenAPI document"
    );
}
