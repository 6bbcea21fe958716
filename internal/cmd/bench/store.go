package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"time"

	"github.com/compass-mcp/compass-mcp/docstore"
	"github.com/compass-mcp/compass-mcp/kv/bolt"
	"github.com/compass-mcp/compass-mcp/linediff"
	"github.com/compass-mcp/compass-mcp/spaces"
	"go.etcd.io/bbolt"
)

var (
	agent  = docstore.Author{By: "agent:bench", For: "person:ana"}
	person = docstore.Author{By: "person:ana"}
)

// fileSize is the data file's size on disk, and the bytes of its pages in use (bbolt grows
// the file ahead of need, and keeps freed pages for reuse).
func fileSize(db *bbolt.DB) (onDisk, inUse int64, err error) {
	fi, err := os.Stat(db.Path())
	if err != nil {
		return 0, 0, err
	}
	err = db.View(func(tx *bbolt.Tx) error {
		inUse = tx.Size() - int64(db.Stats().FreePageN+db.Stats().PendingPageN)*int64(db.Info().PageSize)
		return nil
	})
	return fi.Size(), inUse, err
}

// measureStorage is item 4: how big the data file gets, through the store that the tools
// call (in this process: the file's size doesn't depend on the transport).
func measureStorage(ctx context.Context, o *options, _ binaries, r *report) error {
	edits, docs := 1000, 10_000
	if o.quick {
		edits, docs = 50, 200
	}
	db, err := bolt.Open(filepath.Join(o.work, "edits.db"), time.Second)
	if err != nil {
		return err
	}
	defer db.Close()
	db.NoSync = true    // the size is the same with or without fsync, and this is faster
	db.MaxBatchSize = 1 // commit each write at once: bbolt's Batch would wait 10 ms for company
	s := docstore.New(bolt.Wrap(db), "personal")
	text := lines(2000, 1)
	saved, err := s.Create(ctx, "Big plan", join(text), docstore.KindWrite, agent)
	if err != nil {
		return err
	}
	firstDisk, firstUse, err := fileSize(db)
	if err != nil {
		return err
	}
	start := time.Now()
	for n := range edits {
		k := (n * 7919) % len(text)
		next := fmt.Sprintf("%d. edited in edit %d, %s", k+1, n, strings.Repeat("x", 16))
		if _, err := s.Edit(ctx, saved.Document.ID, text[k], next, agent); err != nil {
			return err
		}
		text[k] = next
	}
	editTime := time.Since(start)
	editDisk, editUse, err := fileSize(db)
	if err != nil {
		return err
	}
	// Version 1, read back after all those edits, through the store.
	readStart := time.Now()
	var v1 docstore.Version
	err = s.View(ctx, func(r *docstore.Reader) error {
		var err error
		_, v1, err = r.Read(saved.Document.ID, 1)
		return err
	})
	if err != nil {
		return err
	}
	readV1 := time.Since(readStart)
	if v1.Text != join(lines(2000, 1)) {
		return fmt.Errorf("version 1 read back differs from what was written")
	}

	many, err := bolt.Open(filepath.Join(o.work, "many.db"), time.Second)
	if err != nil {
		return err
	}
	defer many.Close()
	many.NoSync, many.MaxBatchSize = true, 1
	notes := docstore.New(bolt.Wrap(many), "personal")
	textBytes := 0
	start = time.Now()
	for i := range docs {
		t := join(lines(20, uint64(1000+i)))
		textBytes += len(t)
		if _, err := notes.Create(ctx, fmt.Sprintf("Note %05d", i), t, docstore.KindWrite, agent); err != nil {
			return err
		}
	}
	createTime := time.Since(start)
	manyDisk, manyUse, err := fileSize(many)
	if err != nil {
		return err
	}

	b := r.section("4. Storage")
	b.WriteString("Through `docstore` (what the tools call), in this process, without fsync (the sizes are the same with it).\n")
	b.WriteString("\"In use\" leaves out the pages bbolt has freed for reuse; the file itself grows ahead of need.\n\n")
	b.WriteString("| data | file on disk | pages in use | per change |\n|---|---|---|---|\n")
	fmt.Fprintf(b, "| one document of %d bytes, version 1 | %s | %s | |\n", len(join(lines(2000, 1))), size(firstDisk), size(firstUse))
	fmt.Fprintf(b, "| the same after %d one-line edits (%d versions) | %s | %s | %s an edit |\n", edits, edits+1, size(editDisk), size(editUse), size((editUse-firstUse)/int64(edits)))
	fmt.Fprintf(b, "| %d documents of 20 lines (%s of text in all) | %s | %s | %s a document |\n\n", docs, size(int64(textBytes)), size(manyDisk), size(manyUse), size(manyUse/int64(docs)))
	fmt.Fprintf(b, "The %d edits took %s (%s each, no fsync); version 1 then read back in %s. The %d documents took %s to create.\n",
		edits, editTime.Round(time.Millisecond), ms(editTime/time.Duration(edits)), ms(readV1), docs, createTime.Round(time.Millisecond))
	layout, err := versionsLayout(many, "personal")
	if err != nil {
		return err
	}
	fmt.Fprintf(b, "\nHow the versions lie in the %d-document file, read from it (bbolt's bucket stats): %s\n", docs, layout)

	what := fmt.Sprintf("data file after %d one-line edits of 100 KB", edits)
	const goal = 5_000_000
	r.target(target{"4", what, fmt.Sprintf("%s (in use %s)", size(editDisk), size(editUse)), "", "≤ 5 MB",
		verdict(editDisk <= goal, fmt.Sprintf("%s an edit in use; bbolt also grows the file ahead of need (to %s here)", size((editUse-firstUse)/int64(edits)), size(editDisk)))})
	r.target(target{"4", fmt.Sprintf("read version 1 of %d versions (store, in-process)", edits+1), ms(readV1), "", "≤ 10 ms", verdict(readV1 <= 10*time.Millisecond, "see section 4")})
	r.target(target{"4", fmt.Sprintf("data file with %d documents of ~1 KB", docs), fmt.Sprintf("%s (in use %s)", size(manyDisk), size(manyUse)), "", "(reported)", ""})
	return nil
}

