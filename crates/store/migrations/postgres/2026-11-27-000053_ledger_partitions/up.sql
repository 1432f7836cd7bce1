-- The ledger, partitioned by month on `created_at` (issue 20: one row per call is billions of rows
-- a month at the rates the service is built for). What changes, and what does not:
-- - the primary key becomes (id, created_at), since a partitioned table's unique keys must hold
--   its partition key; ids still come from one sequence, in arrival order, as before;
-- - `ledger_account_idx` (account_id, id) is declared on the parent, so every partition has it;
-- - each month is a partition named `ledger_yYYYYmMM`, made ahead of time by
--   `terrace_ledger_partitions` (run by every server's ledger maintenance at start and hourly,
--   and below); a row whose month has no partition yet goes to `ledger_default`, and the next
--   maintenance moves it into its month's new partition, so the default stays (nearly) empty;
-- - retention rolls a whole month up at once (`terrace_ledger_roll_up_month`): the month's
--   charges are summed into `ledger_daily` and the partition is emptied with TRUNCATE, its
--   grants put back, in one transaction; the balance rule (balance = ledger + ledger_daily)
--   holds before, during and after, as with the row-by-row roll-up, which still rolls the rows
--   of the months not wholly past retention;
-- - `terrace_debit_batch` is unchanged: it inserts through the parent.
ALTER TABLE ledger ALTER COLUMN id DROP IDENTITY IF EXISTS;
ALTER TABLE ledger RENAME TO ledger_unpartitioned;
ALTER INDEX ledger_pkey RENAME TO ledger_unpartitioned_pkey;
ALTER INDEX ledger_account_idx RENAME TO ledger_unpartitioned_account_idx;

CREATE SEQUENCE ledger_id_seq AS BIGINT;
SELECT setval('ledger_id_seq', coalesce((SELECT max(id) FROM ledger_unpartitioned), 0) + 1, false);

CREATE TABLE ledger (
    id BIGINT NOT NULL DEFAULT nextval('ledger_id_seq'),
    account_id BIGINT NOT NULL,
    kind TEXT NOT NULL CONSTRAINT ledger_kind_check CHECK (kind IN ('grant', 'charge')),
    operation TEXT,
    credits BIGINT NOT NULL,
    balance_after BIGINT NOT NULL,
    request_id TEXT,
    surface TEXT NOT NULL,
    key_id BIGINT,
    created_at TIMESTAMP NOT NULL,
    PRIMARY KEY (id, created_at)
) PARTITION BY RANGE (created_at);
ALTER SEQUENCE ledger_id_seq OWNED BY ledger.id;
CREATE INDEX ledger_account_idx ON ledger (account_id, id);
CREATE TABLE ledger_default PARTITION OF ledger DEFAULT;

-- Makes the partition of the month holding `p_month` unless it exists; rows of that month that
-- went to the default partition move into it first. One maker at a time across servers (an
-- advisory lock for the transaction). True when it made the partition.
CREATE FUNCTION terrace_ledger_month(p_month DATE) RETURNS BOOLEAN
LANGUAGE plpgsql AS $$
DECLARE
    m DATE := date_trunc('month', p_month)::DATE;
    next DATE := (date_trunc('month', p_month) + INTERVAL '1 month')::DATE;
    part TEXT := format('ledger_y%sm%s', to_char(m, 'YYYY'), to_char(m, 'MM'));
BEGIN
    PERFORM pg_advisory_xact_lock(hashtext('terrace_ledger_partitions'));
    IF to_regclass(part) IS NOT NULL THEN
        RETURN FALSE;
    END IF;
    EXECUTE format('CREATE TABLE %I (LIKE ledger INCLUDING DEFAULTS INCLUDING CONSTRAINTS)', part);
    EXECUTE format(
        'WITH moved AS (DELETE FROM ledger_default WHERE created_at >= %L AND created_at < %L RETURNING *) '
        'INSERT INTO %I SELECT * FROM moved', m, next, part);
    EXECUTE format('ALTER TABLE ledger ATTACH PARTITION %I FOR VALUES FROM (%L) TO (%L)', part, m, next);
    RETURN TRUE;
END;
$$;

