package chain

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"time"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/core/rawdb"
	"github.com/ethereum/go-ethereum/ethdb"
	"github.com/ethereum/go-ethereum/ethdb/leveldb"
	"github.com/ethereum/go-ethereum/ethdb/pebble"
)

// nodeName is the embedded node's instance name: its database lives in
// <data dir>/geth/healthagents whatever the program running it is called.
// (Left unset, go-ethereum names the instance after the executable, so two
// programs on one data dir each grew a chain of their own while sharing
// embedded.json.)
const nodeName = "healthagents"

// adoptOldLayout moves the chain database an earlier version left under
// gethDir/<executable name> to gethDir/healthagents, before the node opens.
// Several programs may each have left one there (the second a chain with
// only its genesis, on which that start failed); the one kept is the one
// holding head, the head block recorded at the last close, else the one
// with the highest head block. A database already at the new place that is
// not the one kept is moved aside (renamed, never deleted).
func adoptOldLayout(gethDir string, head common.Hash) error {
	entries, err := os.ReadDir(gethDir)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("chain: read %s: %w", gethDir, err)
	}
	var candidates []string
	for _, e := range entries {
		if e.IsDir() && isChainDir(filepath.Join(gethDir, e.Name())) {
			candidates = append(candidates, e.Name())
		}
	}
	if len(candidates) == 0 || (len(candidates) == 1 && candidates[0] == nodeName) {
		return nil
	}
	best, bestHolds, bestNumber := "", false, uint64(0)
	for _, name := range candidates {
		holds, number, err := chainHead(filepath.Join(gethDir, name, "chaindata"), head)
		if err != nil {
			return fmt.Errorf("chain: the embedded chain left under %s: %w", filepath.Join(gethDir, name), err)
		}
		better := best == "" || (holds && !bestHolds) || (holds == bestHolds && number > bestNumber) ||
			(holds == bestHolds && number == bestNumber && name == nodeName)
		if better {
			best, bestHolds, bestNumber = name, holds, number
		}
	}
	if best == nodeName {
		return nil
	}
	target := filepath.Join(gethDir, nodeName)
	if _, err := os.Stat(target); err == nil {
		aside := target + ".replaced-" + strconv.FormatInt(time.Now().Unix(), 10)
		if err := os.Rename(target, aside); err != nil {
			return fmt.Errorf("chain: move aside %s: %w", target, err)
		}
	}
	if err := os.Rename(filepath.Join(gethDir, best), target); err != nil {
		return fmt.Errorf("chain: move the embedded chain to %s: %w", target, err)
	}
	return nil
}

// isChainDir reports whether dir is a node instance directory holding a
// chain database.
func isChainDir(dir string) bool {
	return rawdb.PreexistingDatabase(filepath.Join(dir, "chaindata")) != ""
}

// chainHead opens the chain database at dir read-only and reports whether
// it holds the block head (false for a zero head) and its head block's number.
func chainHead(dir string, head common.Hash) (holds bool, number uint64, err error) {
	var kv ethdb.KeyValueStore
	switch {
	case rawdb.PreexistingDatabase(dir) == rawdb.DBLeveldb:
		kv, err = leveldb.New(dir, 16, 16, "", true)
	case pebble.NeedsV1(dir):
		kv, err = pebble.NewV1(dir, 16, 16, "", true)
	default:
		kv, err = pebble.New(dir, 16, 16, "", true)
	}
	if err != nil {
		return false, 0, err
	}
	defer kv.Close()
	if head != (common.Hash{}) {
		_, holds = rawdb.ReadHeaderNumber(kv, head)
	}
	if n, ok := rawdb.ReadHeaderNumber(kv, rawdb.ReadHeadBlockHash(kv)); ok {
		number = n
	}
	return holds, number, nil
}
