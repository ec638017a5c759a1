package app

import (
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"strings"

	"github.com/healthagents/healthagents/cipher"
)

// fernetKeyFile is where a generated key is kept under DATA_DIR.
const fernetKeyFile = "fernet.key"

// LoadKeyring builds the keyring from FERNET_KEY, or from the key kept under
// dataDir, generating and keeping one there (mode 0600) on first start.
func LoadKeyring(cfg Config, logger *slog.Logger) (*cipher.Keyring, error) {
	if cfg.FernetKey != "" {
		kr, err := cipher.ParseKeyring(cfg.FernetKey)
		if err != nil {
			return nil, fmt.Errorf("FERNET_KEY: %w", err)
		}
		return kr, nil
	}
	path := filepath.Join(cfg.DataDir, fernetKeyFile)
	b, err := os.ReadFile(path)
	switch {
	case err == nil:
		kr, err := cipher.ParseKeyring(strings.TrimSpace(string(b)))
		if err != nil {
			return nil, fmt.Errorf("%s: %w", path, err)
		}
		logger.Info("using the Fernet key kept under DATA_DIR; set FERNET_KEY in production", "path", path)
		return kr, nil
	case !errors.Is(err, fs.ErrNotExist):
		return nil, fmt.Errorf("reading %s: %w", path, err)
	}
	key, err := cipher.GenerateKey()
	if err != nil {
		return nil, err
	}
	if err := WriteFileAtomic(path, []byte(key+"\n"), 0o600); err != nil {
		return nil, fmt.Errorf("keeping the generated Fernet key: %w", err)
	}
	logger.Warn("FERNET_KEY is not set: GENERATED a new Fernet key and kept it under DATA_DIR; "+
		"clients must seal envelopes with this key (healthagents seal uses it)", "path", path)
	return cipher.ParseKeyring(key)
}

// WriteFileAtomic writes data to path through a synced temporary file and a
// rename, so a crash leaves either the old file or the new one.
func WriteFileAtomic(path string, data []byte, perm os.FileMode) error {
	dir := filepath.Dir(path)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	f, err := os.CreateTemp(dir, "."+filepath.Base(path)+".tmp*")
	if err != nil {
		return err
	}
	tmp := f.Name()
	defer os.Remove(tmp)
	if err := f.Chmod(perm); err != nil {
		f.Close()
		return err
	}
	if _, err := f.Write(data); err != nil {
		f.Close()
		return err
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	if err := os.Rename(tmp, path); err != nil {
		return err
	}
	if d, err := os.Open(dir); err == nil {
		_ = d.Sync()
		d.Close()
	}
	return nil
}
