-- kv_counter counts the store's commits: every write transaction adds one to it in its
-- commit, and every transaction reads it in its first round trip, so that each replica may
-- keep a cache of entries valid for as long as the count has not moved (see cache.go).
-- Its one row is updated on every commit: with room on its page (fillfactor) the update is
-- HOT and its dead versions are pruned in place, without waiting for a vacuum.
CREATE TABLE kv_counter (
	id int    PRIMARY KEY CHECK (id = 1),
	n  bigint NOT NULL
) WITH (fillfactor = 10);
INSERT INTO kv_counter VALUES (1, 0);
