"""Schemathesis hooks for `.ci/run` (docs/API-DESIGN.md, "Schemathesis").

1. An `Idempotency-Key` must be new for each new request (a key reused for a different request
   is 422 `idempotency_conflict`, by design). JSON Schema cannot say "unique per request", so a
   generated key that is valid is replaced by a fresh UUID; an invalid one (a negative case) is
   sent as generated, and must be refused.
2. OpenAPI cannot state a rule across query parameters; an operation with one says so in
   `x-exactly-one-of` (the groups of parameters of which exactly one is given). Generated
   queries that break it are left out (the server's 422 for them is tested in
   gateway/tests/it/market.rs).
3. One rule JSON Schema cannot state: a range's first is not after its last (months
   `start`/`end` and `from`/`to`, days `date_from`/`date_to`, quarters
   `quarter_from`/`quarter_to` and the capital index's `start`/`end` (`2015Q3`), list years
   `start`/`end`, bounds `min_*`/`max_*`; 422
   otherwise). Generated cases that break only that rule are left out; the rule has its own
   tests (crates/market, gateway/tests/it/market.rs, auctions.rs, commercial_market.rs). The same
   for the cost index's `from_period`/`to_period` (a month 2024M01, quarter 2024Q1 or year
   2024): the window is refused when `to_period` ends before `from_period` starts (tested in
   gateway/tests/it/site.rs).
4. The rules of a polygon (`area_geojson` of planning designations) that JSON Schema cannot
   state: each ring closed (its first position repeated as its last), every position inside
   Great Britain, at most 1,000 vertices over all rings, an area above zero and at most
   100 km2. Generated bodies whose polygon may break them are left out, with margins (a
   conservative box for Great Britain, an approximate area); the server's 422 for each is
   tested in gateway/tests/it/planning_lookups.rs.
5. Saved searches. A search's name is unique on the account (a second search of a name is 422 by
   design), which JSON Schema cannot say, so a valid generated name is made unique, as the
   idempotency key is. A saved search's `parameters` are the stored operation's own parameters,
   and the body's `oneOf` states them operation by operation; the order rules of item 3 apply
   inside `parameters` too. A
   PATCH's new `parameters` must be those of the operation the search named in the path stores,
   which no schema of the PATCH body can state: generated PATCH bodies with `parameters` are left
   out (renames are fuzzed). Their
   422s through a saved search are tested in gateway/tests/it/saved_searches.rs.
6. Sourcing. A search's `bbox` is [west, south, east, north] with west below east, south below
   north and at most 0.1 degree a side: an order across the items of one array, which JSON
   Schema cannot state; and a box's corners and a `location` lie on Great Britain's grid (the
   conservative box of item 4: the schema's latitude and longitude ranges are a rectangle, the
   grid's extent is not); generated boxes and points that break these are left out (the 422 is tested in
   gateway/tests/it/sourcing.rs); the same inside a saved search's `parameters`. The area report takes `lad_code`, `postcode_district` or
   both, stated as `x-at-least-one-of`; generated queries with neither are left out (the 422 is
   tested there too).
7. The commercial capital index has no local-by-sector series: with `area` (a local authority),
   `sector` is ALL or left out, a rule across two query parameters that the description states;
   generated queries that break it are left out (the 422 is tested in
   gateway/tests/it/commercial_index.rs).
"""

import re
import uuid

import schemathesis

VALID_KEY = re.compile(r"[!-~]{1,255}")
MONTH = re.compile(r"[0-9]{4}-[0-9]{2}")
QUARTER = re.compile(r"[0-9]{4}Q[1-4]")
PERIOD = re.compile(r"([0-9]{4})(?:M([0-9]{2})|Q([1-4]))?")


def _months(period):
    """The first and last month (year * 12 + month - 1) a cost period covers, or None."""
    m = PERIOD.fullmatch(period)
    if not m:
        return None
    year = int(m.group(1)) * 12
    if m.group(2):
        return (year + int(m.group(2)) - 1,) * 2
    if m.group(3):
        first = year + 3 * (int(m.group(3)) - 1)
        return (first, first + 2)
    return (year, year + 11)


NON_BLANK = re.compile(r"[^ \t\n\r]")
SAVED_SEARCH_NAMED = {"saved_searches_create", "saved_searches_update"}


@schemathesis.hook
def before_call(ctx, case, kwargs):
    key = (case.headers or {}).get("Idempotency-Key")
    if isinstance(key, str) and VALID_KEY.fullmatch(key):
        case.headers["Idempotency-Key"] = str(uuid.uuid4())
    operation = getattr(case, "operation", None)
    raw = getattr(getattr(operation, "definition", None), "raw", None) or {}
    operation_id = raw.get("operationId")
    body = case.body if isinstance(getattr(case, "body", None), dict) else None
    if operation_id in SAVED_SEARCH_NAMED and body is not None:
        name = body.get("name")
        if isinstance(name, str) and NON_BLANK.search(name) and 1 <= len(name) <= 100:
            body["name"] = (name[:60] + " " + uuid.uuid4().hex)[:100]


# The pairs of parameters whose first may not come after its last: months (`start`/`end`,
# `from`/`to`, compared by their month), days and quarters (`date_from`/`date_to`,
# `quarter_from`/`quarter_to`, ISO days compare as text), list years (`start`/`end` as integers)
# and bounds (`min_*`/`max_*`).
ORDERED = (("start", "end"), ("from", "to"), ("date_from", "date_to"), ("quarter_from", "quarter_to"))
DAY = re.compile(r"[0-9]{4}-[0-9]{2}-[0-9]{2}")


