package reliability

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strings"
	"testing"
)

// runStdio pipes input to a stdio server and returns every line it answered, its stderr,
// and its peak RSS in MiB, once it has exited.
func runStdio(t *testing.T, data string, input io.Reader) (answers []map[string]any, stderr string, rssMiB int64) {
	t.Helper()
	cmd := measured("serve")
	cmd.Env = append(os.Environ(), serverEnv(data)...)
	cmd.Stdin = input
	var errb strings.Builder
	cmd.Stderr = &errb
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	sc := bufio.NewScanner(out)
	sc.Buffer(nil, 16<<20)
	for sc.Scan() {
		var m map[string]any
		if err := json.Unmarshal(sc.Bytes(), &m); err != nil {
			t.Fatalf("an answer that isn't JSON: %.200s", sc.Text())
		}
		answers = append(answers, m)
	}
	if err := cmd.Wait(); err != nil {
		t.Fatalf("the server: %v\n%s", err, errb.String())
	}
	return answers, errb.String(), maxRSS(errb.String()) >> 20
}

// 50 write_document requests piped in, then the end of input: mcp-go's stdio server ran 2
// to 12 of them, exited 0 and said nothing. A last request without a final line break was
// ignored. Every request read must be answered.
func TestStdioAnswersEveryPipedRequest(t *testing.T) {
	t.Parallel()
	var in strings.Builder
	in.WriteString(initializeLine + "\n" + `{"jsonrpc":"2.0","method":"notifications/initialized"}` + "\n")
	for i := 1; i <= 50; i++ {
		fmt.Fprintf(&in, `{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"write_document","arguments":{"title":"Note %d","text":"%s"}}}`+"\n", i, i, strings.Repeat("x", 100<<10))
	}
	in.WriteString(`{"jsonrpc":"2.0","id":"last","method":"tools/call","params":{"name":"list_documents","arguments":{"limit":500}}}`) // no line break
	answers, stderr, _ := runStdio(t, newData(t), strings.NewReader(in.String()))
	got := map[string]bool{}
	for _, a := range answers {
		if text, isError := toolText(a); isError {
			t.Errorf("answer %v: an error: %s", a["id"], text)
		}
		got[fmt.Sprint(a["id"])] = true
	}
	for i := 1; i <= 50; i++ {
		if !got[fmt.Sprint(float64(i))] {
			t.Errorf("request %d was not answered", i)
		}
	}
	if !got["last"] {
		t.Errorf("the last request, without a line break, was not answered")
	}
	if t.Failed() {
		t.Logf("stderr:\n%s", stderr)
	}
}

// A 300 MB line took 1.87 GB. A line over the limit (64 MiB) gets a JSON-RPC error, is
// skipped without being kept, and the server answers the next one.
func TestStdioRefusesALineOverTheLimit(t *testing.T) {
	t.Parallel()
	size := int64(300 << 20)
	if testing.Short() {
		size = 80 << 20
	}
	pr, pw := io.Pipe()
	go func() {
		pw.Write([]byte(initializeLine + "\n"))
		pw.Write([]byte(`{"jsonrpc":"2.0","id":"big","method":"tools/call","params":{"name":"write_document","arguments":{"title":"Big","text":"`))
		chunk := []byte(strings.Repeat("y", 1<<20))
		for n := int64(0); n < size; n += int64(len(chunk)) {
			pw.Write(chunk)
		}
		pw.Write([]byte("\"}}}\n"))
		pw.Write([]byte(`{"jsonrpc":"2.0","id":"after","method":"ping"}` + "\n"))
		pw.Close()
	}()
	answers, stderr, rss := runStdio(t, newData(t), pr)
	var refused, after bool
	for _, a := range answers {
		if e, ok := a["error"].(map[string]any); ok && a["id"] == nil && strings.Contains(fmt.Sprint(e["message"]), "too large") {
			refused = true
		}
		if a["id"] == "after" && a["result"] != nil {
			after = true
		}
	}
	if !refused || !after {
		t.Errorf("a %d MiB line: refused %v, the next request answered %v; answers %v\n%s", size>>20, refused, after, answers, stderr)
	}
	t.Logf("a %d MiB line: refused, the next answered; peak RSS %d MiB", size>>20, rss)
	if rss > raceSlack[int64](200) {
		t.Errorf("peak RSS %d MiB for a %d MiB line, want it bounded by the 64 MiB limit", rss, size>>20)
	}
}
