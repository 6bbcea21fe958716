-- The change feed (issue 37): every commit writes, in its own round trip, the keys it
-- changed, under its count (kv_counter's n after it). A replica whose cache is at count c
-- and finds the store at m reads the rows c+1..m in the same round trip as the counter,
-- with each key's entry as its snapshot holds it, and moves its cache on to m key by key
-- instead of emptying it (kv/pg/feed.go). A commit that can't list its keys in a bounded
-- row (a bucket deleted with all it holds, writes sent ahead of the commit, too many keys)
-- writes whole: a replica behind it empties its cache, as it did before the feed.
-- Each commit also deletes the oldest rows past the feed's length or age, a few at a time.
CREATE TABLE kv_changes (
	n       bigint      PRIMARY KEY,
	at      timestamptz NOT NULL DEFAULT now(),
	whole   boolean     NOT NULL DEFAULT false,
	buckets bigint[]    NOT NULL,
	keys    bytea[]     NOT NULL
);

-- A row is written and deleted for every commit: vacuum by the count of dead rows.
ALTER TABLE kv_changes SET (
	autovacuum_vacuum_scale_factor = 0,
	autovacuum_vacuum_threshold = 1000,
	autovacuum_vacuum_cost_delay = 0
);
