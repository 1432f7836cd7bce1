"""Schemathesis hooks for `.ci/run`.

An `Idempotency-Key` must be new for each new request (a key reused for a different request is
422 `idempotency_conflict`, by design). JSON Schema cannot say "unique per request", so the
generated key, when the test case has one, is replaced by a fresh UUID.
"""

import uuid

import schemathesis


@schemathesis.hook
def before_call(ctx, case, kwargs):
    if case.headers and "Idempotency-Key" in case.headers:
        case.headers["Idempotency-Key"] = str(uuid.uuid4())