def _number(v) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool)


def _ordered(values) -> bool:
    if not isinstance(values, dict):
        return True
    pairs = list(ORDERED)
    pairs += [(k, "max_" + k[4:]) for k in values if isinstance(k, str) and k.startswith("min_")]
    for first, last in pairs:
        a, b = values.get(first), values.get(last)
        if isinstance(a, str) and isinstance(b, str):
            if DAY.fullmatch(a) and DAY.fullmatch(b):
                if a > b:
                    return False
            elif MONTH.match(a) and MONTH.match(b) and a[:7] > b[:7]:
                return False
            elif QUARTER.fullmatch(a) and QUARTER.fullmatch(b) and a > b:
                return False
        elif _number(a) and _number(b) and a > b:
            return False
    a, b = values.get("from_period"), values.get("to_period")
    if isinstance(a, str) and isinstance(b, str):
        ma, mb = _months(a), _months(b)
        if ma and mb and ma[0] > mb[1]:
            return False
    return True


# A box inside the extent of the OSTN15 transformation the server uses for Great Britain.
GB_LON = (-7.5, 1.7)
GB_LAT = (50.0, 60.8)


def _ring_km2(ring) -> float:
    """The ring's area in km2, signed, on a local equirectangular projection (an approximation
    good to a few per cent over Great Britain: enough with the margins below)."""
    import math

    lat0 = math.radians(sum(p[1] for p in ring) / len(ring))
    xs = [p[0] * 111.32 * math.cos(lat0) for p in ring]
    ys = [p[1] * 110.57 for p in ring]
    return sum(xs[i] * ys[i + 1] - xs[i + 1] * ys[i] for i in range(len(ring) - 1)) / 2


def _polygon_ok(area) -> bool:
    if not isinstance(area, dict):
        return True
    coords = area.get("coordinates")
    if not isinstance(coords, list):
        return True
    polygons = [coords] if area.get("type") == "Polygon" else coords
    vertices, km2 = 0, 0.0
    for rings in polygons:
        if not isinstance(rings, list) or not rings:
            return True
        own = 0.0
        for i, ring in enumerate(rings):
            if not isinstance(ring, list) or len(ring) < 4:
                return True
            if any(not isinstance(p, list) or len(p) != 2 for p in ring):
                return True
            if any(not all(isinstance(v, (int, float)) for v in p) for p in ring):
                return True
            if ring[0] != ring[-1]:
                return False
            if not all(GB_LON[0] <= p[0] <= GB_LON[1] and GB_LAT[0] <= p[1] <= GB_LAT[1] for p in ring):
                return False
            vertices += len(ring)
            a = abs(_ring_km2(ring))
            own += a if i == 0 else -a
        km2 += abs(own)
    return vertices <= 1000 and 0.01 < km2 < 90


def _operation_id(ctx):
    raw = getattr(getattr(getattr(ctx, "operation", None), "definition", None), "raw", None) or {}
    return raw.get("operationId")


def _saved_search_ok(ctx, body) -> bool:
    if not isinstance(body, dict) or "parameters" not in body:
        return True
    # New parameters of a PATCH are the stored operation's, which depends on the search named in
    # the path: no schema of the PATCH body can state them (tested in saved_searches.rs).
    if _operation_id(ctx) == "saved_searches_update":
        return False
    return _ordered(body.get("parameters")) and _bbox_ok(body.get("parameters"))


def _in_gb(lon, lat) -> bool:
    return GB_LON[0] <= lon <= GB_LON[1] and GB_LAT[0] <= lat <= GB_LAT[1]


def _bbox_ok(body) -> bool:
    if not isinstance(body, dict):
        return True
    point = body.get("location")
    if isinstance(point, dict) and _number(point.get("lon")) and _number(point.get("lat")):
        if not _in_gb(point["lon"], point["lat"]):
            return False
    box = body.get("bbox")
    if not isinstance(box, list) or len(box) != 4 or not all(_number(v) for v in box):
        return True
    west, south, east, north = box
    return (
        west < east
        and south < north
        and east - west <= 0.1
        and north - south <= 0.1
        and _in_gb(west, south)
        and _in_gb(east, north)
    )


@schemathesis.hook
def filter_body(ctx, body):
    polygon = body.get("area_geojson") if isinstance(body, dict) else None
    return (
        _ordered(body)
        and _polygon_ok(polygon)
        and _saved_search_ok(ctx, body)
        and _bbox_ok(body)
    )


def _one_group(ctx, query) -> bool:
    operation = getattr(ctx, "operation", None)
    raw = getattr(getattr(operation, "definition", None), "raw", None) or {}
    given = set(query or {}) if isinstance(query, dict) else set()
    some = raw.get("x-at-least-one-of")
    if some and not any(all(p in given for p in g) for g in some):
        return False
    groups = raw.get("x-exactly-one-of")
    if not groups:
        return True
    complete = [g for g in groups if all(p in given for p in g)]
    touched = [g for g in groups if any(p in given for p in g)]
    return len(complete) == 1 and len(touched) == 1


def _capital_scope_ok(ctx, query) -> bool:
    if _operation_id(ctx) != "market_commercial_index" or not isinstance(query, dict):
        return True
    return "area" not in query or query.get("sector") in (None, "ALL")


@schemathesis.hook
def filter_query(ctx, query):
    return _ordered(query) and _one_group(ctx, query) and _capital_scope_ok(ctx, query)
