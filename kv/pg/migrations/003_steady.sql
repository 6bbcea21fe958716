-- Steady through the day (issue 28). Every commit rewrites a few small entries that it
-- shares with every other commit (a document's record, its title's entry, the search
-- index's counts, the previous version made a delta), beside the history it only adds to.
-- Each rewrite leaves a dead row; lookups of those entries walk the dead ones (in the heap
-- and, for an update that could not stay on its page, in the primary key) until they are
-- pruned or vacuumed. Two things keep that bounded, whatever the history's size:

-- 1. An update that changes nothing (a title put again with the same document, a count put
--    again unchanged) writes no row at all. The upsert of a commit still locks the row.
CREATE TRIGGER kv_entries_unchanged BEFORE UPDATE ON kv_entries
	FOR EACH ROW EXECUTE FUNCTION suppress_redundant_updates_trigger();

-- 2. Vacuum by the count of dead rows, not by a share of the table: at the default 20% a
--    table that holds a year of history would wait for a fifth of its size in dead rows,
--    all of them versions of the same few hot entries, before a vacuum. 1,000 dead rows is
--    a few seconds of writes under load, so autovacuum visits at each of its rounds
--    (autovacuum_naptime, a minute by default), unthrottled: it reads only the pages not
--    all-visible (the hot ones; the history is skipped), and the index only when enough
--    of it is dead.
-- (A fillfactor of 80 was measured too: updates HOT 99% instead of 91%, but the same index
-- size and throughput, for a quarter more pages of history; see docs/POSTGRES.md.)
ALTER TABLE kv_entries SET (
	autovacuum_vacuum_scale_factor = 0,
	autovacuum_vacuum_threshold = 1000,
	autovacuum_vacuum_cost_delay = 0
);
