package app

import (
	"errors"
	"fmt"
	"strings"

	"github.com/healthagents/healthagents/federated"
)

// withDefaults makes a Config's zero fields the documented defaults, as
// ConfigFromEnv would read them from an empty environment, or refuses the
// Config with one line naming the field, so nothing is switched off by
// omission:
//
//   - DataDir empty: refused (ConfigFromEnv's default is ./data; a library
//     caller names its directory);
//   - Federated zero (every field but TaskFile): the FEDERATED_* defaults,
//     differential privacy on at the documented budget
//     (docs/federated-privacy.md); a Federated that is set is checked whole
//     (federated.RunSettings.Validate), its first field out of range named.
//     Privacy off is said by a set Federated with Privacy false
//     (FEDERATED_DP=off).
//
// The other zero fields already mean their defaults (LogLevel info,
// CoverageTrust self, ChainConfirmations 1, AdmissionQueue nil = 8 per slot…).
func (c Config) withDefaults() (Config, error) {
	if strings.TrimSpace(c.DataDir) == "" {
		return c, errors.New("app: Config.DataDir (DATA_DIR) is empty: name the directory that keeps the service's data (ConfigFromEnv defaults it to ./data)")
	}
	run := c.Federated
	run.TaskFile = ""
	if run == (federated.RunSettings{}) {
		d, err := federated.SettingsFromEnv(func(string) string { return "" })
		if err != nil {
			return c, err
		}
		d.TaskFile = c.Federated.TaskFile
		c.Federated = d
		return c, nil
	}
	if err := c.Federated.Validate(); err != nil {
		return c, fmt.Errorf("app: Config.Federated: %s", strings.TrimPrefix(err.Error(), federated.ErrConfig.Error()+": "))
	}
	return c, nil
}
