//! The OAuth 2.1 authorization server's HTTP side (`routes.rs`): the metadata, registration,
//! authorize, token and revocation endpoints, the sign-in and consent pages, and the outbound
//! fetch of client ID metadata documents. The rules and grant flows are `terrace-oauth`'s.

pub mod routes;
