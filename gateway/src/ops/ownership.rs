//! Ownership operations (specification part 4.9: ownership): the registered proprietors of a
//! company-owned title, the titles a company holds, and what the register shows for one
//! proprietor, from HM Land Registry's CCOD and OCOD files and Companies House basic company data.

use crate::error::ApiError;
use crate::input::{In, cursor_refused, invalid};
use crate::registry::{Ctx, NoBody, OpDecl, Operation, Price};
use schemars::JsonSchema;
use serde::Deserialize;
use terrace_core::{CursorError, Violation};
use terrace_ownership::titles::{self, CompanyTitles, ProprietorAnswer, TitleAnswer};
use validator::Validate;

const TAG: &str = "ownership";

/// The ownership family's operations, in the order of the specification.
pub static OPS: &[&OpDecl] = &[&PROPRIETOR, &TITLE, &COMPANY];

use crate::input::value_error;

const TITLE_RULE: &str =
    "a title number is up to three letters then one to seven digits, such as DN123456 or TGL12345";
/// [`company_number_ok`] as a pattern.
const COMPANY_NUMBER: &str = "^ *(?:[A-Za-z] *){0,2}(?:[0-9] *){1,8}$";

const COMPANY_RULE: &str =
    "a company number is up to two letters then digits, such as 01234567, SC012345 or OE000123";

/// A company number as the caller may write it: up to two letters then one to eight digits,
/// spaces allowed anywhere ([`COMPANY_NUMBER`] states the same).
fn company_number_ok(s: &str) -> bool {
    let n: String = s.chars().filter(|c| *c != ' ').collect();
    let letters = n.chars().take_while(char::is_ascii_alphabetic).count();
    let digits = &n[letters..];
    letters <= 2 && (1..=8).contains(&digits.len()) && digits.bytes().all(|b| b.is_ascii_digit())
}

/// The path of `GET /v1/ownership/title/{title_number}`.
#[derive(Debug, Deserialize, Validate, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct TitleParams {
    /// An HM Land Registry title number (`DN123456`, `TGL12345`)
    #[validate(length(min = 1, max = 10))]
    #[schemars(regex(pattern = r"^[A-Za-z]{0,3}[0-9]{1,7}$"))]
    pub title_number: String,
}

pub struct Title;

impl Operation for Title {
    type Params = TitleParams;
    type Body = NoBody;
    type Input = String;
    type Output = TitleAnswer;

    fn check(p: TitleParams, _: NoBody) -> Result<String, ApiError> {
        terrace_ownership::parse_title_number(&p.title_number).ok_or_else(|| {
            invalid(
                In::Path,
                vec![value_error("title_number", TITLE_RULE, &p.title_number)],
            )
        })
    }

    async fn run(ctx: &Ctx, title_number: String) -> Result<TitleAnswer, ApiError> {
        Ok(titles::by_title(&ctx.state.db, &title_number).await?)
    }
}

pub(crate) static TITLE: OpDecl = OpDecl {
    id: "ownership_by_title",
    path: "/v1/ownership/title/{title_number}",
    summary: "The registered proprietors of a company-owned title",
    description: "The registered proprietors of a title held by a company (HM Land Registry's CCOD for UK companies, OCOD for overseas companies, England and Wales): each proprietor's name, category, company number, country of incorporation (OCOD) and address, with its Companies House record (status, category, dates, SIC codes, charges counts) where loaded; the tenure, property address, price paid and date the proprietor was added; and the UPRNs the property address links to through the address matcher, with the method, the score and the link's coverage. A title not in the bulk files is a 404: titles owned by private individuals or charities are not published in bulk, a gap in the open register rather than a failed look-up. A malformed title number is a 422.",
    price: Price::PerCall(3),
    ..OpDecl::of::<Title>(TAG)
};

fn default_limit() -> i64 {
    titles::PAGE_DEFAULT
}

/// The path and query of `GET /v1/ownership/company/{company_number}`.
#[derive(Debug, Deserialize, Validate, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct CompanyParams {
    /// The company's registry number (`01234567`, `SC012345`, `OE000123`; leading zeros may be
    /// left out)
    #[validate(length(min = 1, max = 12))]
    #[schemars(regex(pattern = COMPANY_NUMBER))]
    pub company_number: String,
    /// The `next_cursor` of the previous page, unchanged; absent for the first page (one written
    /// for another company names no page of this one: 404)
    #[serde(default)]
    #[validate(length(min = 1, max = 504))]
    #[schemars(regex(pattern = terrace_core::cursor::PATTERN))]
    pub cursor: Option<String>,
    /// How many titles at most (1 to 500)
    #[serde(default = "default_limit")]
    #[validate(range(min = 1, max = 500))]
    pub limit: i64,
}

/// A checked company request.
pub struct CompanyInput {
    number: String,
    cursor: Option<String>,
    limit: i64,
}

pub struct Company;

impl Operation for Company {
    type Params = CompanyParams;
    type Body = NoBody;
    type Input = CompanyInput;
    type Output = CompanyTitles;

