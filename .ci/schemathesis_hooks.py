"""Schemathesis hooks for `.ci/run` (docs/API-DESIGN.md, "Schemathesis").

1. An `Idempotency-Key` must be new for each new request (a key reused for a different request
   is 422 `idempotency_conflict`, by design). JSON Schema cannot say "unique per request", so a
   generated key that is valid is replaced by a fresh UUID; an invalid one (a negative case) is
   sent as generated, and must be refused.
2. OpenAPI cannot state a rule across query parameters; an operation with one says so in
   `x-exactly-one-of` (the groups of parameters of which exactly one is given). Generated
   queries that break it are left out (the server's 422 for them is tested in
   gateway/tests/it/market.rs).
3. One rule JSON Schema cannot state: a period range's first month is not after its last
   (`start`/`end`, `from`/`to`; 422 otherwise). Generated cases that break only that rule are
   left out; the rule has its own tests (crates/market, gateway/tests/it/market.rs).
"""

import re
import uuid

import schemathesis

VALID_KEY = re.compile(r"[!-~]{1,255}")
MONTH = re.compile(r"[0-9]{4}-[0-9]{2}")


@schemathesis.hook
def before_call(ctx, case, kwargs):
    key = (case.headers or {}).get("Idempotency-Key")
    if isinstance(key, str) and VALID_KEY.fullmatch(key):
        case.headers["Idempotency-Key"] = str(uuid.uuid4())


def _ordered(values) -> bool:
    if not isinstance(values, dict):
        return True
    for first, last in (("start", "end"), ("from", "to")):
        a, b = values.get(first), values.get(last)
        if isinstance(a, str) and isinstance(b, str) and MONTH.match(a) and MONTH.match(b):
            if a[:7] > b[:7]:
                return False
    return True


@schemathesis.hook
def filter_body(ctx, body):
    return _ordered(body)


def _one_group(ctx, query) -> bool:
    operation = getattr(ctx, "operation", None)
    raw = getattr(getattr(operation, "definition", None), "raw", None) or {}
    groups = raw.get("x-exactly-one-of")
    if not groups:
        return True
    given = set(query or {}) if isinstance(query, dict) else set()
    complete = [g for g in groups if all(p in given for p in g)]
    touched = [g for g in groups if any(p in given for p in g)]
    return len(complete) == 1 and len(touched) == 1


@schemathesis.hook
def filter_query(ctx, query):
    return _ordered(query) and _one_group(ctx, query)