-- The ledger's maintenance: a partition for every month that has rows in the default partition,
-- and for the month of `p_now` and the `p_ahead` months after it. Returns the partitions made.
CREATE FUNCTION terrace_ledger_partitions(p_now TIMESTAMP, p_ahead INT) RETURNS INT
LANGUAGE plpgsql AS $$
DECLARE
    made INT := 0;
    months DATE[];
    m DATE;
BEGIN
    SELECT coalesce(array_agg(DISTINCT date_trunc('month', created_at)::DATE), '{}')
        INTO months FROM ledger_default;
    FOR i IN 0 .. greatest(p_ahead, 0) LOOP
        months := months || (date_trunc('month', p_now) + make_interval(months => i))::DATE;
    END LOOP;
    FOREACH m IN ARRAY months LOOP
        IF terrace_ledger_month(m) THEN
            made := made + 1;
        END IF;
    END LOOP;
    RETURN made;
END;
$$;

-- Rolls up the oldest month partition that lies wholly before `p_cutoff` and still holds
-- charges: its charges summed per account, day, operation and surface into `ledger_daily` (as
-- the row-by-row roll-up sums them), the partition emptied and its other rows (grants) put back,
-- in one transaction under the partition's exclusive lock (so two servers never count a month
-- twice). Returns the charges rolled, or NULL when no such month is left.
CREATE FUNCTION terrace_ledger_roll_up_month(p_cutoff TIMESTAMP) RETURNS BIGINT
LANGUAGE plpgsql AS $$
DECLARE
    part TEXT;
    rolled BIGINT;
    found BOOLEAN;
BEGIN
    FOR part IN
        SELECT c.relname
        FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid
        WHERE i.inhparent = 'ledger'::regclass AND c.relname ~ '^ledger_y[0-9]{4}m[0-9]{2}$'
          AND to_date(substr(c.relname, 9), 'YYYY"m"MM') + INTERVAL '1 month' <= p_cutoff
        ORDER BY c.relname
    LOOP
        -- A month already rolled holds only its grants: passed over without a lock.
        EXECUTE format('SELECT EXISTS (SELECT 1 FROM %I WHERE kind = ''charge'')', part) INTO found;
        CONTINUE WHEN NOT found;
        EXECUTE format('LOCK TABLE %I IN ACCESS EXCLUSIVE MODE', part);
        EXECUTE format('SELECT count(*) FROM %I WHERE kind = ''charge''', part) INTO rolled;
        CONTINUE WHEN rolled = 0;
        EXECUTE format(
            'INSERT INTO ledger_daily (account_id, day, operation, surface, calls, credits) '
            'SELECT account_id, created_at::DATE, coalesce(operation, ''''), surface, count(*), sum(credits) '
            'FROM %I WHERE kind = ''charge'' GROUP BY 1, 2, 3, 4 '
            'ON CONFLICT (account_id, day, operation, surface) DO UPDATE '
            'SET calls = ledger_daily.calls + EXCLUDED.calls, credits = ledger_daily.credits + EXCLUDED.credits',
            part);
        CREATE TEMP TABLE terrace_ledger_kept (LIKE ledger) ON COMMIT DROP;
        EXECUTE format('INSERT INTO terrace_ledger_kept SELECT * FROM %I WHERE kind <> ''charge''', part);
        EXECUTE format('TRUNCATE %I', part);
        EXECUTE format('INSERT INTO %I SELECT * FROM terrace_ledger_kept', part);
        DROP TABLE terrace_ledger_kept;
        RETURN rolled;
    END LOOP;
    RETURN NULL;
END;
$$;

-- Existing rows go straight to their months: the partitions first, then the copy.
SELECT terrace_ledger_month(m)
    FROM (SELECT DISTINCT date_trunc('month', created_at)::DATE AS m FROM ledger_unpartitioned) months;
INSERT INTO ledger (id, account_id, kind, operation, credits, balance_after, request_id, surface,
                    key_id, created_at)
    SELECT id, account_id, kind, operation, credits, balance_after, request_id, surface, key_id,
           created_at
    FROM ledger_unpartitioned;
DROP TABLE ledger_unpartitioned;
SELECT terrace_ledger_partitions(now()::TIMESTAMP, 2);