// worstResult is what a -worst child reports of its one operation.
type worstResult struct {
	Millis     float64 `json:"ms"`
	HWMBefore  int64   `json:"hwm_before"` // the process's peak RSS before the operation
	HWM        int64   `json:"hwm"`        // and after it
	TotalAlloc uint64  `json:"alloc"`      // bytes the operation allocated
	Outcome    string  `json:"outcome"`
}

const hugeLines = 20_000 // of about 50 bytes: 1 MB

// worstChild is bench -worst rewrite|merge|clash -data FILE: one operation on a prepared
// data file, in a process of its own so that its peak memory is its own.
func worstChild(args []string) error {
	fs := flag.NewFlagSet("bench -worst", flag.ContinueOnError)
	data := fs.String("data", "", "the prepared data file")
	if len(args) == 0 {
		return fmt.Errorf("-worst needs rewrite, merge or clash")
	}
	what := args[0]
	if err := fs.Parse(args[1:]); err != nil {
		return err
	}
	// As the server and the CLI hold it: bolt.File commits a lone write at once.
	db, err := bolt.OpenFile(*data, bolt.DefaultTimeout, bolt.DefaultIdle)
	if err != nil {
		return err
	}
	defer db.Close()
	ctx := context.Background()
	s := docstore.New(db, "personal")
	base := lines(hugeLines, 3)
	var do func() (docstore.Saved, error)
	switch what {
	case "rewrite":
		next, _ := halfChanged(base, 4)
		text := join(next)
		do = func() (docstore.Saved, error) { return s.Write(ctx, "Huge", "", text, 0, agent) }
	case "merge":
		_, theirs := halfChanged(base, 4)
		mine := join(sparseChanges(base, theirs, 5))
		do = func() (docstore.Saved, error) { return s.Save(ctx, "Huge", 1, mine, person, linediff.Clash) }
	case "clash":
		mine, _ := halfChanged(base, 6)
		text := join(mine)
		do = func() (docstore.Saved, error) { return s.Save(ctx, "Huge", 1, text, person, linediff.Clash) }
	default:
		return fmt.Errorf("-worst needs rewrite, merge or clash, not %q", what)
	}
	runtime.GC()
	before, _ := memoryOf(os.Getpid())
	var ms0, ms1 runtime.MemStats
	runtime.ReadMemStats(&ms0)
	start := time.Now()
	saved, err := do()
	took := time.Since(start)
	runtime.ReadMemStats(&ms1)
	after, _ := memoryOf(os.Getpid())
	res := worstResult{Millis: float64(took) / float64(time.Millisecond), HWMBefore: before.hwm, HWM: after.hwm, TotalAlloc: ms1.TotalAlloc - ms0.TotalAlloc}
	var clash *docstore.ClashError
	switch {
	case errors.As(err, &clash):
		res.Outcome = fmt.Sprintf("refused: %d clashing regions, nothing saved", len(clash.Conflicts))
	case err != nil:
		return err
	default:
		res.Outcome = fmt.Sprintf("saved version %d (%s): +%d −%d lines", saved.Document.Version, saved.Kind, saved.Added, saved.Removed)
	}
	return json.NewEncoder(os.Stdout).Encode(res)
}

