-- Planning-portal URLs per local planning authority: an operator file (lpa_code, organisation,
-- name, portal_url), keyed by the authority's GSS code (E60/W43).
CREATE TABLE planning_portals (
    lpa_code TEXT PRIMARY KEY NOT NULL,
    organisation TEXT,
    name TEXT,
    portal_url TEXT NOT NULL,
    source TEXT NOT NULL,
    updated_at TIMESTAMP NOT NULL
);
