package reliability

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/compass-mcp/compass-mcp/docstore"
	"github.com/compass-mcp/compass-mcp/internal/testkit/testbin"
	"github.com/compass-mcp/compass-mcp/kv/kvtest"
)

// History an agent can make blew up the person's commands: after 1,000 one-line appends to
// a 4 MiB document, docs export peaked at 18.5 GB RSS (and wrote 4.2 GB), docs history at
// 5.2 GB, and read_document since=1 took 4.3 s. Each now holds a few versions' texts at a
// time, however many versions there are.
// The short form is 200 appends to 1 MiB; the figures in docs/RELIABILITY.md are of
//
//	COMPASS_HISTORY_FULL=1 go test -run TestLongHistoryIsCheap -v ./e2e/reliability
func TestLongHistoryIsCheap(t *testing.T) {
	appends, size := 200, 1<<20
	if os.Getenv("COMPASS_HISTORY_FULL") != "" {
		appends, size = 1000, 4<<20
	}
	data := newData(t)
	db := kvtest.OpenData(t, data)
	docs := docstore.New(db, "personal")
	line := "A line of the notes, as long as lines in notes are.\n"
	as := docstore.Author{By: "agent:north", For: "person:ana"}
	if _, err := docs.Create(t.Context(), "Notes", strings.Repeat(line, size/len(line)), docstore.KindWrite, as); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	for i := range appends {
		if _, err := docs.Append(t.Context(), "Notes", fmt.Sprintf("Appended line %d.", i), as); err != nil {
			t.Fatal(err)
		}
	}
	db.Close()
	t.Logf("%d appends to %d MiB in %s", appends, size>>20, time.Since(start).Round(time.Millisecond))
	if st, err := os.Stat(data); err == nil {
		t.Logf("the file is %d MiB", st.Size()>>20)
	}

	dir := t.TempDir()
	for _, args := range [][]string{
		{"docs", "history", "Notes"},
		{"docs", "export", filepath.Join(dir, "changes")},
		{"docs", "export", "--whole", filepath.Join(dir, "whole")},
		{"call", "read_document", "document=Notes", "since=1"},
		{"docs", "diff", "Notes", "1"},
	} {
		cmd := measured(args...)
		// gctrace says the heap's size at each collection: its peak is what the command
		// holds. Peak RSS also counts the data file's pages it mapped and read.
		cmd.Env = append(os.Environ(), append(serverEnv(data), "GODEBUG=gctrace=1")...)
		var out, errs strings.Builder
		cmd.Stdout, cmd.Stderr = &out, &errs
		start := time.Now()
		if err := cmd.Run(); err != nil {
			t.Fatalf("%v: %v\n%.2000s%.2000s", args, err, out.String(), errs.String())
		}
		took := time.Since(start)
		ru := cmd.ProcessState.SysUsage().(*syscall.Rusage)
		peak := maxRSS(errs.String())
		written := ""
		if args[1] == "export" {
			written = fmt.Sprintf(", wrote %d MiB", dirSize(t, args[len(args)-1])>>20)
		}
		heap := peakHeap(errs.String())
		label := strings.ReplaceAll(strings.Join(args, " "), dir, "DIR")
		t.Logf("%-36s peak heap %4d MiB, peak RSS %4d MiB, %s, CPU %s%s", label, heap>>20, peak>>20, took.Round(time.Millisecond), (time.Duration(ru.Utime.Nano()) + time.Duration(ru.Stime.Nano())).Round(time.Millisecond), written)
		// Live: the two versions being compared, the text being rebuilt, their lines; the
		// heap a collection starts at is up to twice what the last one left live. It
		// doesn't grow with the number of versions (it was 18.5 GB of RSS for export).
		if limit := int64(16*size + 32<<20); !testbin.Race && heap > limit {
			t.Errorf("%s: peak heap %d MiB, want at most %d MiB (16 versions' size and some)", label, heap>>20, limit>>20)
		}
	}
}

var gcLine = regexp.MustCompile(`(\d+)->(\d+)->(\d+) MB`)

// peakHeap reads GODEBUG=gctrace=1 lines: the largest heap a collection started at.
func peakHeap(trace string) int64 {
	var peak int64
	for _, m := range gcLine.FindAllStringSubmatch(trace, -1) {
		n, _ := strconv.ParseInt(m[1], 10, 64)
		peak = max(peak, n<<20)
	}
	return peak
}

func dirSize(t *testing.T, dir string) int64 {
	var n int64
	filepath.Walk(dir, func(_ string, fi os.FileInfo, err error) error {
		if err == nil && !fi.IsDir() {
			n += fi.Size()
		}
		return nil
	})
	return n
}
