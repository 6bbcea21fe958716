package docstore_test

import (
	"fmt"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/compass-mcp/compass-mcp/docstore"
)

// fill makes n documents titled title(i) with text(i), sixteen writers at a time (their
// commits grouped, as a server's are).
func fill(b *testing.B, s *docstore.Store, n int, title, text func(i int) string) {
	b.Helper()
	ctx := b.Context()
	var wg sync.WaitGroup
	errs := make(chan error, 16)
	for w := range 16 {
		wg.Go(func() {
			for i := w; i < n; i += 16 {
				if _, err := s.Create(ctx, title(i), text(i), docstore.KindWrite, north); err != nil {
					errs <- err
					return
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		b.Fatal(err)
	}
}

func docTitle(i int) string { return fmt.Sprintf("Doc %05d", i) }

// linked is a text of 2n lines: n each with a [[link]] to another document (Doc 00000,
// Doc 00001, ...) when links, else the same words without the brackets, each followed by
// a line of prose.
func linked(n int, links bool) []string {
	lines := make([]string, 0, 2*n)
	for i := range n {
		if links {
			lines = append(lines, fmt.Sprintf("- [[%s]] is about item %d.\n", docTitle(i), i))
		} else {
			lines = append(lines, fmt.Sprintf("- %s is about item %d.\n", docTitle(i), i))
		}
		lines = append(lines, fmt.Sprintf("Item %d was reviewed on Tuesday, and will ship in May.\n", i))
	}
	return lines
}

// BenchmarkSave10kLinks: a document whose text has 10,000 links, each to another document
// of the space (10,000 of them), between lines of prose, saved (one line edited: a new
// version, durable) in one store, and the same text without the links' brackets in
// another just like it, taking turns so that the machine's other load falls on both alike.
// The edit is of a line of prose (prose), of a line with a link, the link kept (link), or
// of a link's target (retarget: the line names the next document, then back), and that
// again once both texts begin with a fenced code block (fenced: fences change how the lines
// after them read, and the save must know it is outside one).
// It reports each one's mean, their ratio, and the calling thread's CPU time and its
// ratio (the fsync's wait left out); and what making the document (its first version:
// every link resolved and kept) took in each store.
//
//	go test -run '^$' -bench Save10kLinks -benchtime 200x ./docstore
func BenchmarkSave10kLinks(b *testing.B) {
	ctx := b.Context()
	type side struct {
		s                *docstore.Store
		id               string
		lines            []string
		create, createCP time.Duration
	}
	var sides [2]*side
	for i, links := range []bool{false, true} {
		s := open(b, "personal")
		fill(b, s, 10000, docTitle, func(int) string { return "A document.\n" })
		lines := linked(10000, links)
		runtime.LockOSThread()
		start, c0 := time.Now(), threadCPU()
		d := mustCreate(b, s, "Index", strings.Join(lines, ""))
		sides[i] = &side{s: s, id: d.ID, lines: lines, create: time.Since(start), createCP: threadCPU() - c0}
		runtime.UnlockOSThread()
	}
	if _, ls, err := findLinks(b, sides[1].s, "Index", 1); err != nil || ls.ToTotal != 10000 {
		b.Fatalf("the document with links links to %d documents, %v", ls.ToTotal, err)
	}
	// (A benchmark with sub-benchmarks reports no metrics of its own: logged.)
	b.Logf("making the document: %.1f ms (%.1f ms CPU) with its links, %.1f ms (%.1f ms CPU) without",
		float64(sides[1].create.Microseconds())/1000, float64(sides[1].createCP.Microseconds())/1000,
		float64(sides[0].create.Microseconds())/1000, float64(sides[0].createCP.Microseconds())/1000)
	for _, bc := range []struct {
		name string
		line int
	}{{"prose", 10001}, {"link", 10000}, {"retarget", 10000}, {"fenced", 10003}} {
		b.Run(bc.name, func(b *testing.B) {
			if bc.name == "fenced" {
				for _, sd := range sides {
					sd.lines = append([]string{"```go\n", "x := \"[[Doc 00001]]\"\n", "```\n"}, sd.lines...)
					if _, err := sd.s.Save(ctx, sd.id, 0, strings.Join(sd.lines, ""), north, 0); err != nil {
						b.Fatal(err)
					}
				}
			}
			var took, cpu [2]time.Duration
			n := 0
			for i := 0; b.Loop(); i++ {
				for k, sd := range sides {
					old := sd.lines[bc.line]
					sd.lines[bc.line] = strings.Replace(old, "item", fmt.Sprintf("item, edit %d,", i), 1)
					switch bc.name {
					case "prose":
						sd.lines[bc.line] = strings.Replace(old, "May", fmt.Sprintf("May, edit %d", i), 1)
					case "retarget", "fenced":
						sd.lines[bc.line] = strings.Replace(old, docTitle(5000+i%2), docTitle(5000+(i+1)%2), 1)
					}
					runtime.LockOSThread()
					start, c0 := time.Now(), threadCPU()
					if _, err := sd.s.Edit(ctx, sd.id, old, sd.lines[bc.line], north); err != nil {
						b.Fatal(err)
					}
					took[k] += time.Since(start)
					cpu[k] += threadCPU() - c0
					runtime.UnlockOSThread()
				}
				n++
			}
			ms := func(d time.Duration) float64 { return float64(d.Microseconds()) / float64(n) / 1000 }
			b.ReportMetric(ms(took[0]), "without-ms")
			b.ReportMetric(ms(took[1]), "with-ms")
			b.ReportMetric(float64(took[1])/float64(took[0]), "ratio")
			if cpu[0] > 0 {
				b.ReportMetric(ms(cpu[0]), "without-cpu-ms")
				b.ReportMetric(ms(cpu[1]), "with-cpu-ms")
				b.ReportMetric(float64(cpu[1])/float64(cpu[0]), "cpu-ratio")
			}
			b.ReportMetric(0, "ns/op")
		})
	}
}

// BenchmarkBacklinks10k: the documents that link to one linked from 10,000 others, a page
// of 50 (list_documents links_to, the page's /document/{id}/links), and read_document's
// links line (24 of each kind, and the counts), which counts the 10,000.
//
//	go test -run '^$' -bench Backlinks10k -benchtime 2000x ./docstore
func BenchmarkBacklinks10k(b *testing.B) {
	s := open(b, "personal")
	hub := mustCreate(b, s, "Hub", "Everybody links here.\n")
	fill(b, s, 10000, docTitle, func(i int) string { return fmt.Sprintf("Item %d links to [[Hub]].\n", i) })
	_, first, _, _, err := backlinks(b, s, "Hub", "", 5000)
	if err != nil {
		b.Fatal(err)
	}
	middle := first[len(first)-1].ID
	for _, bc := range []struct {
		name string
		call func() (int, error)
	}{
		{"first-page", func() (int, error) {
			_, docs, total, _, err := backlinks(b, s, hub.ID, "", 50)
			return total + 0*len(docs), err
		}},
		{"middle-page", func() (int, error) {
			_, _, total, _, err := backlinks(b, s, hub.ID, middle, 50)
			return total, err
		}},
		{"read-document-links", func() (int, error) {
			_, ls, err := findLinks(b, s, hub.ID, 24)
			return ls.FromTotal, err
		}},
	} {
		b.Run(bc.name, func(b *testing.B) {
			var cpu time.Duration
			for b.Loop() {
				runtime.LockOSThread()
				c0 := threadCPU()
				total, err := bc.call()
				cpu += threadCPU() - c0
				runtime.UnlockOSThread()
				if err != nil || total != 10000 {
					b.Fatalf("%d backlinks, %v", total, err)
				}
			}
			b.ReportMetric(float64(cpu.Microseconds())/float64(b.N)/1000, "cpu-ms/op")
		})
	}
}