    fn check(p: CompanyParams, _: NoBody) -> Result<CompanyInput, ApiError> {
        let mut errors = Vec::new();
        if !company_number_ok(&p.company_number) {
            errors.push(crate::input::located(
                In::Path,
                value_error("company_number", COMPANY_RULE, &p.company_number),
            ));
        }
        let cursor =
            match titles::company_cursor_scope(&p.company_number).decode_opt(p.cursor.as_deref()) {
                Ok(None) => None,
                Ok(Some(parts)) => Some(parts.concat()),
                Err(CursorError::Malformed(v)) => {
                    errors.push(crate::input::located(In::Query, v));
                    None
                }
                Err(e @ CursorError::NotThisQuery(_)) if errors.is_empty() => {
                    return Err(cursor_refused(In::Query, e));
                }
                Err(CursorError::NotThisQuery(_)) => None,
            };
        if !errors.is_empty() {
            return Err(ApiError::Validation(errors));
        }
        Ok(CompanyInput {
            number: p.company_number,
            cursor,
            limit: p.limit,
        })
    }

    async fn run(ctx: &Ctx, i: CompanyInput) -> Result<CompanyTitles, ApiError> {
        Ok(titles::company(&ctx.state.db, &i.number, i.cursor.as_deref(), i.limit).await?)
    }
}

pub(crate) static COMPANY: OpDecl = OpDecl {
    id: "ownership_by_company",
    path: "/v1/ownership/company/{company_number}",
    summary: "The titles a company holds",
    description: "The titles in England and Wales that HM Land Registry's CCOD and OCOD files list with this company number in any proprietor slot, each with its proprietors, tenure, address, price paid and linked UPRNs, in title number order in pages of `limit` following `next_cursor` (null on the last page), with `total_titles` and the company's Companies House record (null where the number is not in the loaded file, as for most overseas registry numbers). Leading zeros may be left out of the number. A number that no loaded file names is a 404; a malformed number or cursor is a 422.",
    price: Price::PerCall(3),
    ..OpDecl::of::<Company>(TAG)
};

/// The query of `GET /v1/ownership/proprietor`: exactly one of `name` and `company_number`.
#[derive(Debug, Deserialize, Validate, JsonSchema)]
#[serde(deny_unknown_fields)]
#[schemars(transform = one_key)]
pub struct ProprietorParams {
    /// The proprietor's name as registered (normalised; small typos are tolerated and several
    /// close names are returned as candidates)
    #[serde(default)]
    #[validate(length(min = 2, max = 200))]
    pub name: Option<String>,
    /// The proprietor's company number: the exact look-up
    #[serde(default)]
    #[validate(length(min = 1, max = 12))]
    #[schemars(regex(pattern = COMPANY_NUMBER))]
    pub company_number: Option<String>,
}

/// The schema states the rule: exactly one of `name` and `company_number`.
fn one_key(schema: &mut schemars::Schema) {
    terrace_core::patterns::exactly_one_of(schema, &[&["name"], &["company_number"]]);
}

/// A checked proprietor request.
pub enum ProprietorInput {
    Name(String),
    Number(String),
}

pub struct Proprietor;

impl Operation for Proprietor {
    type Params = ProprietorParams;
    type Body = NoBody;
    type Input = ProprietorInput;
    type Output = ProprietorAnswer;

    fn check(p: ProprietorParams, _: NoBody) -> Result<ProprietorInput, ApiError> {
        match (p.name, p.company_number) {
            (Some(name), None) => {
                // A name with no letter or digit names no proprietor (its schema cannot say
                // "a letter or digit" in every script the normalisation keeps).
                if terrace_ownership::name_key(&name).is_empty() {
                    return Err(ApiError::NotFound(format!(
                        "a proprietor named {name:?} (the name has no letters or digits)"
                    )));
                }
                Ok(ProprietorInput::Name(name))
            }
            (None, Some(n)) => {
                if !company_number_ok(&n) {
                    return Err(invalid(
                        In::Query,
                        vec![value_error("company_number", COMPANY_RULE, &n)],
                    ));
                }
                Ok(ProprietorInput::Number(n))
            }
            (Some(_), Some(_)) | (None, None) => Err(invalid(
                In::Query,
                vec![Violation::new(
                    &[],
                    "value_error",
                    "Value error, give exactly one of name and company_number",
                )],
            )),
        }
    }

    async fn run(ctx: &Ctx, i: ProprietorInput) -> Result<ProprietorAnswer, ApiError> {
        Ok(match i {
            ProprietorInput::Name(n) => titles::proprietor_by_name(&ctx.state.db, &n).await?,
            ProprietorInput::Number(n) => {
                titles::proprietor_by_company_number(&ctx.state.db, &n).await?
            }
        })
    }
}

pub(crate) static PROPRIETOR: OpDecl = OpDecl {
    id: "ownership_proprietor",
    path: "/v1/ownership/proprietor",
    summary: "What the register shows for one proprietor",
    description: "What HM Land Registry's CCOD and OCOD files show for one proprietor, by `company_number` (exact) or by `name` (exactly one of the two): the titles held (`n_distinct_titles`, the titles in title number order up to 500), the total price paid where the register gives one with how many titles give it, the districts held, and the companies' Companies House records with their status. A name is normalised (case, punctuation, `Limited`/`Ltd`) and small typos are tolerated: one close name is answered as `near_name` with the candidates listed, several are `candidates` with no holding chosen; a name look-up is a candidate set, not a portfolio. Directors and persons with significant control are `not_available`. Nothing matching is a 404.",
    price: Price::PerCall(5),
    ..OpDecl::of::<Proprietor>(TAG)
};
