-- The kv store: every bucket's entries in one table. A bucket is a number; the root (the
-- transaction's own top-level buckets) is 0. An entry holds a value, or (child not null)
-- is a nested bucket, whose entries have bucket = child.
CREATE SEQUENCE kv_bucket_ids START 1 INCREMENT BY 64;

CREATE TABLE kv_entries (
	bucket bigint NOT NULL,
	key    bytea  NOT NULL,
	value  bytea,
	child  bigint,
	PRIMARY KEY (bucket, key),
	CHECK ((value IS NULL) <> (child IS NULL))
);

-- kv_compatible raises 'KV001' (kv.ErrIncompatibleValue) unless ok: a commit's bulk
-- statements use it to refuse a value written over a bucket, or a bucket deleted as a value,
-- in the same round trip that writes them.
CREATE FUNCTION kv_compatible(ok boolean, k bytea) RETURNS boolean LANGUAGE plpgsql AS $$
BEGIN
	IF NOT ok THEN
		RAISE EXCEPTION 'key % holds a bucket where a value is wanted, or a value where a bucket is', k
			USING ERRCODE = 'KV001';
	END IF;
	RETURN true;
END $$;
