-- The debit batch, set-based (issue 20): the same rule as 000042 (decided in arrival order, the
-- accounts locked in id order), but the charged rows are written by ONE INSERT over the arrays
-- after the loop instead of one INSERT per debit inside it. Measured with pgbench on a batch of
-- 64 debits (docs/BENCHMARKS.md): the per-row INSERT was most of the function's time.
--
-- The ledger's two foreign keys go: each ledger row ran two referential checks (a
-- `SELECT ... FOR KEY SHARE` of its account and of its key), which cost more than the row itself.
-- What they guarded still holds: the only writers of charge rows are this function, which locks
-- each account row FOR UPDATE before writing it and answers `no_account` for an account that is
-- not there, and the grant, which updates the account row in the same transaction; accounts and
-- API keys are never deleted (a key is revoked by setting `revoked_at`), so no row can lose its
-- account or key. `credits/tests` check every ledger row names an existing account and key.
ALTER TABLE ledger DROP CONSTRAINT IF EXISTS ledger_account_id_fkey;
ALTER TABLE ledger DROP CONSTRAINT IF EXISTS ledger_key_id_fkey;

CREATE OR REPLACE FUNCTION terrace_debit_batch(
    p_account BIGINT[],
    p_key BIGINT[],
    p_credits BIGINT[],
    p_operation TEXT[],
    p_request TEXT[],
    p_surface TEXT[],
    p_at TIMESTAMP
) RETURNS TABLE (o_ord INT, o_outcome TEXT, o_balance BIGINT)
LANGUAGE plpgsql AS $$
DECLARE
    n INT := coalesce(array_length(p_account, 1), 0);
    ids BIGINT[];
    bals BIGINT[];
    befores BIGINT[];
    revoked BIGINT[];
    outcomes TEXT[] := array_fill(NULL::TEXT, ARRAY[n]);
    after BIGINT[] := array_fill(NULL::BIGINT, ARRAY[n]);
    j INT;
BEGIN
    PERFORM 1 FROM accounts a WHERE a.id = ANY (p_account) ORDER BY a.id FOR UPDATE;
    SELECT coalesce(array_agg(a.id ORDER BY a.id), '{}'), coalesce(array_agg(a.balance ORDER BY a.id), '{}')
        INTO ids, bals
        FROM accounts a WHERE a.id = ANY (p_account);
    befores := bals;
    SELECT coalesce(array_agg(k.id), '{}') INTO revoked
        FROM api_keys k WHERE k.id = ANY (p_key) AND k.revoked_at IS NOT NULL;
    FOR i IN 1 .. n LOOP
        j := array_position(ids, p_account[i]);
        IF j IS NULL THEN
            outcomes[i] := 'no_account';
        ELSIF bals[j] < p_credits[i] THEN
            outcomes[i] := 'insufficient';
            after[i] := bals[j];
        ELSIF p_key[i] IS NOT NULL AND p_key[i] = ANY (revoked) THEN
            outcomes[i] := 'revoked';
            after[i] := bals[j];
        ELSE
            bals[j] := bals[j] - p_credits[i];
            outcomes[i] := 'charged';
            after[i] := bals[j];
        END IF;
    END LOOP;
    -- One INSERT for the batch, in arrival order (the identity follows it).
    INSERT INTO ledger (account_id, kind, operation, credits, balance_after, request_id,
                        surface, key_id, created_at)
        SELECT t.account, 'charge', t.operation, -t.credits, t.after, t.request, t.surface,
               t.key, p_at
        FROM unnest(p_account, p_operation, p_credits, after, p_request, p_surface, p_key,
                    outcomes)
             WITH ORDINALITY AS t(account, operation, credits, after, request, surface, key,
                                  outcome, ord)
        WHERE t.outcome = 'charged'
        ORDER BY t.ord;
    FOR j IN 1 .. coalesce(array_length(ids, 1), 0) LOOP
        IF bals[j] <> befores[j] THEN
            -- The CHECK (balance >= 0) backs the rule applied under the lock.
            UPDATE accounts a SET balance = a.balance - (befores[j] - bals[j]) WHERE a.id = ids[j];
        END IF;
    END LOOP;
    RETURN QUERY SELECT t.ord::INT, t.outcome, t.after
        FROM unnest(outcomes, after) WITH ORDINALITY AS t(outcome, after, ord);
END;
$$;

