-- Back to 000042's function (one INSERT per debit) and the ledger's foreign keys.
ALTER TABLE ledger ADD CONSTRAINT ledger_account_id_fkey FOREIGN KEY (account_id) REFERENCES accounts (id);
ALTER TABLE ledger ADD CONSTRAINT ledger_key_id_fkey FOREIGN KEY (key_id) REFERENCES api_keys (id);

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
    ids BIGINT[];
    bals BIGINT[];
    befores BIGINT[];
    revoked BIGINT[];
    j INT;
BEGIN
    PERFORM 1 FROM accounts a WHERE a.id = ANY (p_account) ORDER BY a.id FOR UPDATE;
    SELECT coalesce(array_agg(a.id ORDER BY a.id), '{}'), coalesce(array_agg(a.balance ORDER BY a.id), '{}')
        INTO ids, bals
        FROM accounts a WHERE a.id = ANY (p_account);
    befores := bals;
    SELECT coalesce(array_agg(k.id), '{}') INTO revoked
        FROM api_keys k WHERE k.id = ANY (p_key) AND k.revoked_at IS NOT NULL;
    FOR i IN 1 .. coalesce(array_length(p_account, 1), 0) LOOP
        o_ord := i;
        j := array_position(ids, p_account[i]);
        IF j IS NULL THEN
            o_outcome := 'no_account';
            o_balance := NULL;
        ELSIF bals[j] < p_credits[i] THEN
            o_outcome := 'insufficient';
            o_balance := bals[j];
        ELSIF p_key[i] IS NOT NULL AND p_key[i] = ANY (revoked) THEN
            o_outcome := 'revoked';
            o_balance := bals[j];
        ELSE
            bals[j] := bals[j] - p_credits[i];
            INSERT INTO ledger (account_id, kind, operation, credits, balance_after, request_id,
                                surface, key_id, created_at)
                VALUES (p_account[i], 'charge', p_operation[i], -p_credits[i], bals[j],
                        p_request[i], p_surface[i], p_key[i], p_at);
            o_outcome := 'charged';
            o_balance := bals[j];
        END IF;
        RETURN NEXT;
    END LOOP;
    FOR j IN 1 .. coalesce(array_length(ids, 1), 0) LOOP
        IF bals[j] <> befores[j] THEN
            -- The CHECK (balance >= 0) backs the rule applied under the lock.
            UPDATE accounts a SET balance = a.balance - (befores[j] - bals[j]) WHERE a.id = ids[j];
        END IF;
    END LOOP;
END;
$$;
