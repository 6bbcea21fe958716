-- kv_expect returns the count of commits (kv_counter) if it is expected, and raises 'KV002'
-- otherwise. A Batch whose reads the replica's cache answered, at that count, sends it
-- before its writes in its commit's one round trip, under the write lock: if another commit
-- came since, the whole round trip is rolled back and the Batch runs again, reading afresh.
CREATE FUNCTION kv_expect(expected bigint) RETURNS bigint LANGUAGE plpgsql AS $$
DECLARE
	now bigint;
BEGIN
	SELECT n INTO now FROM kv_counter;
	IF now <> expected THEN
		RAISE EXCEPTION 'the store is at commit %, not %', now, expected USING ERRCODE = 'KV002';
	END IF;
	RETURN now;
END $$;