// measureWorst is item 5: a whole rewrite of a 1 MB document with half its lines changed,
// and a person's save of it from an older version, merged; each in a process of its own.
func measureWorst(ctx context.Context, o *options, bins binaries, r *report) error {
	base := lines(hugeLines, 3)
	theirs, _ := halfChanged(base, 4)
	prepared := map[string]string{}
	for _, what := range []string{"rewrite", "merge"} {
		path := filepath.Join(o.work, "worst-"+what+".db")
		db, err := bolt.Open(path, time.Second)
		if err != nil {
			return err
		}
		db.MaxBatchSize = 1
		s := docstore.New(bolt.Wrap(db), "personal")
		_, err = s.Create(ctx, "Huge", join(base), docstore.KindWrite, agent)
		if err == nil && what == "merge" {
			_, err = s.Write(ctx, "Huge", "", join(theirs), 0, agent) // version 2: theirs, since the base
		}
		db.Close()
		if err != nil {
			return err
		}
		prepared[what] = path
	}
	prepared["clash"] = prepared["merge"]

	b := r.section("5. Worst cases: a 1 MB document")
	fmt.Fprintf(b, "A document of %d lines (%d bytes). Each operation runs through `docstore` (durable, as the tools and the CLI run it)\n", hugeLines, len(join(base)))
	b.WriteString("in a fresh process of its own on a fresh copy of the prepared data file, so that its peak memory (VmHWM) is its own.\n")
	b.WriteString("\"Peak before\" is that process's VmHWM with the texts made and the file open, just before the operation.\n\n")
	b.WriteString("- rewrite: `write_document`'s store call (`Write`) with half the lines, chosen at random, changed.\n")
	b.WriteString("- merge: a person's save (`Save`, as `docs save --base 1`) made from version 1 after version 2 rewrote half the lines;\n")
	b.WriteString("  the save changes one line in about every 100 away from those, so it merges cleanly.\n")
	b.WriteString("- clash: the same save, but changing another random half of the lines: refused with the clashing regions.\n\n")
	b.WriteString("| operation | median time | runs (ms) | peak memory (VmHWM) | peak before | allocated | outcome |\n|---|---|---|---|---|---|---|\n")
	worstTime, worstMem := 0.0, int64(0)
	for _, what := range []string{"rewrite", "merge", "clash"} {
		var times []float64
		var last worstResult
		peak := int64(0)
		for run := range o.runs {
			copyPath := filepath.Join(o.work, fmt.Sprintf("worst-%s-%d.db", what, run))
			if err := copyFile(prepared[what], copyPath); err != nil {
				return err
			}
			var out bytes.Buffer
			cmd := exec.Command(bins.self, "-worst", what, "-data", copyPath)
			cmd.Stdout, cmd.Stderr = &out, os.Stderr
			if err := cmd.Run(); err != nil {
				return fmt.Errorf("bench -worst %s: %w", what, err)
			}
			if err := json.Unmarshal(out.Bytes(), &last); err != nil {
				return fmt.Errorf("bench -worst %s said %q: %w", what, out.String(), err)
			}
			times = append(times, last.Millis)
			peak = max(peak, last.HWM)
			os.Remove(copyPath)
		}
		med := medianOf(times)
		worstTime, worstMem = max(worstTime, med), max(worstMem, peak)
		runs := make([]string, len(times))
		for i, t := range times {
			runs[i] = fmt.Sprintf("%.0f", t)
		}
		fmt.Fprintf(b, "| %s | %.0f ms | %s | %s | %s | %s | %s |\n", what, med, strings.Join(runs, ", "), mib(peak), mib(last.HWMBefore), size(int64(last.TotalAlloc)), last.Outcome)
		r.target(target{"5", what + ", 1 MB, half the lines", fmt.Sprintf("%.0f ms, peak %s", med, mib(peak)), "", "≤ 1 s, ≤ 100 MB",
			verdict(med <= 1000 && float64(peak) <= 100e6, worstWhy(med, peak))})
	}
	return nil
}

func worstWhy(took float64, peak int64) string {
	var why []string
	if took > 1000 {
		why = append(why, fmt.Sprintf("%.0f ms", took))
	}
	if float64(peak) > 100e6 {
		why = append(why, fmt.Sprintf("peak %s", mib(peak)))
	}
	return strings.Join(why, ", ")
}

func copyFile(from, to string) error {
	in, err := os.Open(from)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.Create(to)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}

// versionsLayout says, from the file itself, how the space's versions are kept: in how many
// buckets, how many keys, and how much of their pages they use, so that the storage
// paragraph describes the layout the measured build wrote (docstore/doc.go, "# Layout").
func versionsLayout(db *bbolt.DB, space string) (string, error) {
	var out string
	err := db.View(func(tx *bbolt.Tx) error {
		vb, _ := bolt.BucketOf(spaces.Sub(bolt.WrapTx(tx), space, "doc_versions"))
		if vb == nil {
			return fmt.Errorf("the file has no doc_versions bucket in space %s", space)
		}
		st := vb.Stats()
		pages := st.BranchPageN + st.LeafPageN
		inline := st.InlineBucketN
		switch {
		case st.BucketN <= 1:
			out = fmt.Sprintf("one bucket, `doc_versions`, holds all %d versions as flat keys (`<id><n>`), on %d pages of 4 KB (%s in use, %s of pages a version): small documents share pages.",
				st.KeyN, pages, size(int64(st.LeafInuse+st.BranchInuse)), size(int64(pages*4096/max(st.KeyN, 1))))
		default:
			out = fmt.Sprintf("%d buckets under `doc_versions` (%d of them inline in their parent's page), %d keys, on %d pages of 4 KB: each document's versions are a bucket of their own.",
				st.BucketN-1, inline, st.KeyN, pages)
		}
		return nil
	})
	return out, err
}
