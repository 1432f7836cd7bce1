#!/usr/bin/env bash
# Schemathesis against the embedded default (issue 13, item 9): every check over the OpenAPI
# document, a bounded number of examples, and any mismatch fails. Run by `.ci/run` after the
# tests have built `target/debug/terrace`; needs the venv at target/ci-venv.
set -euo pipefail
cd "$(dirname "$0")/.."

BIN=target/debug/terrace
ST=target/ci-venv/bin/schemathesis
DATA=$(mktemp -d)
PORT=${TERRACE_ST_PORT:-18473}
export TERRACE_DATA_DIR="$DATA" TERRACE_ADDR="127.0.0.1:$PORT"
unset DATABASE_URL
"$BIN" serve >"$DATA/server.log" 2>&1 &
SERVER=$!
trap 'kill "$SERVER" 2>/dev/null || true; rm -rf "$DATA"' EXIT
for _ in $(seq 1 240); do
  curl -fs "http://127.0.0.1:$PORT/healthz" >/dev/null 2>&1 && break
  sleep 1
done
curl -fs "http://127.0.0.1:$PORT/healthz"
echo
KEY=$("$BIN" accounts create --name schemathesis --credits 100000000 2>/dev/null | tail -n1 |
  python3 -c 'import json,sys; print(json.load(sys.stdin)["api_key"])')

# Judgment calls (docs/API-DESIGN.md, "Schemathesis"):
# - the hook gives each request a fresh Idempotency-Key when the generated one is valid (a
#   reused key is 422 by design);
# - missing_required_header is left out: with the hook it reports the -H header as missing while
#   sending it (the 401 without a key is tested in gateway/tests/it/auth.rs);
# - creating and revoking keys change the account the run uses (the live-key cap, its own key):
#   tested in gateway/tests/it/security.rs instead;
# - rules JSON Schema cannot state (a rule across query parameters, `x-exactly-one-of`; a first
#   month not after the last) are applied by the hooks to generated cases, and the coverage phase,
#   which ignores filter hooks, is off for the two operations with such a query rule
#   (.ci/schemathesis.toml);
# - catalogue_directory and catalogue_record: the form of `cursor` and of `identifier` depends
#   on the `kind` path parameter; a non-blank one of another kind's form names no page or record
#   of that kind and is a 404 saying the form expected (docs/API-DESIGN.md, "Catalogue");
# - planning_designations: the polygon rules JSON Schema cannot state are applied by the hooks
#   (.ci/schemathesis_hooks.py, item 4), and its coverage phase is off (.ci/schemathesis.toml).
# - market_listing_stock and market_agents: the form of `area_code` depends on `area_type` (a
#   district or a GSS code; none for national) and the kinds an `area_id` may have for listings
#   are a subset of the area-id grammar; each rule is tested in gateway/tests/it/listings_market.rs.
# - auctions_comps and market_commercial_market have an `x-exactly-one-of` (uprn or
#   postcode_district; area or lad_code): their coverage phase is off (.ci/schemathesis.toml).
# - the filter_too_much health check is suppressed: an operation with `x-exactly-one-of` over two
#   optional parameters (ownership_proprietor) has about three generated queries in four left out
#   by the hook (both or neither given), and Hypothesis then fails the run on that generation
#   statistic, not on any answer (Schemathesis 4 cannot suppress it per operation); every
#   generated case still runs every check.
# - the five saved-search operations are fuzzed: a generated search name is made unique by the
#   hook (names are unique per account, by design), and the order rules apply inside a stored
#   operation's `parameters` (.ci/schemathesis_hooks.py, item 5; .ci/schemathesis.toml).
PYTHONPATH=.ci SCHEMATHESIS_HOOKS=schemathesis_hooks "$ST" --config-file .ci/schemathesis.toml \
  run "http://127.0.0.1:$PORT/openapi.json" \
  -H "Authorization: Bearer $KEY" \
  --checks all --exclude-checks missing_required_header --suppress-health-check filter_too_much \
  --max-examples "${TERRACE_ST_EXAMPLES:-25}" --seed 13 --no-color \
  --exclude-operation-id account_create_key --exclude-operation-id account_revoke_key \
  --exclude-operation-id market_listing_stock --exclude-operation-id market_agents
