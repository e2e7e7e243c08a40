// Command verify checks ECP's transparency log with Go's reference code
// (golang.org/x/mod/sumdb/note and golang.org/x/mod/sumdb/tlog), which the
// project did not write. It reads one JSON document on stdin:
//
//	{"vkey": "<C2SP verifier key>",
//	 "notes": ["<signed checkpoint>", ...],
//	 "inclusion": [{"record_digest": "sha256:<hex>", "leaf_index": 3,
//	                "tree_size": 9, "hashes": ["<base64>", ...]}, ...],
//	 "consistency": [{"from": 5, "to": 9, "hashes": ["<base64>", ...]}, ...],
//	 "tiles": {"tile/0/000.p/9": "<base64>", ...}}
//
// Every note must open with the verifier key (note.Open) and hold a C2SP
// checkpoint; a proof's tree sizes must be those of verified notes, whose roots
// it is checked against (tlog.CheckRecord, tlog.CheckTree). When tiles are
// given (C2SP tlog-tiles paths, height 8), the newest tree is read from them
// alone (tlog.TileHashReader, authenticated against the newest root), and each
// proof is recomputed from them (tlog.ProveRecord, tlog.ProveTree) and must
// equal the served one; each tile must equal tlog.ReadTileData. Each leaf hash
// read from the tiles must also be the record's: Debian's x/mod 0.7.0
// TileHashReader leaves a full tile unauthenticated when its parent is one of
// the tiles of the tree hash, so the proofs recomputed from tiles are compared
// with the served ones, which tlog.CheckRecord and tlog.CheckTree verified.
//
// It prints "ok ..." and exits 0, or names each failure on stderr and exits 1
// (2 for unreadable input). Build it with GO111MODULE=off and
// GOPATH=/usr/share/gocode (Debian's golang-golang-x-mod-dev).
package main

import (
	"bytes"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"strconv"
	"strings"

	"golang.org/x/mod/sumdb/note"
	"golang.org/x/mod/sumdb/tlog"
)

const tileHeight = 8

type inclusion struct {
	RecordDigest string   `json:"record_digest"`
	LeafIndex    int64    `json:"leaf_index"`
	TreeSize     int64    `json:"tree_size"`
	Hashes       []string `json:"hashes"`
}

type consistency struct {
	From   int64    `json:"from"`
	To     int64    `json:"to"`
	Hashes []string `json:"hashes"`
}

type input struct {
	Vkey        string            `json:"vkey"`
	Notes       []string          `json:"notes"`
	Inclusion   []inclusion       `json:"inclusion"`
	Consistency []consistency     `json:"consistency"`
	Tiles       map[string]string `json:"tiles"`
}

var failures []string

func fail(format string, args ...any) {
	failures = append(failures, fmt.Sprintf(format, args...))
}

// checkpoint parses a C2SP checkpoint body: origin, size, base64 root.
func checkpoint(text string) (origin string, tree tlog.Tree, err error) {
	lines := strings.SplitN(text, "\n", 4)
	if len(lines) < 4 {
		return "", tree, fmt.Errorf("fewer than three lines")
	}
	n, err := strconv.ParseInt(lines[1], 10, 64)
	if err != nil || n < 0 || strconv.FormatInt(n, 10) != lines[1] {
		return "", tree, fmt.Errorf("bad tree size %q", lines[1])
	}
	root, err := base64.StdEncoding.DecodeString(lines[2])
	if err != nil || len(root) != tlog.HashSize {
		return "", tree, fmt.Errorf("bad root %q", lines[2])
	}
	tree.N = n
	copy(tree.Hash[:], root)
	return lines[0], tree, nil
}

func hashes(encoded []string) ([]tlog.Hash, error) {
	out := make([]tlog.Hash, len(encoded))
	for i, e := range encoded {
		raw, err := base64.StdEncoding.DecodeString(e)
		if err != nil || len(raw) != tlog.HashSize {
			return nil, fmt.Errorf("hash %d is not 32 bytes of base64", i)
		}
		copy(out[i][:], raw)
	}
	return out, nil
}

func equal(a, b []tlog.Hash) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// served reads tiles from the served map, keyed by C2SP path (no height element).
type served struct{ tiles map[string][]byte }

func (s served) Height() int { return tileHeight }

func (s served) ReadTiles(tiles []tlog.Tile) ([][]byte, error) {
	out := make([][]byte, len(tiles))
	for i, t := range tiles {
		path := c2spPath(t)
		data, ok := s.tiles[path]
		if !ok {
			return nil, fmt.Errorf("tile %s was not given", path)
		}
		out[i] = data
	}
	return out, nil
}

func (s served) SaveTiles([]tlog.Tile, [][]byte) {}

// c2spPath is Go's tile path without its height element: tile/8/L/N → tile/L/N.
func c2spPath(t tlog.Tile) string {
	return strings.Replace(t.Path(), fmt.Sprintf("tile/%d/", tileHeight), "tile/", 1)
}

