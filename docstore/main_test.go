package docstore_test

import (
	"os"
	"testing"
)

// tmp holds the data files of examples, which have no t.TempDir.
var tmp string

func TestMain(m *testing.M) {
	var err error
	if tmp, err = os.MkdirTemp("", "docstore-example"); err != nil {
		panic(err)
	}
	code := m.Run()
	os.RemoveAll(tmp)
	os.Exit(code)
}
