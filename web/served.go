package web

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"io"
	"net/http"
	"path/filepath"
	"strings"
	"time"

	"github.com/compass-mcp/compass-mcp/kv"
)

// The page keeps two things of its own in the data file:
//
//	web/store  this store's random id (see StoreID)
//	web/page   the page last served on this store (see Announce)
//
// The sign-in codes and signed-in browsers beside them, under web/codes and web/sessions,
// are package access's (see its Layout).
var (
	webBucket = []byte("web")
	storeKey  = []byte("store")
	pageKey   = []byte("page")
)

// storePath answers with the store's id, so that another compass-mcp on the same data
// file can tell that the page at an address is this store's, not another's.
const storePath = "/.well-known/compass-store"

// StoreID returns the data file's random id, made on first use. A copy of the file (a
// backup) has the same id; fileID tells the two apart.
func StoreID(db kv.DB) (string, error) {
	var id string
	err := db.View(func(tx kv.Tx) error {
		if w := tx.Bucket(webBucket); w != nil {
			id = string(w.Get(storeKey))
		}
		return nil
	})
	if err != nil || id != "" {
		return id, err
	}
	err = db.Update(func(tx kv.Tx) error {
		w, err := tx.CreateBucketIfNotExists(webBucket)
		if err != nil {
			return err
		}
		if id = string(w.Get(storeKey)); id == "" {
			var b [16]byte
			rand.Read(b[:])
			id = hex.EncodeToString(b[:])
			return w.Put(storeKey, []byte(id))
		}
		return nil
	})
	return id, err
}

type announced struct {
	URL string    `json:"url"`
	At  time.Time `json:"at"`
}

// Announce records in the data file that the page is served at url (like
// http://127.0.0.1:7411), so that other compass-mcp processes on the file link to it.
func Announce(db kv.DB, url string) error {
	if _, err := StoreID(db); err != nil {
		return err
	}
	raw, _ := json.Marshal(announced{URL: strings.TrimRight(url, "/"), At: time.Now()})
	return db.Update(func(tx kv.Tx) error {
		w, err := tx.CreateBucketIfNotExists(webBucket)
		if err != nil {
			return err
		}
		return w.Put(pageKey, raw)
	})
}

// fileID names the data file at path by where it is: a hash of its absolute path with links
// resolved, so that a page can say which file it serves without saying where that is.
func fileID(path string) string {
	if path == "" {
		return ""
	}
	if !strings.Contains(path, "://") { // a file's path, not a database's URL
		if abs, err := filepath.Abs(path); err == nil {
			path = abs
		}
		if real, err := filepath.EvalSymlinks(path); err == nil {
			path = real
		}
	}
	h := sha256.Sum256([]byte(path))
	return hex.EncodeToString(h[:16])
}

// Served returns the address of the page last announced on the data file at path (open
// as db), if it is still served and answers with this store's id and this file: a page
// of another store, or of a copy of this one, or none, is not linked to.
func Served(ctx context.Context, db kv.DB, path string) (string, bool) {
	var (
		a     announced
		store string
	)
	err := db.View(func(tx kv.Tx) error {
		w := tx.Bucket(webBucket)
		if w == nil {
			return nil
		}
		store = string(w.Get(storeKey))
		if raw := w.Get(pageKey); raw != nil {
			return json.Unmarshal(raw, &a)
		}
		return nil
	})
	if err != nil || a.URL == "" || store == "" {
		return "", false
	}
	return a.URL, answers(ctx, a.URL, store+" "+fileID(path))
}

// answers reports whether the page at url says it serves the store and file of id store.
func answers(ctx context.Context, url, store string) bool {
	ctx, cancel := context.WithTimeout(ctx, 500*time.Millisecond)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url+storePath, nil)
	if err != nil {
		return false
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return false
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(io.LimitReader(resp.Body, 100))
	return resp.StatusCode == http.StatusOK && string(body) == store
}

// storeID answers from memory: the process asking may be holding the data file while it
// asks (it checks the page in the middle of a tool call), so this must not wait for it.
func (s *Site) storeID(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	io.WriteString(w, s.store+" "+fileID(s.cfg.Path))
}