func main() {
	var in input
	if err := json.NewDecoder(os.Stdin).Decode(&in); err != nil {
		fmt.Fprintln(os.Stderr, "input:", err)
		os.Exit(2)
	}
	verifier, err := note.NewVerifier(in.Vkey)
	if err != nil {
		fmt.Fprintln(os.Stderr, "vkey:", err)
		os.Exit(2)
	}
	trees := map[int64]tlog.Tree{}
	var newest tlog.Tree
	for i, text := range in.Notes {
		opened, err := note.Open([]byte(text), note.VerifierList(verifier))
		if err != nil {
			fail("note %d: signature: %v", i, err)
			continue
		}
		origin, tree, err := checkpoint(opened.Text)
		if err != nil {
			fail("note %d: checkpoint: %v", i, err)
			continue
		}
		if origin != verifier.Name() {
			fail("note %d: origin %q is not the key's name %q", i, origin, verifier.Name())
		}
		trees[tree.N] = tree
		if tree.N >= newest.N {
			newest = tree
		}
	}
	var reader tlog.HashReader
	if len(in.Tiles) > 0 && newest.N > 0 {
		tiles := map[string][]byte{}
		for path, data := range in.Tiles {
			raw, err := base64.StdEncoding.DecodeString(data)
			if err != nil {
				fail("tile %s: not base64", path)
				continue
			}
			tiles[path] = raw
		}
		reader = tlog.TileHashReader(newest, served{tiles})
		if root, err := tlog.TreeHash(newest.N, reader); err != nil {
			fail("tiles: tree of %d: %v", newest.N, err)
			reader = nil
		} else if root != newest.Hash {
			fail("tiles: root of %d is %s, the checkpoint's %s", newest.N, root, newest.Hash)
			reader = nil
		}
		if reader != nil {
			for path, data := range tiles {
				t, err := tlog.ParseTilePath(strings.Replace(path, "tile/", fmt.Sprintf("tile/%d/", tileHeight), 1))
				if err != nil {
					fail("tile %s: %v", path, err)
					continue
				}
				rebuilt, err := tlog.ReadTileData(t, reader)
				if err != nil {
					fail("tile %s: %v", path, err)
				} else if !bytes.Equal(rebuilt, data) {
					fail("tile %s: differs from tlog.ReadTileData", path)
				}
			}
		}
	}
	for i, p := range in.Inclusion {
		what := fmt.Sprintf("inclusion %d (leaf %d of %d)", i, p.LeafIndex, p.TreeSize)
		tree, ok := trees[p.TreeSize]
		if !ok {
			fail("%s: no verified checkpoint of that size", what)
			continue
		}
		digest, err := hex.DecodeString(strings.TrimPrefix(p.RecordDigest, "sha256:"))
		if err != nil || len(digest) != 32 || !strings.HasPrefix(p.RecordDigest, "sha256:") {
			fail("%s: record digest %q is not sha256:<64 hex>", what, p.RecordDigest)
			continue
		}
		proof, err := hashes(p.Hashes)
		if err != nil {
			fail("%s: %v", what, err)
			continue
		}
		leaf := tlog.RecordHash(digest)
		if err := tlog.CheckRecord(proof, tree.N, tree.Hash, p.LeafIndex, leaf); err != nil {
			fail("%s: tlog.CheckRecord: %v", what, err)
		}
		if reader == nil || p.TreeSize > newest.N {
			continue
		}
		stored, err := reader.ReadHashes([]int64{tlog.StoredHashIndex(0, p.LeafIndex)})
		if err != nil {
			fail("%s: its leaf hash from tiles: %v", what, err)
		} else if stored[0] != leaf {
			fail("%s: the tiles hold another leaf hash at that index", what)
		}
		computed, err := tlog.ProveRecord(tree.N, p.LeafIndex, reader)
		if err != nil {
			fail("%s: tlog.ProveRecord from tiles: %v", what, err)
		} else if !equal(computed, proof) {
			fail("%s: differs from the proof computed from tiles", what)
		}
	}
	for i, c := range in.Consistency {
		what := fmt.Sprintf("consistency %d (%d to %d)", i, c.From, c.To)
		older, okOld := trees[c.From]
		newer, okNew := trees[c.To]
		if !okOld || !okNew {
			fail("%s: no verified checkpoints of those sizes", what)
			continue
		}
		proof, err := hashes(c.Hashes)
		if err != nil {
			fail("%s: %v", what, err)
			continue
		}
		if err := tlog.CheckTree(proof, newer.N, newer.Hash, older.N, older.Hash); err != nil {
			fail("%s: tlog.CheckTree: %v", what, err)
		}
		if reader == nil || c.To > newest.N {
			continue
		}
		computed, err := tlog.ProveTree(newer.N, older.N, reader)
		if err != nil {
			fail("%s: tlog.ProveTree from tiles: %v", what, err)
		} else if !equal(computed, proof) {
			fail("%s: differs from the proof computed from tiles", what)
		}
	}
	if len(failures) > 0 {
		for _, f := range failures {
			fmt.Fprintln(os.Stderr, "FAIL", f)
		}
		os.Exit(1)
	}
	fmt.Printf("ok: %d notes, %d inclusion proofs, %d consistency proofs, %d tiles\n",
		len(in.Notes), len(in.Inclusion), len(in.Consistency), len(in.Tiles))
}
