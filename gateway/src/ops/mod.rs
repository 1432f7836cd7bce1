//! The declared operations, one module per resource family. Each family module exports its own
//! `OPS`; [`FAMILIES`] lists the families, and adding an operation to a family is one declaration
//! there plus one line in its `OPS`.

pub mod account;
pub mod address;
pub mod areas;
pub mod auctions;
pub mod catalogue;
pub mod changes;
pub mod commercial;
pub mod energy;
pub mod land;
pub mod listings_market;
pub mod market;
pub mod ownership;
pub mod planning;
pub mod property;
pub mod saved_searches;
pub mod site;
pub mod sourcing;
pub mod valuation;

use crate::registry::OpDecl;
use std::sync::OnceLock;

/// Every family's operations, in the order of the specification; the management operations last.
pub static FAMILIES: &[&[&OpDecl]] = &[
    address::OPS,
    property::OPS,
    market::OPS,
    commercial::OPS,
    listings_market::OPS,
    catalogue::OPS,
    planning::OPS,
    site::OPS,
    sourcing::OPS,
    valuation::OPS,
    land::OPS,
    energy::OPS,
    auctions::OPS,
    areas::OPS,
    ownership::OPS,
    saved_searches::OPS,
    account::OPS,
];

/// Every operation: the families concatenated.
pub fn all() -> &'static [&'static OpDecl] {
    static ALL: OnceLock<Vec<&'static OpDecl>> = OnceLock::new();
    ALL.get_or_init(|| FAMILIES.concat())
}

#[cfg(test)]
mod tests {
    use super::all;
    use crate::registry::Method;
    use std::collections::HashSet;

    /// Every declared operation is served: its method and path reach a route of the HTTP app
    /// (the router answers neither 404 nor 405), and it is a tool on MCP. A declaration left out
    /// of its family's `OPS` is dead code, which the lint gate refuses.
    #[actix_web::test]
    async fn every_declared_operation_is_served_on_http_and_mcp() {
        let app =
            actix_web::test::init_service(actix_web::App::new().configure(crate::http::configure))
                .await;
        let tools: HashSet<String> = crate::mcp::tools()
            .into_iter()
            .map(|t| t.name.to_string())
            .collect();
        let mut ids = HashSet::new();
        for op in all() {
            assert!(ids.insert(op.id), "{} is declared twice", op.id);
            let path = op
                .path
                .split('/')
                .map(|seg| if seg.starts_with('{') { "1" } else { seg })
                .collect::<Vec<_>>()
                .join("/");
            let req = match op.method {
                Method::Get => actix_web::test::TestRequest::get(),
                Method::Post => actix_web::test::TestRequest::post(),
                Method::Patch => actix_web::test::TestRequest::patch(),
                Method::Delete => actix_web::test::TestRequest::delete(),
            };
            let resp = actix_web::test::call_service(&app, req.uri(&path).to_request()).await;
            let status = resp.status().as_u16();
            assert!(
                status != 404 && status != 405,
                "{} {} {} is declared but not served ({status})",
                op.method.as_str(),
                op.path,
                op.id
            );
            assert!(
                tools.contains(op.id),
                "{} is declared but not a tool",
                op.id
            );
        }
        assert_eq!(
            tools.len(),
            all().len(),
            "every tool is a declared operation"
        );
    }
}
